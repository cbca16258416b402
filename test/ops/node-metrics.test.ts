/** /metrics of nodes on one PostgreSQL ledger: they count each other, and exactly one says it watches the chain. */
import { afterAll, expect, test } from 'bun:test';
import { localNodeLocks, pgNodeLocks, type NodeLocks } from '../../src/db/node-locks.ts';
import { leaseOf } from '../../src/jobs/runner.ts';
import { DEPOSIT_JOB } from '../../src/jobs/deposits.ts';
import { nodeMetricsSource } from '../../src/ops/node-metrics.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile } from '../helpers/pg.ts';

const { url: server, cluster } = await pgServerForFile('the node metrics test');
const opened: NodeLocks[] = [];
afterAll(async () => {
  for (const n of opened) await n.close().catch(() => undefined);
  await cluster?.stop();
}, 30_000);

const gauge = (lines: string[], name: string) => Number(lines.find((l) => l.startsWith(`${name} `))!.split(' ')[1]);

test('a lone SQLite node: one node, it watches the chain, no skew', () => {
  const lines = nodeMetricsSource(localNodeLocks())();
  expect([gauge(lines, 'agent_wallet_nodes'), gauge(lines, 'agent_wallet_chain_watch'), gauge(lines, 'agent_wallet_clock_skew_seconds')]).toEqual([1, 1, 0]);
});

test.skipIf(!server)('two nodes: each counts two, the watch gauges sum to 1, each skew is small', async () => {
  const url = await emptyPgDatabase(server!);
  const a = await pgNodeLocks(url);
  const b = await pgNodeLocks(url);
  opened.push(a, b);
  expect(await a.tryTake(leaseOf(DEPOSIT_JOB))).toBe(true);
  const deadline = Date.now() + 5_000;
  while (a.liveNodes() < 2 && Date.now() < deadline) await Bun.sleep(50);
  const [la, lb] = [nodeMetricsSource(a)(), nodeMetricsSource(b)()];
  expect([gauge(la, 'agent_wallet_nodes'), gauge(lb, 'agent_wallet_nodes')]).toEqual([2, 2]);
  expect(gauge(la, 'agent_wallet_chain_watch') + gauge(lb, 'agent_wallet_chain_watch')).toBe(1);
  expect(Math.abs(gauge(la, 'agent_wallet_clock_skew_seconds'))).toBeLessThan(1);
}, 20_000);
