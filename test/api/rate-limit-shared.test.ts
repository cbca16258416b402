/**
 * Rate limits on a ledger two nodes share (issue 42): counted in the database, so a key's limit is
 * admitted once across the balancer, not once per node; a counter that cannot be reached falls
 * back to the node's own, never refusing a request for its sake.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { SharedRateLimiter } from '../../src/api/rate-limit.ts';
import { openPgStore, type PgStore } from '../../src/db/pg-store.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile } from '../helpers/pg.ts';
import { memoryLogger } from '../helpers/services.ts';

const { url: server, cluster } = await pgServerForFile('the shared rate limit tests');
const stores: PgStore[] = [];

beforeAll(async () => {
  if (!server) return;
  const url = await emptyPgDatabase(server);
  for (let i = 0; i < 2; i++) stores.push(await openPgStore(url, { network: 'simnet', poolSize: 2 }));
}, 30_000);
afterAll(async () => {
  for (const s of stores) await s.close().catch(() => undefined);
  await cluster?.stop();
}, 30_000);

test.skipIf(!server)("two nodes count one key's calls together: the limit is admitted once across both, and each bucket is its own", async () => {
  const [a, b] = stores.map((s) => new SharedRateLimiter(s, 60_000, memoryLogger().log));
  const decisions = [];
  for (let i = 0; i < 6; i++) decisions.push(await (i % 2 === 0 ? a! : b!).hit('key:abc', 5));
  expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
  expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
  expect(decisions.every((d) => d.resetSeconds >= 1 && d.resetSeconds <= 60)).toBe(true);
  expect((await b!.hit('ip:10.0.0.1', 5)).remaining).toBe(4);
  // At once from both nodes: still counted once each.
  const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a! : b!).hit('key:burst', 10)));
  expect(burst.filter((d) => d.allowed)).toHaveLength(10);
});

test.skipIf(!server)('a node whose database does not answer counts on its own and says so', async () => {
  const url = await emptyPgDatabase(server!);
  const gone = await openPgStore(url, { network: 'simnet', poolSize: 1 });
  await gone.close();
  const { log, lines } = memoryLogger();
  const limiter = new SharedRateLimiter(gone, 60_000, log);
  expect((await limiter.hit('key:x', 2)).allowed).toBe(true);
  expect((await limiter.hit('key:x', 2)).allowed).toBe(true);
  expect((await limiter.hit('key:x', 2)).allowed).toBe(false);
  expect(lines.filter((l) => l.includes('counting on this node alone'))).toHaveLength(1);
});
