/**
 * The ledger's clock: a counter in `meta` that only moves forward — at every daemon start, every
 * signing round that uses its nonces and every completed DKG — and the ledger's id, drawn once. A
 * node keeps the highest value it saw outside the database (src/ops/rewind-check.ts); a ledger
 * whose clock is behind it was put back in time (a point-in-time restore, a Litestream restore,
 * a copied file) and is treated as restored: no signing session from before is ever completed.
 */
import type { Store } from './store.ts';

/** Moves the clock one step (creating it at 1); its new value. Inside a transaction, the step commits with it. */
export async function tickLedgerClock(db: Store): Promise<bigint> {
  const row = await db.get<{ value: string }>(
    "INSERT INTO meta (key, value) VALUES ('ledger_clock', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT) RETURNING value",
  );
  return BigInt(row!.value);
}

const watchers = new WeakMap<Store, (clock: bigint) => void>();

/** `fn` hears every step of `db`'s clock made through stepLedgerClock, once the step has committed. */
export function watchLedgerClock(db: Store, fn: (clock: bigint) => void): void {
  watchers.set(db, fn);
}

/** Steps the clock and tells the watcher once that step committed (at once outside a transaction). */
export async function stepLedgerClock(db: Store): Promise<bigint> {
  const clock = await tickLedgerClock(db);
  const tell = () => watchers.get(db)?.(clock);
  const scope = db.scope();
  if (scope) scope.afterCommit.push(tell);
  else tell();
  return clock;
}

/** The ledger's id: drawn at the first call and kept. */
export async function ledgerId(db: Store, fresh: string): Promise<string> {
  await db.run("INSERT INTO meta (key, value) VALUES ('ledger_id', ?) ON CONFLICT (key) DO NOTHING", fresh);
  return (await db.get<{ value: string }>("SELECT value FROM meta WHERE key = 'ledger_id'"))!.value;
}

/** Moves the clock up to `to` when it is behind (a ledger put back in time keeps counting from where this node saw it). */
export async function raiseLedgerClock(db: Store, to: bigint): Promise<void> {
  await db.run("INSERT INTO meta (key, value) VALUES ('ledger_clock', ?) ON CONFLICT (key) DO UPDATE SET value = CASE WHEN CAST(meta.value AS INTEGER) < CAST(excluded.value AS INTEGER) THEN excluded.value ELSE meta.value END", to.toString());
}

/** The clock as it stands (0 before its first step). */
export async function readLedgerClock(db: Store): Promise<bigint> {
  const row = await db.get<{ value: string }>("SELECT value FROM meta WHERE key = 'ledger_clock'");
  return row ? BigInt(row.value) : 0n;
}
