import { afterAll, beforeAll, expect, test } from 'bun:test';
import { optimize } from '../../src/db/maintenance.ts';
import { openPgStore, type PgStore } from '../../src/db/pg-store.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile } from '../helpers/pg.ts';

const { url: server, cluster } = await pgServerForFile('the PostgreSQL upkeep test');
let store: PgStore;

beforeAll(async () => {
  if (server) store = await openPgStore(await emptyPgDatabase(server), { network: 'simnet', poolSize: 1 });
}, 30_000);
afterAll(async () => {
  await store?.close();
  await cluster?.stop();
}, 30_000);

test.skipIf(!server)("the nightly upkeep refreshes PostgreSQL's planner statistics (SQLite's PRAGMA optimize has no meaning there)", async () => {
  await optimize(store);
  const analyzed = await store.get<{ n: bigint }>("SELECT count(*) AS n FROM pg_stat_user_tables WHERE relname = 'transactions' AND last_analyze IS NOT NULL");
  expect(analyzed).toEqual({ n: 1n });
});
