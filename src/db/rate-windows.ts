/**
 * Request counters that every node of a shared PostgreSQL ledger counts in (DESIGN §3's rate
 * limits, issue 42): a fixed window per bucket, on the database's clock, so two nodes behind a
 * balancer admit a key's limit once, not once each. UNLOGGED: its writes skip the WAL, so a count
 * costs no flush, and a server crash forgets at most a window of counts — as a restart of a lone
 * node forgets its in-memory ones. It is the nodes' scratch space, not the ledger: created on first
 * use, never copied, and left out of the schema.
 */
import type { PgStore } from './pg-store.ts';

const CREATE = `CREATE UNLOGGED TABLE IF NOT EXISTS node_rate_windows (
  bucket       TEXT PRIMARY KEY,
  window_start BIGINT NOT NULL,
  hits         BIGINT NOT NULL
)`;
const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

const ready = new WeakMap<PgStore, Promise<void>>();

/** Counts one hit on `bucket` in the current window of `windowMs`; its count so far and the ms until the window ends. */
export async function countHit(store: PgStore, bucket: string, windowMs: number): Promise<{ hits: number; resetMs: number }> {
  let created = ready.get(store);
  if (!created) {
    created = store.sql.unsafe(CREATE).then(() => undefined);
    created.catch(() => ready.delete(store));
    ready.set(store, created);
  }
  await created;
  const [row] = await store.sql.unsafe(
    `INSERT INTO node_rate_windows AS w (bucket, window_start, hits) VALUES ($1, ${NOW_MS} / $2 * $2, 1)
     ON CONFLICT (bucket) DO UPDATE SET hits = CASE WHEN w.window_start = excluded.window_start THEN w.hits + 1 ELSE 1 END, window_start = excluded.window_start
     RETURNING hits, window_start + $2 - ${NOW_MS} AS reset_ms`,
    [bucket, windowMs],
  );
  return { hits: Number(row.hits), resetMs: Number(row.reset_ms) };
}

/** Forgets windows that ended before the last one; returns how many. */
export async function pruneRateWindows(store: PgStore, windowMs: number): Promise<number> {
  await ready.get(store);
  const result = await store.sql.unsafe(`DELETE FROM node_rate_windows WHERE window_start < ${NOW_MS} - 2 * $1`, [windowMs]);
  return result.count ?? 0;
}
