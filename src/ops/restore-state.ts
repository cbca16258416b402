/**
 * Where the first start after a restore stands, for the parts that answer meanwhile: the daemon
 * serves reads at once, and every action that could sign or record money waits (SERVICE_UNAVAILABLE
 * with Retry-After) until every transaction signed before the restore has landed or expired and
 * the chain scan has recorded what landed (src/ops/after-restore.ts).
 */
import { AppError } from '../errors.ts';

export interface RestoreState {
  /** True from start until the reconciliation is done. */
  active: boolean;
  /** The block height the chain must pass; null while it is not read yet. */
  untilBlockHeight: bigint | null;
  /** The chain's block height when last read. */
  blockHeight: bigint | null;
}

export const notRestoring = (): RestoreState => ({ active: false, untilBlockHeight: null, blockHeight: null });

/** Blocks left before the wait ends (0 once passed or unknown). */
export function blocksToGo(s: RestoreState): number {
  if (s.untilBlockHeight === null || s.blockHeight === null) return 0;
  const left = s.untilBlockHeight - s.blockHeight + 1n;
  return left > 0n ? Number(left) : 0;
}

/** What /healthz and the doctor show while restoring. */
export function restoreView(s: RestoreState): { until_block_height: string | null; blocks_to_go: number } {
  return { until_block_height: s.untilBlockHeight?.toString() ?? null, blocks_to_go: blocksToGo(s) };
}

/** The answer to an action that could sign or record money while the restore is reconciled. */
export function restoringError(s: RestoreState): AppError {
  const left = blocksToGo(s);
  // About 0.4 s a block on Solana; ask again within half a minute either way.
  const retry = Math.min(30, Math.max(2, Math.ceil(left * 0.4)));
  const waiting = s.untilBlockHeight === null ? 'reading the chain' : `waiting for block height ${s.untilBlockHeight} (${left} blocks to go)`;
  return new AppError('SERVICE_UNAVAILABLE', `The daemon was restored from a backup and is reconciling its ledger with the chain (${waiting}); reads work, money actions wait until then. Nothing was changed.`, {
    headers: { 'Retry-After': String(retry) },
    howToFix: `Retry after ${retry} s (Retry-After). Transactions signed before the restore must land or expire first, so none is paid twice.`,
    details: { restoring: true, ...restoreView(s) },
  });
}
