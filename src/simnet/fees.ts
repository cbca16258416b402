/**
 * The priority-fee market simnet reports through getRecentPrioritizationFees, kept the way
 * agave's PrioritizationFeeCache keeps it: for each of the last 150 slots, the lowest
 * compute-unit price among landed transactions, and per account the lowest price among
 * landed transactions that lock it writable. A query for some accounts answers, per slot,
 * the higher of the slot's minimum and those accounts' minimums — the price to land a
 * transaction locking all of them writable.
 */
import type { SupportedMessage } from './wire.ts';
import { isWritable } from './wire.ts';

/** How many recent slots the cache keeps (agave's MAX_NUM_RECENT_BLOCKS). */
export const RECENT_FEE_SLOTS = 150;

/** The Compute Budget program; its SetComputeUnitPrice (tag 3, u64 LE micro-lamports/CU) sets the price. */
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
const SET_COMPUTE_UNIT_PRICE = 3;

/** One element of getRecentPrioritizationFees' answer. */
export interface SlotFee {
  slot: bigint;
  prioritizationFee: bigint;
}

interface SlotMinimums {
  min: bigint;
  writable: Map<string, bigint>;
}

/** The message's compute-unit price in micro-lamports per CU; 0 without a SetComputeUnitPrice. */
export function computeUnitPrice(message: SupportedMessage): bigint {
  for (const ix of message.instructions) {
    if (message.staticAccounts[ix.programAddressIndex] !== COMPUTE_BUDGET_PROGRAM) continue;
    const data = ix.data;
    if (data === undefined || data.length !== 9 || data[0] !== SET_COMPUTE_UNIT_PRICE) continue;
    return new DataView(new Uint8Array(data).buffer).getBigUint64(1, true);
  }
  return 0n;
}

/** The static accounts the message locks writable (lookup tables are not resolved, as in the ledger). */
export function writableAccounts(message: SupportedMessage): string[] {
  return message.staticAccounts.filter((_, i) => isWritable(message, i));
}

/** Per-slot minimum prices of landed transactions over the last 150 slots. */
export class FeeMarket {
  private readonly slots = new Map<number, SlotMinimums>();

  /** Records a transaction that landed in `slot` at `price`, locking `writable`. Slots arrive in increasing order. */
  record(slot: number, price: bigint, writable: Iterable<string>): void {
    let s = this.slots.get(slot);
    if (s === undefined) {
      s = { min: price, writable: new Map() };
      this.slots.set(slot, s);
      for (const old of this.slots.keys()) {
        if (old > slot - RECENT_FEE_SLOTS) break;
        this.slots.delete(old);
      }
    } else if (price < s.min) {
      s.min = price;
    }
    for (const a of writable) {
      const current = s.writable.get(a);
      if (current === undefined || price < current) s.writable.set(a, price);
    }
  }

  /**
   * The fee per slot for the 150 slots up to `height`, oldest first. A `floor` (the congestion
   * fault's market price) raises every slot to at least that much.
   */
  recent(height: bigint, accounts: readonly string[], floor: bigint | null): SlotFee[] {
    const out: SlotFee[] = [];
    const last = Number(height);
    for (let slot = Math.max(1, last - RECENT_FEE_SLOTS + 1); slot <= last; slot++) {
      const s = this.slots.get(slot);
      let fee = s?.min ?? 0n;
      if (s !== undefined) {
        for (const a of accounts) {
          const w = s.writable.get(a);
          if (w !== undefined && w > fee) fee = w;
        }
      }
      if (floor !== null && fee < floor) fee = floor;
      out.push({ slot: BigInt(slot), prioritizationFee: fee });
    }
    return out;
  }
}
