/**
 * A singleton job's writes, fenced by its lease (DESIGN §10.2: a holder that loses its connection
 * stops at once, no two watchers write). The job runs inside `withFence`; every ledger transaction
 * it begins checks, under the writer lock, that the node's lock session still holds the lease. A
 * node that takes the lease over can only do so once the old session is gone, and its transactions
 * queue behind the same writer lock, so an old holder's transaction either committed before the
 * takeover or finds the lease gone and writes nothing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface Fence {
  /** The backend pid of the session that holds the lease. */
  pid: bigint;
  /** The lease's advisory key text (hashed by the server). */
  key: string;
}

const context = new AsyncLocalStorage<Fence>();

/** Runs `fn` with its ledger transactions fenced by `fence` (none: unfenced, e.g. a lone node). */
export function withFence<T>(fence: Fence | null, fn: () => Promise<T>): Promise<T> {
  return fence ? context.run(fence, fn) : fn();
}

export const currentFence = (): Fence | undefined => context.getStore();

/** The lease is no longer this node's: the transaction wrote nothing. */
export class FenceLostError extends Error {
  constructor(readonly key: string) {
    super(`this node no longer holds the lease ${key}: another node took it over; the transaction wrote nothing`);
    this.name = 'FenceLostError';
  }
}

/** True while the session `$1` holds the advisory lock on the text `$2` in this database. */
export const FENCE_CHECK = `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND pid = $1 AND objsubid = 1 AND granted AND ((classid::int8 << 32) | objid::int8) = hashtextextended($2, 0)) AS held`;
