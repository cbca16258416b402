import { afterAll, beforeAll, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { pgDurability } from '../../src/db/pg-durability.ts';
import { localNodeLocks } from '../../src/db/node-locks.ts';
import { openPgStore, type PgStore } from '../../src/db/pg-store.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile } from '../helpers/pg.ts';

const { url: server, cluster } = await pgServerForFile('the PostgreSQL durability test');
/** This file's database on the server. */
let url: string;
let store: PgStore;

beforeAll(async () => {
  if (!server) return;
  url = await emptyPgDatabase(server);
  store = await openPgStore(url, { network: 'simnet', poolSize: 4, commitWithoutFlush: true });
}, 30_000);
afterAll(async () => {
  await store?.close();
  await cluster?.stop();
}, 30_000);

const lsn = async (sql: SQL, fn: string) => BigInt(`0x${(await sql.unsafe(`SELECT ${fn}() - '0/0'::pg_lsn AS n`))[0].n}`);

test.skipIf(!server)('a commit made without a flush is waited for: durable() resolves once the WAL holding it is on the disk; effects waiting together share a flush', async () => {
  const durability = pgDurability(store);
  const probe = new SQL(url, { max: 1 });
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

test.skipIf(!server)("with other nodes on the ledger, an effect with no commit of its own waits until the WAL holding theirs is on the disk; alone, it waits for nothing", async () => {
  let peers = 1;
  const nodes = { ...localNodeLocks(), liveNodes: () => peers };
  const durability = pgDurability(store, nodes);
  // Another node's commit, made without a flush (as every node's daemon commits).
  const other = new SQL(url, { max: 1 });
  await other.begin(async (tx) => {
    await tx.unsafe("SELECT set_config('synchronous_commit', 'off', true)");
    await tx.unsafe("INSERT INTO meta (key, value) VALUES ('other-node', '1') ON CONFLICT (key) DO UPDATE SET value = excluded.value || '1'");
  });
  const written = await lsn(other, 'pg_current_wal_insert_lsn');
  expect(durability.durable()).toBeUndefined();
  peers = 2;
  const wait = durability.durable();
  expect(wait).toBeInstanceOf(Promise);
  await wait;
  expect(await lsn(other, 'pg_current_wal_flush_lsn')).toBeGreaterThanOrEqual(written);
  await other.close();
});

test('a flush that fails rejects the effects waiting for it, naming the cause; the next effect flushes again and the commits made meanwhile wait for a later flush', async () => {
  let fail = true;
  let flushes = 0;
  let release: () => void = () => {};
  const fake = {
    commits: { all: 0, byOrigin: new Map() },
    async flushWal() {
      flushes++;
      if (fail) throw new Error('connection refused');
      await new Promise<void>((r) => (release = r));
    },
  };
  const durability = pgDurability(fake as unknown as PgStore);
  fake.commits.all = 1;
  const first = durability.durable();
  await expect(first).rejects.toThrow("the ledger's commits could not be confirmed on PostgreSQL's disk: connection refused");
  expect(durability.stats.syncs).toBe(0);
  fail = false;
  const second = durability.durable()!;
  expect(second).toBeInstanceOf(Promise);
  // Committed while that flush runs: not covered by it.
  fake.commits.all = 2;
  let thirdDone = false;
  const third = durability.durable()!.then(() => (thirdDone = true));
  release();
  await second;
  expect(thirdDone).toBe(false);
  await Bun.sleep(0);
  release();
  await third;
  expect(flushes).toBe(3);
  expect(durability.durable()).toBeUndefined();
});
