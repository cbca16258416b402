/**
 * Counts the ledger's committed transactions (each a write to the WAL and, with synchronous=FULL,
 * an fsync on the thread that commits): the figure behind "commits per payment". It wraps
 * `db.transaction` once at open; a call that returns with no transaction left open committed one.
 * Statements run outside a transaction (autocommit) are not counted. A commit made inside
 * `countedAs` is also counted under its origin, so the bench can tell a payment's own commits from
 * those that record outcomes for many payments at once.
 */
import type { Database } from 'bun:sqlite';

const counts = new WeakMap<Database, { commits: number; byOrigin: Map<string, number> }>();
/** The origin of the commits that record confirmed outcomes, each for as many payments as landed together. */
export const OUTCOME_COMMITS = 'outcomes';

/** The origin of the commits made now (set synchronously around them by `countedAs`). */
let origin: string | null = null;

type TxFn = ReturnType<Database['transaction']>;

/** Makes `db` count its commits (idempotent). */
export function countCommits(db: Database): void {
  if (counts.has(db)) return;
  const count = { commits: 0, byOrigin: new Map<string, number>() };
  counts.set(db, count);
  const original = db.transaction.bind(db) as (fn: (...args: any[]) => any) => TxFn;
  const counted =
    <F extends (...args: any[]) => any>(run: F) =>
    (...args: Parameters<F>): ReturnType<F> => {
      const result = run(...args);
      if (!db.inTransaction) {
        count.commits++;
        if (origin !== null) count.byOrigin.set(origin, (count.byOrigin.get(origin) ?? 0) + 1);
      }
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

/** Runs `fn` (synchronous, so nothing else commits meanwhile) with its commits counted under `as` too. */
export function countedAs<T>(as: string, fn: () => T): T {
  const outer = origin;
  origin = as;
  try {
    return fn();
  } finally {
    origin = outer;
  }
}

/** The commits counted on `db` under `as` so far. */
export function commitsFrom(db: Database, as: string): number {
  return counts.get(db)?.byOrigin.get(as) ?? 0;
}
