/**
 * The x402 facilitator's routes count against a budget of the key's own (issue 40, item 14): a
 * merchant's paywall calls them for any buyer's payment header, so buyers' payments — garbage
 * included — must not use up the merchant's /v1 calls, nor its /v1 calls the facilitator's.
 */
import { afterAll, expect, test } from 'bun:test';
import { startTestServer, testServices } from '../helpers/services.ts';

const services = testServices({ env: { AGENT_WALLET_RATE_LIMITS_PER_KEY_PER_MINUTE: '3' } });
const server = await startTestServer(services);
afterAll(() => server.stop());

test("a merchant key's facilitator answers carry their own RateLimit headers; past that limit the facilitator is refused with Retry-After while /v1 still answers, and the other way round; an unknown key is 401", async () => {
  const origin = new URL(server.url).origin;
  const reg = await fetch(`${server.url}/merchant`, { method: 'POST', body: JSON.stringify({ action: 'register', name: 'Limits', username: 'limits-shop', payout_address: '11111111111111111111111111111112' }) });
  const key = ((await reg.json()) as any).data.api_key as string;
  const auth = { authorization: `Bearer ${key}` };
  const supported = () => fetch(`${origin}/x402/facilitator/supported`, { headers: auth });
  const info = () => fetch(`${server.url}/merchant`, { method: 'POST', headers: auth, body: JSON.stringify({ action: 'info' }) });
  for (let i = 0; i < 3; i++) {
    const ok = await supported();
    expect(ok.status).toBe(200);
    // The facilitator's budget left after this call, not the key's /v1 one.
    expect([ok.headers.get('ratelimit-limit'), ok.headers.get('ratelimit-remaining')]).toEqual(['3', String(2 - i)]);
  }
  const refused = await fetch(`${origin}/x402/facilitator/verify`, { method: 'POST', headers: auth, body: '{}' });
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).not.toBeNull();
  expect(((await refused.json()) as any).error).toMatchObject({ code: 'RATE_LIMITED' });
  // The key's /v1 budget is whole: three calls, then its own 429, the facilitator's count unchanged.
  for (let i = 0; i < 3; i++) expect((await info()).status).toBe(200);
  expect((await info()).status).toBe(429);
  expect((await fetch(`${origin}/x402/facilitator/supported`, { headers: { authorization: 'Bearer wallet_merchant_nope' } })).status).toBe(401);
});
