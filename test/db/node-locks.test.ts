/**
 * Node locks on a real PostgreSQL (issue 42): what one node holds another cannot take; a node's
 * death (its session ended by the server) frees everything it held and tells it so; the nodes
 * count each other. Each "node" here is its own lock connection, as each daemon has one.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { pgNodeLocks, type NodeLocks } from '../../src/db/node-locks.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile } from '../helpers/pg.ts';

const { url: server, cluster } = await pgServerForFile('the node lock tests');
let url: string;
const opened: NodeLocks[] = [];

beforeAll(async () => {
  if (server) url = await emptyPgDatabase(server);
}, 30_000);
afterAll(async () => {
  for (const n of opened) await n.close().catch(() => undefined);
  await cluster?.stop();
}, 30_000);

async function node(): Promise<NodeLocks> {
  const n = await pgNodeLocks(url);
  opened.push(n);
  return n;
}

async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(50);
  }
}

test.skipIf(!server)('what one node holds the other cannot take, until it lets go; either sees that someone holds it; both count two nodes', async () => {
  const [a, b] = [await node(), await node()];
  expect(await a.tryTake('lease:deposits')).toBe(true);
  expect(await a.tryTake('lease:deposits')).toBe(true);
  expect(await b.tryTake('lease:deposits')).toBe(false);
  expect(a.holds('lease:deposits')).toBe(true);
  expect(b.holds('lease:deposits')).toBe(false);
  expect(await b.heldAnywhere('lease:deposits')).toBe(true);
  expect(await b.heldAnywhere('lease:other')).toBe(false);
  // A tick's lock: the other node's tick is skipped while it runs, and runs once it is done.
  let ran = 0;
  let release: () => void = () => undefined;
  const running = a.exclusive('job:webhooks', () => new Promise<void>((r) => ((release = r), ran++)));
  await until('a runs its tick', () => ran === 1);
  expect(await b.exclusive('job:webhooks', async () => void ran++)).toBe(false);
  release();
  expect(await running).toBe(true);
  expect(await b.exclusive('job:webhooks', async () => void ran++)).toBe(true);
  expect(ran).toBe(2);
  // Taken twice by its holder, released once: free for the other (the session lock is not counted twice).
  await a.release('lease:deposits');
  expect(await b.tryTake('lease:deposits')).toBe(true);
  await until('each counts two nodes', () => a.liveNodes() === 2 && b.liveNodes() === 2);
});

test.skipIf(!server)("one node's own runs never overlap either: a start-up run beside a tick, two takes at once counted once", async () => {
  const [a, b] = [await node(), await node()];
  let running = 0;
  let most = 0;
  const tick = async () => {
    running++;
    most = Math.max(most, running);
    await Bun.sleep(100);
    running--;
  };
  const ran = await Promise.all([a.exclusive('job:mail', tick), a.exclusive('job:mail', tick), a.exclusive('job:mail', tick)]);
  expect(ran.filter(Boolean)).toHaveLength(1);
  expect(most).toBe(1);
  // Two takes of one lease at once: held once, so one release frees it for the other node.
  expect(await Promise.all([a.tryTake('lease:twice'), a.tryTake('lease:twice')])).toEqual([true, true]);
  await a.release('lease:twice');
  expect(await b.tryTake('lease:twice')).toBe(true);
});

test.skipIf(!server)('nodes on other databases of the same server are neither counted nor seen holding anything', async () => {
  const here = await node();
  const elsewhere = await pgNodeLocks(await emptyPgDatabase(server!));
  opened.push(elsewhere);
  expect(await elsewhere.tryTake('lease:shared-name')).toBe(true);
  expect(await here.heldAnywhere('lease:shared-name')).toBe(false);
  expect(await here.tryTake('lease:shared-name')).toBe(true);
  // Counted: this file's nodes on this database (the first test's two and this one), not the other database's.
  const mine = opened.filter((n) => n !== elsewhere).length;
  await until('a heartbeat counts this database only', () => here.liveNodes() === mine);
  expect(elsewhere.liveNodes()).toBe(1);
});

test.skipIf(!server)("a node whose session the server ends loses every lock, is told so, and the other takes them over; the others count one node less", async () => {
  const [a, b] = [await node(), await node()];
  const lost: string[] = [];
  a.onLost((key) => lost.push(key));
  expect(await a.tryTake('lease:watch-x')).toBe(true);
  expect(await b.tryTake('lease:watch-x')).toBe(false);
  const before = b.liveNodes();
  // The server ends a's session, as it does when a's machine dies (keepalives) or an operator kills it.
  const admin = new SQL(url, { max: 1 });
  const [{ pid }] = await admin.unsafe("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND objsubid = 1 AND granted AND ((classid::int8 << 32) | objid::int8) = hashtextextended('aw:lease:watch-x', 0)");
  await admin.unsafe('SELECT pg_terminate_backend($1)', [pid]);
  await admin.close();
  // The backend exits (and lets go) just after pg_terminate_backend returns.
  await until('b takes the lease over', () => b.tryTake('lease:watch-x'));
  await until('a learns it lost the lease', () => lost.includes('lease:watch-x') && !a.holds('lease:watch-x'));
  expect(await a.tryTake('lease:watch-x')).toBe(false);
  // a is back (a new session announced itself); closing it leaves the others counting one less.
  await until('b counts a again', () => b.liveNodes() >= before);
  await a.close();
  opened.splice(opened.indexOf(a), 1);
  await until('b counts one node less', () => b.liveNodes() === before - 1);
});
