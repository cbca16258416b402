/**
 * Simnet's own record of every transaction that landed (succeeded or failed after paying its
 * fee). LiteSVM keeps no blocks and cannot answer "which transactions touched this address",
 * so this ledger is the source for getTransaction, getSignatureStatuses and
 * getSignaturesForAddress. Entries are plain JSON (u64 values as decimal strings) so the
 * ledger persists as is. A transaction rejected before execution is never recorded.
 */
import type { InnerInstructionsJson, TransactionErrorJson } from './outcome.ts';
import type { UiTokenAmount } from './tokens.ts';

/** One entry of `meta.preTokenBalances` / `postTokenBalances`. */
export interface TokenBalanceJson {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: UiTokenAmount;
}

/** A landed transaction with the metadata a real cluster would store for it. */
export interface LedgerEntry {
  signature: string;
  slot: number;
  /** Unix seconds of the block it landed in. */
  blockTime: number;
  /** The wire transaction exactly as received, base64. */
  wire: string;
  /** The message's static account keys in order (what getSignaturesForAddress indexes; lookup tables are not resolved). */
  accountKeys: string[];
  err: TransactionErrorJson | null;
  fee: string;
  preBalances: string[];
  postBalances: string[];
  preTokenBalances: TokenBalanceJson[];
  postTokenBalances: TokenBalanceJson[];
  logMessages: string[];
  innerInstructions: InnerInstructionsJson[];
  computeUnitsConsumed: string;
  returnData: { programId: string; data: [string, 'base64'] } | null;
  /** Memo text as getSignaturesForAddress reports it (`"[len] text"`), or null. */
  memo: string | null;
}

/** Paging of getSignaturesForAddress: both bounds exclusive, newest first. */
export interface SignaturePage {
  before?: string;
  until?: string;
  limit: number;
  /** Entries of later slots are skipped (a lagging node has not seen them). */
  maxSlot?: number;
}

/** Append-only list of landed transactions with lookups by signature and by account. */
export class Ledger {
  private readonly entries: LedgerEntry[] = [];
  private readonly bySignature = new Map<string, number>();
  private readonly byAddress = new Map<string, number[]>();

  /** Rebuilds a ledger (and its indexes) from `all()` output. */
  constructor(entries: Iterable<LedgerEntry> = []) {
    for (const e of entries) this.add(e);
  }

  /** Records a landed transaction. A signature is recorded once; later adds are ignored. */
  add(entry: LedgerEntry): void {
    if (this.bySignature.has(entry.signature)) return;
    const index = this.entries.length;
    this.entries.push(entry);
    this.bySignature.set(entry.signature, index);
    for (const key of new Set(entry.accountKeys)) {
      const list = this.byAddress.get(key);
      if (list === undefined) this.byAddress.set(key, [index]);
      else list.push(index);
    }
  }

  /** The entry for `signature`, if it landed. */
  get(signature: string): LedgerEntry | undefined {
    const i = this.bySignature.get(signature);
    return i === undefined ? undefined : this.entries[i];
  }

  /** Whether `signature` landed. */
  has(signature: string): boolean {
    return this.bySignature.has(signature);
  }

  /**
   * Transactions that reference `address`, newest first, starting after `before` and stopping
   * at `until` (both exclusive), none later than `maxSlot`. An unknown `before` yields nothing, as on a real node.
   */
  signaturesFor(address: string, page: SignaturePage): LedgerEntry[] {
    const list = this.byAddress.get(address) ?? [];
    let start = list.length - 1;
    if (page.before !== undefined) {
      const at = this.bySignature.get(page.before);
      if (at === undefined) return [];
      while (start >= 0 && (list[start] ?? -1) >= at) start--;
    }
    const stop = page.until === undefined ? undefined : this.bySignature.get(page.until);
    const out: LedgerEntry[] = [];
    for (let i = start; i >= 0 && out.length < page.limit; i--) {
      const index = list[i] ?? -1;
      if (stop !== undefined && index <= stop) break;
      const entry = this.entries[index];
      if (entry !== undefined && (page.maxSlot === undefined || entry.slot <= page.maxSlot)) out.push(entry);
    }
    return out;
  }

  /** All entries, oldest first (for persistence). */
  all(): readonly LedgerEntry[] {
    return this.entries;
  }
}
