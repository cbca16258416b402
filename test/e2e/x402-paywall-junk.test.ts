/**
 * Junk payment headers against a merchant's paywall (issue 40, item 14): the gate runs the
 * payment's own checks (the transaction, its transfer, the payer's signature) before it asks the
 * facilitator, and the facilitator's calls count against a budget of the key's own, so a stranger's
 * garbage neither reaches the merchant's budget nor takes its API or its paywall down. A per-key
 * limit of 40 a minute here; 60 junk payments are sent.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address, type KeyPairSigner } from '@solana/kit';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { parseRoute } from '../../src/domain/paywall-routes.ts';
import { startPaywall, type Paywall } from '../../src/x402/paywall.ts';
import { decodeBase64Json, encodeBase64Json } from '../../src/x402/wire.ts';
import { startWorld, type World } from '../helpers/world.ts';
import { DEVNET_CAIP2 } from '../x402/sellers.ts';

const LIMIT = 40;
const JUNK = 60;

let world: World;
let buyer: KeyPairSigner;
let payout: Address;
let merchantKey: string;
let upstream: ReturnType<typeof Bun.serve>;
let gate: Paywall;

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_RATE_LIMITS_PER_KEY_PER_MINUTE: String(LIMIT) } });
  buyer = await generateKeyPairSigner();
  await world.fund(buyer.address, 1_000_000n);
  payout = (await generateKeyPairSigner()).address;
  await world.fund(payout, 0n);
  const reg = await fetch(`${world.url}/merchant`, { method: 'POST', body: JSON.stringify({ action: 'register', name: 'Junk Target', username: 'junk-target', payout_address: payout }) });
  merchantKey = ((await reg.json()) as any).data.api_key;
  upstream = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Response.json({ answer: 42 }) });
  const parsed = parseRoute('GET /api/*=0.01');
  if (!parsed.ok) throw new Error(parsed.reason);
  gate = await startPaywall({ server: world.url, merchantKey, upstream: `http://127.0.0.1:${upstream.port}`, routes: [parsed.route], hostname: '127.0.0.1', port: 0, journal: ':memory:', log: () => {} } as Parameters<typeof startPaywall>[0]);
});
afterAll(async () => {
  await gate?.stop();
  await upstream?.stop(true);
  await world?.stop();
});

/** One merchant API call: its status and how long it took. */
async function merchantInfo(): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${merchantKey}` }, body: JSON.stringify({ action: 'info' }) });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}
const summary = (xs: { status: number; ms: number }[]) => {
  const ms = xs.map((x) => x.ms).sort((a, b) => a - b);
  return `${xs.filter((x) => x.status === 200).length}/${xs.length} answered 200, median ${ms[Math.floor(ms.length / 2)]!.toFixed(0)} ms, max ${ms.at(-1)!.toFixed(0)} ms`;
};

test("60 junk payment headers at the paywall leave the merchant's API answering and the paywall selling; a facilitator flood spends only the facilitator's budget", async () => {
  const idle: { status: number; ms: number }[] = [];
  for (let i = 0; i < 5; i++) idle.push(await merchantInfo());

  // Junk as a stranger makes it: the route's own requirements, and a transaction that is noise.
  const unpaid = await fetch(`${gate.url}/api/data`);
  expect(unpaid.status).toBe(402);
  const accepted = (decodeBase64Json(unpaid.headers.get('payment-required')!) as any).accepts[0];
  const junk = () => encodeBase64Json({ x402Version: 2, accepted, payload: { transaction: Buffer.from(crypto.getRandomValues(new Uint8Array(300))).toString('base64') } });
  const during: { status: number; ms: number }[] = [];
  const junkAnswers: number[] = [];
  for (let i = 0; i < JUNK; i += 10) {
    const batch = Array.from({ length: 10 }, () => fetch(`${gate.url}/api/data`, { headers: { 'payment-signature': junk() } }).then(async (r) => (await r.arrayBuffer(), r.status)));
    during.push(await merchantInfo());
    junkAnswers.push(...(await Promise.all(batch)));
  }
  const after: { status: number; ms: number }[] = [];
  for (let i = 0; i < 5; i++) after.push(await merchantInfo());
  console.log(`[issue 40 item 14] merchant API (info) idle: ${summary(idle)}; during ${JUNK} junk payments at the paywall: ${summary(during)}; right after: ${summary(after)}`);

  expect(junkAnswers.every((s) => s === 402)).toBe(true);
  expect([...during, ...after].every((x) => x.status === 200)).toBe(true);
  // An honest buyer right after the junk is sold to.
  const paid = await wrapFetchWithPayment(fetch, new x402Client().register(DEVNET_CAIP2, new ExactSvmScheme(buyer, { rpcUrl: world.simnet.url })))(`${gate.url}/api/data`);
  expect(paid.status).toBe(200);
  expect(await paid.json()).toEqual({ answer: 42 });
  expect(await world.balance(payout)).toBe(10_000n);

  // Junk sent to the facilitator directly with the merchant's key spends the facilitator's budget only.
  const flood = await Promise.all(
    Array.from({ length: LIMIT + 1 }, () =>
      fetch(`${new URL(world.url).origin}/x402/facilitator/verify`, { method: 'POST', headers: { authorization: `Bearer ${merchantKey}` }, body: JSON.stringify({ x402Version: 2, paymentPayload: { x402Version: 2, payload: { transaction: 'AAAA' } }, paymentRequirements: accepted }) }).then(async (r) => (await r.arrayBuffer(), r.status)),
    ),
  );
  expect(flood).toContain(429);
  const afterFlood = await merchantInfo();
  console.log(`[issue 40 item 14] merchant API (info) after ${LIMIT + 1} junk calls straight to /verify with its key: HTTP ${afterFlood.status} in ${afterFlood.ms.toFixed(0)} ms`);
  expect(afterFlood.status).toBe(200);
});
