/**
 * Behind a balancer (server.trusted_proxies), per-IP limits count each client, not the proxy, and
 * the loopback-only /metrics answers only a client that is on loopback itself; without it, a
 * client's X-Forwarded-For changes nothing. Over real HTTP.
 */
import { expect, test } from 'bun:test';
import { startTestServer, testServices } from '../helpers/services.ts';

const ping = (url: string, forwardedFor: string) => fetch(`${url}/bot`, { method: 'POST', headers: { 'x-forwarded-for': forwardedFor }, body: '{"action":"ping"}' });

test('a trusted proxy: each forwarded client has its own per-IP window, and a forwarded client off loopback is refused /metrics', async () => {
  const server = await startTestServer(testServices({ env: { AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '2', AGENT_WALLET_SERVER_TRUSTED_PROXIES: '127.0.0.1' } }));
  try {
    const statuses = [];
    for (const client of ['203.0.113.1', '203.0.113.1', '203.0.113.2', '203.0.113.1']) statuses.push((await ping(server.url, client)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const origin = new URL(server.url).origin;
    expect((await fetch(`${origin}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(401);
    expect((await fetch(`${origin}/metrics`)).status).toBe(200);
  } finally {
    await server.stop();
  }
});

test("no trusted proxy: X-Forwarded-For is the client's word and is ignored", async () => {
  const server = await startTestServer(testServices({ env: { AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '2' } }));
  try {
    const statuses = [];
    for (const client of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) statuses.push((await ping(server.url, client)).status);
    expect(statuses).toEqual([200, 200, 429]);
  } finally {
    await server.stop();
  }
});
