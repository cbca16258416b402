import { afterAll, beforeAll, expect, test } from 'bun:test';
import { optimize } from '../../src/db/maintenance.ts';
import { openPgStore, type PgStore } from '../../src/db/pg-store.ts';
import { PgNotInstalledError, startPgCluster, type PgCluster } from '../helpers/pg.ts';

let cluster: PgCluster | null = null;
let store: PgStore;

beforeAll(async () => {
  try {
    cluster = await startPgCluster();
  } catch (err) {
    if (err instanceof PgNotInstalledError) return console.warn(`skipped: ${err.message}`);
    throw err;
  }
  store = await openPgStore(cluster.url, { network: 'simnet', poolSize: 1 });
}, 30_000);
afterAll(async () => {
  await store?.close();
  await cluster?.stop();
}, 30_000);

test("the nightly upkeep refreshes PostgreSQL's planner statistics (SQLite's PRAGMA optimize has no meaning there)", async () => {
  if (!cluster) return;
  await optimize(store);
  const analyzed = await store.get<{ n: bigint }>("SELECT count(*) AS n FROM pg_stat_user_tables WHERE relname = 'transactions' AND last_analyze IS NOT NULL");
  expect(analyzed).toEqual({ n: 1n });
});
