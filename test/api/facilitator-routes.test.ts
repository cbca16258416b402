/** The x402 facilitator's routes share a key's rate limit with its /v1 calls: one budget per key, whichever door it uses. */
import { afterAll, expect, test } from 'bun:test';
import { startTestServer, testServices } from '../helpers/services.ts';

const services = testServices({ env: { AGENT_WALLET_RATE_LIMITS_PER_KEY_PER_MINUTE: '3' } });
const server = await startTestServer(services);
afterAll(() => server.stop());

test("a merchant key's facilitator answers carry its RateLimit headers; past its limit it is refused there and on /v1, with Retry-After; an unknown key is 401", async () => {
  const origin = new URL(server.url).origin;
  const reg = await fetch(`${server.url}/merchant`, { method: 'POST', body: JSON.stringify({ action: 'register', name: 'Limits', username: 'limits-shop', payout_address: '11111111111111111111111111111112' }) });
  const key = ((await reg.json()) as any).data.api_key as string;
  const auth = { authorization: `Bearer ${key}` };
  const supported = () => fetch(`${origin}/x402/facilitator/supported`, { headers: auth });
  for (let i = 0; i < 2; i++) {
    const ok = await supported();
    expect(ok.status).toBe(200);
    // The same RateLimit headers as a /v1 answer: the budget left after this call.
    expect([ok.headers.get('ratelimit-limit'), ok.headers.get('ratelimit-remaining')]).toEqual(['3', String(2 - i)]);
  }
  expect((await fetch(`${server.url}/merchant`, { method: 'POST', headers: auth, body: JSON.stringify({ action: 'info' }) })).status).toBe(200);
  // The fourth call of the minute, on either door.
  const refused = await fetch(`${origin}/x402/facilitator/verify`, { method: 'POST', headers: auth, body: '{}' });
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).not.toBeNull();
  expect(((await refused.json()) as any).error.code).toBe('RATE_LIMITED');
  expect((await fetch(`${server.url}/merchant`, { method: 'POST', headers: auth, body: JSON.stringify({ action: 'info' }) })).status).toBe(429);
  expect((await fetch(`${origin}/x402/facilitator/supported`, { headers: { authorization: 'Bearer wallet_merchant_nope' } })).status).toBe(401);
});
