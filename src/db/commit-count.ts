/**
 * Counts the ledger's committed transactions (each a write to the WAL and, with synchronous=FULL,
 * an fsync on the thread that commits): the figure behind "commits per payment". It wraps
 * `db.transaction` once at open; a call that returns with no transaction left open committed one.
 * Statements run outside a transaction (autocommit) are not counted.
 */
import type { Database } from 'bun:sqlite';

const counts = new WeakMap<Database, { commits: number }>();

type TxFn = ReturnType<Database['transaction']>;

/** Makes `db` count its commits (idempotent). */
export function countCommits(db: Database): void {
  if (counts.has(db)) return;
  const count = { commits: 0 };
  counts.set(db, count);
  const original = db.transaction.bind(db) as (fn: (...args: any[]) => any) => TxFn;
  const counted =
    <F extends (...args: any[]) => any>(run: F) =>
    (...args: Parameters<F>): ReturnType<F> => {
      const result = run(...args);
      if (!db.inTransaction) count.commits++;
      return result;
    };
  db.transaction = ((fn: (...args: any[]) => any) => {
    const tx = original(fn);
    const wrapped = counted(tx) as TxFn;
    wrapped.deferred = counted(tx.deferred);
    wrapped.immediate = counted(tx.immediate);
    wrapped.exclusive = counted(tx.exclusive);
    return wrapped;
  }) as Database['transaction'];
}

/** The commits counted on `db` so far (0 when it is not counted). */
export function commitsOf(db: Database): number {
  return counts.get(db)?.commits ?? 0;
}
