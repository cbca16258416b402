/**
 * The ledger's committed transactions (each a write to the WAL, or a commit on PostgreSQL): the
 * figure behind "commits per payment". The store counts them (store.ts); a transaction begun with
 * an `origin` is counted under it too, so the bench can tell a payment's own commits from those
 * that record outcomes for many payments at once.
 */
import type { Store } from './store.ts';

/** The origin of the commits that record confirmed outcomes, each for as many payments as landed together. */
export const OUTCOME_COMMITS = 'outcomes';

/** The commits counted on `db` so far. */
export function commitsOf(db: Store): number {
  return db.commits.all;
}

/** The commits counted on `db` under `as` so far. */
export function commitsFrom(db: Store, as: string): number {
  return db.commits.byOrigin.get(as) ?? 0;
}
