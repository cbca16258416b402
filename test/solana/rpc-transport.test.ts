/**
 * The provider transport against real HTTP endpoints that behave as hosted providers do: 429 with
 * and without Retry-After (and as a JSON-RPC error body), 503s, and a second endpoint to fail over to.
 */
import { afterAll, expect, test } from 'bun:test';
import { ChainUnavailableError } from '../../src/solana/errors.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { MAX_RETRY_AFTER_MS, type RpcOutcome } from '../../src/solana/rpc-transport.ts';

const servers: { stop(force?: boolean): unknown }[] = [];
afterAll(() => servers.forEach((s) => s.stop(true)));

/** An RPC node answering getBlockHeight = 7 after `failures` answers of the given kind. */
function node(failures: number, fail: (id: unknown) => Response): { url: string; hits: () => number } {
  let hits = 0;
  const server = Bun.serve({
    port: 0,
    async fetch(req) {
      hits++;
      const { id, method, params } = (await req.json()) as { id: unknown; method: string; params: string[][] };
      if (hits <= failures) return fail(id);
      if (method === 'getSignatureStatuses') return Response.json({ jsonrpc: '2.0', id, result: { context: { slot: 1 }, value: (params[0] ?? []).map(() => null) } });
      return Response.json({ jsonrpc: '2.0', id, result: 7 });
    },
  });
  servers.push(server);
  return { url: `http://127.0.0.1:${server.port}`, hits: () => hits };
}

const tooMany = (headers: Record<string, string>) => () => new Response('Too Many Requests', { status: 429, headers });

function recorder(): { outcomes: RpcOutcome[]; observe: (m: string, o: RpcOutcome) => void } {
  const outcomes: RpcOutcome[] = [];
  return { outcomes, observe: (_m, o) => outcomes.push(o) };
}

test('HTTP 429 with Retry-After: the call waits that long and succeeds', async () => {
  const n = node(1, tooMany({ 'retry-after': '1' }));
  const r = recorder();
  const started = performance.now();
  expect(await createRpcChainPort(n.url, { deadlineMs: 5_000, observe: r.observe }).getBlockHeight()).toBe(7n);
  expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  expect(r.outcomes).toEqual(['rate_limited', 'ok']);
});

test('HTTP 429 without Retry-After: a growing back-off, then success', async () => {
  const n = node(2, tooMany({}));
  const r = recorder();
  expect(await createRpcChainPort(n.url, { deadlineMs: 5_000, observe: r.observe }).getBlockHeight()).toBe(7n);
  expect(r.outcomes).toEqual(['rate_limited', 'rate_limited', 'ok']);
  expect(n.hits()).toBe(3);
});

test('a JSON-RPC error 429 in a 200 answer is a rate limit too', async () => {
  const n = node(1, (id) => Response.json({ jsonrpc: '2.0', id, error: { code: 429, message: 'Too many requests for a specific RPC call' } }));
  const r = recorder();
  expect(await createRpcChainPort(n.url, { deadlineMs: 5_000, observe: r.observe }).getBlockHeight()).toBe(7n);
  expect(r.outcomes).toEqual(['rate_limited', 'ok']);
});

