/**
 * The compute-unit price of the messages the daemon builds: the configured percentile of
 * `getRecentPrioritizationFees` for the message's writable accounts, capped, remembered for a few
 * seconds and shared, so concurrent payments cost one RPC call between them, not one each.
 */
import type { Address } from '@solana/kit';
import { percentileFee } from '../domain/priority-fee.ts';
import { ChainUnavailableError } from '../solana/errors.ts';
import type { ChainPort } from '../solana/port.ts';
import type { Services } from '../services.ts';

/** How long one estimate serves every message built; the fee market moves over tens of slots. */
export const PRICE_TTL_MS = 5_000;

interface Estimate {
  price: bigint;
  at: number;
}

/** Per chain port: the last estimate and the lookup in flight (shared by concurrent callers). */
const estimates = new WeakMap<ChainPort, { last: Estimate | null; inFlight: Promise<bigint> | null }>();

/**
 * The current price for a message writing `writable`. The estimate is not per account set: the
 * USDC token accounts of different payments rarely contend, so the price recent blocks charged
 * around one payment's accounts stands for the others built in the same few seconds. When the
 * lookup fails the last estimate is used (0 before any), with a warning: fee data is advice, and a
 * message that then fails to land is re-signed at an escalated price.
 */
export async function currentPriorityFee(services: Pick<Services, 'chain' | 'config' | 'log'>, writable: Address[]): Promise<bigint> {
  let state = estimates.get(services.chain);
  if (!state) {
    state = { last: null, inFlight: null };
    estimates.set(services.chain, state);
  }
  if (state.last && Date.now() - state.last.at < PRICE_TTL_MS) return state.last.price;
  if (state.inFlight) return state.inFlight;
  const entry = state;
  const { priority_fee_percentile: percentile, priority_fee_cap_micro_lamports: cap } = services.config.solana;
  entry.inFlight = (async () => {
    try {
      const fees = await services.chain.getRecentPrioritizationFees(writable.slice(0, 128));
      const price = percentileFee(fees, percentile, BigInt(cap));
      entry.last = { price, at: Date.now() };
      return price;
    } catch (err) {
      if (!(err instanceof ChainUnavailableError)) throw err;
      services.log.warn('priority fee lookup failed; using the last estimate', { error: err.message, price: String(entry.last?.price ?? 0n) });
      return entry.last?.price ?? 0n;
    } finally {
      entry.inFlight = null;
    }
  })();
  return entry.inFlight;
}
