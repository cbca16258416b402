import { afterAll, beforeAll, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { pgDurability } from '../../src/db/pg-durability.ts';
import { openPgStore, type PgStore } from '../../src/db/pg-store.ts';
import { startPgClusterOrSkip } from '../helpers/pg.ts';

const cluster = await startPgClusterOrSkip('the PostgreSQL durability test');
let store: PgStore;

beforeAll(async () => {
  if (cluster) store = await openPgStore(cluster.url, { network: 'simnet', poolSize: 4, commitWithoutFlush: true });
}, 30_000);
afterAll(async () => {
  await store?.close();
  await cluster?.stop();
}, 30_000);

const lsn = async (sql: SQL, fn: string) => BigInt(`0x${(await sql.unsafe(`SELECT ${fn}() - '0/0'::pg_lsn AS n`))[0].n}`);

test.skipIf(!cluster)('a commit made without a flush is waited for: durable() resolves once the WAL holding it is on the disk; effects waiting together share a flush', async () => {
  const durability = pgDurability(store);
  const probe = new SQL(cluster!.url, { max: 1 });
  expect(durability.durable()).toBeUndefined();
  await store.transaction(() => store.run("INSERT INTO meta (key, value) VALUES ('probe', '1')"));
  const written = await lsn(probe, 'pg_current_wal_insert_lsn');
  const waits = Array.from({ length: 5 }, () => durability.durable());
  expect(waits.every((w) => w instanceof Promise)).toBe(true);
  await Promise.all(waits);
  expect(await lsn(probe, 'pg_current_wal_flush_lsn')).toBeGreaterThanOrEqual(written);
  // The five waited together: one flush (a second only for commits made while the first ran).
  expect(durability.stats.syncs).toBe(1);
  expect(durability.stats.waits).toBe(5);
  expect(durability.durable()).toBeUndefined();
  // The transaction really committed without its own flush: synchronous_commit was off inside it.
  const inside = await store.transaction(() => store.get<{ s: string }>("SELECT current_setting('synchronous_commit') AS s"));
  expect(inside!.s).toBe('off');
  await probe.close();
});