test('a provider that keeps answering 429 past the deadline is "rate limited", not "unreachable", with a Retry-After', async () => {
  const n = node(1_000, tooMany({ 'retry-after': '2' }));
  const err = await createRpcChainPort(n.url, { deadlineMs: 500 }).getBlockHeight().catch((e) => e);
  expect(err).toBeInstanceOf(ChainUnavailableError);
  expect(err.rateLimited).toBe(true);
  expect(err.message).toContain('limiting our request rate');
  expect(err.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  expect(n.hits()).toBe(1);
});

test('a failing endpoint fails over to the next of solana.rpc_urls within the same call', async () => {
  const down = node(1_000, () => new Response('Service Unavailable', { status: 503 }));
  const up = node(0, () => new Response());
  const r = recorder();
  const logged: string[] = [];
  const port = createRpcChainPort(down.url, { fallbackUrls: [up.url], deadlineMs: 5_000, observe: r.observe, log: (e) => logged.push(e) });
  expect(await port.getBlockHeight()).toBe(7n);
  expect(r.outcomes).toEqual(['unavailable', 'ok']);
  expect(logged).toEqual(['rpc failover']);
  // Later calls stay on the endpoint that works.
  expect(await port.getBlockHeight()).toBe(7n);
  expect(down.hits()).toBe(1);
  expect(up.hits()).toBe(2);
});

test('a 429 with Retry-After: 3600 pauses that endpoint only: the call and the ones after it go to the next of solana.rpc_urls at once', async () => {
  const limited = node(1_000, tooMany({ 'retry-after': '3600' }));
  const up = node(0, () => new Response());
  const r = recorder();
  const port = createRpcChainPort(limited.url, { fallbackUrls: [up.url], deadlineMs: 5_000, observe: r.observe });
  const started = performance.now();
  expect(await port.getBlockHeight()).toBe(7n);
  expect(await Promise.all([port.getBlockHeight(), port.getSignatureStatuses(['1'.repeat(64)])])).toEqual([7n, [null]]);
  expect(performance.now() - started).toBeLessThan(2_000);
  expect(r.outcomes).toEqual(['rate_limited', 'ok', 'ok', 'ok']);
  expect(limited.hits()).toBe(1);
});

test(`a Retry-After of an hour is honoured for at most ${MAX_RETRY_AFTER_MS / 1000} s: a lone endpoint's callers are told so, not told to wait an hour`, async () => {
  const n = node(1_000, tooMany({ 'retry-after': '3600' }));
  const port = createRpcChainPort(n.url, { deadlineMs: 500 });
  const err = await port.getBlockHeight().catch((e) => e);
  expect(err).toBeInstanceOf(ChainUnavailableError);
  expect(err.rateLimited).toBe(true);
  expect(err.retryAfterSeconds).toBeLessThanOrEqual(MAX_RETRY_AFTER_MS / 1000);
  expect(err.retryAfterSeconds).toBeGreaterThan(20);
  // Another call meanwhile waits for the same capped pause and does not hit the provider again.
  expect((await port.getBlockHeight().catch((e) => e)).retryAfterSeconds).toBeLessThanOrEqual(MAX_RETRY_AFTER_MS / 1000);
  expect(n.hits()).toBe(1);
});

test('identical calls in flight share one request and one slot of the budget', async () => {
  const n = node(0, () => new Response());
  const port = createRpcChainPort(n.url, { maxRps: 1, deadlineMs: 5_000 });
  await port.getSignatureStatuses(['1'.repeat(64)]);
  // The budget is used for this second: the next five wait for it together.
  const heights = await Promise.all(Array.from({ length: 5 }, async (_, i) => {
    await Bun.sleep(i);
    return port.getBlockHeight();
  }));
  expect(heights).toEqual([7n, 7n, 7n, 7n, 7n]);
  expect(n.hits()).toBe(2);
});

test('an endpoint answering 401/403 (expired key, suspended plan) fails over to the next', async () => {
  const refused = node(1_000, () => new Response('Forbidden', { status: 403 }));
  const up = node(0, () => new Response());
  expect(await createRpcChainPort(refused.url, { fallbackUrls: [up.url], deadlineMs: 5_000 }).getBlockHeight()).toBe(7n);
  expect(refused.hits()).toBe(1);
});

test('an outage after a 429 is reported as the outage, not as a rate limit', async () => {
  let hits = 0;
  const server = Bun.serve({
    port: 0,
    fetch: () => (++hits === 1 ? new Response('Too Many Requests', { status: 429 }) : new Response('Service Unavailable', { status: 503 })),
  });
  servers.push(server);
  const err = await createRpcChainPort(`http://127.0.0.1:${server.port}`, { deadlineMs: 1_200 }).getBlockHeight().catch((e) => e);
  expect(err).toBeInstanceOf(ChainUnavailableError);
  expect(err.rateLimited).toBe(false);
  expect(err.message).toContain('HTTP 503');
});

test('a 4xx other than 408/429 is not retried', async () => {
  const n = node(1_000, () => new Response('Forbidden', { status: 403 }));
  const err = await createRpcChainPort(n.url, { deadlineMs: 5_000 }).getBlockHeight().catch((e) => e);
  expect(err).toBeInstanceOf(ChainUnavailableError);
  expect(err.message).toContain('HTTP 403');
  expect(n.hits()).toBe(1);
});

test('the budget (maxRps) keeps a burst of calls under the rate', async () => {
  const n = node(0, () => new Response());
  const port = createRpcChainPort(n.url, { maxRps: 5, deadlineMs: 10_000 });
  const started = performance.now();
  await Promise.all(Array.from({ length: 10 }, (_, i) => port.getSignatureStatuses([`${i}`.repeat(64)])));
  // 10 calls at 5/s: the second five wait for the first window to pass.
  expect(performance.now() - started).toBeGreaterThanOrEqual(1_000);
  expect(n.hits()).toBe(10);
});
