/**
 * The chain watch's writes are fenced by its lease (DESIGN §10.2: no two watchers write), on a real
 * PostgreSQL: a transaction begun under a lease the node has lost — its lock session ended, another
 * node took the lease — writes nothing and says why; under the new holder's lease it commits.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { FenceLostError, withFence } from '../../src/db/fence.ts';
import { pgNodeLocks, type NodeLocks } from '../../src/db/node-locks.ts';
import { openPgStore, type PgStore } from '../../src/db/pg-store.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile } from '../helpers/pg.ts';

const { url: server, cluster } = await pgServerForFile('the lease fence test');
let url: string;
let store: PgStore;
const nodes: NodeLocks[] = [];

beforeAll(async () => {
  if (!server) return;
  url = await emptyPgDatabase(server);
  store = await openPgStore(url, { network: 'simnet', poolSize: 2 });
}, 30_000);
afterAll(async () => {
  for (const n of nodes) await n.close().catch(() => undefined);
  await store?.close();
  await cluster?.stop();
}, 30_000);

const write = (k: string) => store.transaction(async () => void (await store.run('INSERT INTO meta (key, value) VALUES (?, ?)', k, 'x')));
const written = async (k: string) => (await store.get('SELECT 1 AS one FROM meta WHERE key = ?', k)) !== null;

test.skipIf(!server)("a transaction under a lease its node lost writes nothing (FenceLostError); the new holder's commits", async () => {
  const a = await pgNodeLocks(url);
  const b = await pgNodeLocks(url);
  nodes.push(a, b);
  expect(await a.tryTake('lease:deposits')).toBe(true);
  const fenceA = a.fenceOf('lease:deposits')!;
  expect(fenceA).not.toBeNull();
  expect(b.fenceOf('lease:deposits')).toBeNull();
  await withFence(fenceA, () => write('fenced-a-1'));
  expect(await written('fenced-a-1')).toBe(true);

  // a's lock session ends (its machine is cut off; the server's keepalives gave up on it), and b takes the lease.
  const admin = new SQL(url, { max: 1 });
  await admin.unsafe('SELECT pg_terminate_backend($1)', [fenceA.pid]);
  await admin.close();
  const deadline = Date.now() + 10_000;
  while (!(await b.tryTake('lease:deposits'))) {
    if (Date.now() > deadline) throw new Error('b never took the lease');
    await Bun.sleep(50);
  }
  // a's watch pass, still running with the fence it had, is refused at its next transaction.
  const refused = await withFence(fenceA, () => write('fenced-a-2')).catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(FenceLostError);
  expect(await written('fenced-a-2')).toBe(false);
  await withFence(b.fenceOf('lease:deposits'), () => write('fenced-b-1'));
  expect(await written('fenced-b-1')).toBe(true);
  // Unfenced work (any other job, a request) is not affected.
  await write('unfenced-1');
  expect(await written('unfenced-1')).toBe(true);
}, 30_000);
