/**
 * Jobs on a ledger several daemons share (issue 42), with real node locks on PostgreSQL: a job's
 * tick runs on one node at a time, and a singleton job (the chain watch) runs on one node only,
 * taken over by another at its next tick once the holder is gone.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { pgNodeLocks, type NodeLocks } from '../../src/db/node-locks.ts';
import { JobRunner, leaseOf } from '../../src/jobs/runner.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile } from '../helpers/pg.ts';
import { memoryLogger } from '../helpers/services.ts';

const { url: server, cluster } = await pgServerForFile('the shared job runner tests');
const cleanup: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
  await cluster?.stop();
}, 30_000);

async function nodes(n: number, clocks: (() => number)[] = []): Promise<{ locks: NodeLocks; runner: JobRunner; lines: string[] }[]> {
  const url = await emptyPgDatabase(server!);
  const out = [];
  for (let i = 0; i < n; i++) {
    const locks = await pgNodeLocks(url, { now: clocks[i] });
    const { log, lines } = memoryLogger();
    const runner = new JobRunner(log, undefined, Date.now, locks);
    cleanup.push(async () => {
      await runner.stop();
      await locks.close();
    });
    out.push({ locks, runner, lines });
  }
  return out;
}

async function until(what: string, fn: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(50);
  }
}

test.skipIf(!server)("two nodes tick the same job every second: its runs never overlap, and each tick's due items are one node's", async () => {
  const [a, b] = await nodes(2);
  let running = 0;
  let most = 0;
  const ran: string[] = [];
  const job = (who: string) => ({
    name: 'webhooks',
    schedule: { everySeconds: 1 },
    runAtStart: true,
    run: async () => {
      running++;
      most = Math.max(most, running);
      ran.push(who);
      await Bun.sleep(400);
      running--;
    },
  });
  a!.runner.add(job('a'));
  b!.runner.add(job('b'));
  await until('three ticks ran', () => ran.length >= 3);
  expect(most).toBe(1);
}, 20_000);

test.skipIf(!server)('a singleton job runs on the node holding its lease only; when that node dies, another takes it over at its next tick', async () => {
  const [a, b] = await nodes(2);
  const ran: string[] = [];
  const job = (who: string) => ({ name: 'deposits', schedule: { everySeconds: 1 }, runAtStart: true, singleton: true, run: () => void ran.push(who) });
  a!.runner.add(job('a'));
  await until('a ticks', () => ran.length >= 1);
  b!.runner.add(job('b'));
  await until('three more ticks', () => ran.length >= 4);
  expect(new Set(ran)).toEqual(new Set(['a']));
  expect(a!.locks.holds(leaseOf('deposits'))).toBe(true);
  expect(await b!.locks.heldAnywhere(leaseOf('deposits'))).toBe(true);
  // a dies: its connection closes with it, and with it the lease.
  const died = Date.now();
  await a!.runner.stop();
  await a!.locks.close();
  await until('b takes the watch over', () => ran.includes('b'));
  expect(Date.now() - died).toBeLessThan(3_000);
  expect(b!.lines.some((l) => l.includes('took the lease of a singleton job'))).toBe(true);
}, 20_000);

test.skipIf(!server)("a node whose clock is off the database's runs no job, not even the chain watch it could take; the others run them", async () => {
  const [late, good] = await nodes(2, [() => Date.now() - 60_000]);
  expect(Math.abs(late!.locks.clockSkewMs() + 60_000)).toBeLessThan(1_000);
  expect(Math.abs(good!.locks.clockSkewMs())).toBeLessThan(1_000);
  const ran: string[] = [];
  const job = (who: string) => ({ name: 'deposits', schedule: { everySeconds: 1 }, runAtStart: true, singleton: true, run: () => void ran.push(who) });
  late!.runner.add(job('late'));
  good!.runner.add(job('good'));
  await until('three ticks', () => ran.length >= 3);
  expect(new Set(ran)).toEqual(new Set(['good']));
  expect(late!.locks.holds(leaseOf('deposits'))).toBe(false);
  expect(late!.lines.filter((l) => l.includes("clock is off from the database server's"))).toHaveLength(1);
}, 20_000);
