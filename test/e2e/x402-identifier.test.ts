/**
 * Retry-safe x402 (issue 28, item 1): a seller on the official packages that declares the
 * payment-identifier extension `required` gets our purchase's id with every send of its one signed
 * transfer; the network failing between its settlement and its answer, retries (x402_settle, and
 * a killed CLI run again with its idempotency key) get the first answer — paid once on chain.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { x402Fetch } from '../../src/client/x402.ts';
import { MAIN } from '../helpers/daemon.ts';
import { errorOf } from '../helpers/errors.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { sellerAddress, startFacilitator, startIdentifierSeller, type Facilitator } from '../x402/sellers.ts';

// The buyer gives up on an answer after 1.5 s; the seller holds a stalled one for 2.5 s.
const env = { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1', AGENT_WALLET_OUTBOUND_CONNECT_TIMEOUT_MS: '1000', AGENT_WALLET_OUTBOUND_TOTAL_TIMEOUT_MS: '1500' };
const STALL_MS = 2_500;

let world: World;
let alice: Agent;
let facilitator: Facilitator;
let payTo: Address;
let seller: Awaited<ReturnType<typeof startIdentifierSeller>>;

beforeAll(async () => {
  world = await startWorld({ env });
  alice = await world.agent('Alice');
  await world.claim(alice.walletId, 'alice-owner@example.com');
  await world.fund(alice.address, 10_000_000n);
  facilitator = await startFacilitator(world);
  payTo = await sellerAddress(world);
  seller = await startIdentifierSeller(world, facilitator, { payTo, stallMs: STALL_MS });
});
afterAll(async () => {
  await seller?.stop();
  await world?.stop();
});

test('settled, then no answer four times: five sends of one purchase carry its id, the seller settles once, the fifth gets the paid body; one transfer on chain', async () => {
  const [seller0, settled0] = [await world.balance(payTo), facilitator.settled.length];
  seller.state.stall = 4;
  const first = await errorOf(x402Fetch(alice.api, alice.profile, { url: `${seller.url}/once` }));
  expect(first.details).toMatchObject({ purchase_status: 'pending' });
  const fetchId = String(first.details.fetch_id);
  const retries: string[] = [];
  let done: Record<string, any> | null = null;
  for (let i = 0; i < 5 && !done; i++) {
    try {
      done = await alice.api.call<Record<string, any>>('bot', 'x402_settle', { fetch_id: fetchId });
    } catch (err) {
      retries.push((err as { errorCode: string }).errorCode);
    }
  }
  expect(retries).toEqual(['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
  expect(done).toMatchObject({ status: 'completed', purchase_status: 'completed' });
  expect(JSON.parse(done!.response.body)).toEqual({ content: 'bought once', n: 1 });
  // Every send carried the purchase's own id; the seller ran its paid handler and its facilitator settled once.
  expect(seller.state.ids).toEqual([fetchId, fetchId, fetchId, fetchId, fetchId]);
  expect(seller.state.paidHits).toBe(1);
  expect(facilitator.settled.length - settled0).toBe(1);
  expect(facilitator.settled.at(-1)).toBe(done!.signature);
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
  // Once completed, a settle answers the stored outcome without sending again.
  const again = await alice.api.call<Record<string, any>>('bot', 'x402_settle', { fetch_id: fetchId });
  expect(again).toMatchObject({ status: 'completed', signature: done!.signature });
  expect(seller.state.ids).toHaveLength(5);
}, 60_000);

test('the CLI killed after sending, then run again with its idempotency key: the same purchase, paid once', async () => {
  const [seller0, settled0, hits0] = [await world.balance(payTo), facilitator.settled.length, seller.state.ids.length];
  seller.state.stall = 1;
  const args = ['x402', 'fetch', `${seller.url}/once`, '--idempotency-key', 'order-77', '--server', world.url, '--home', alice.home, '--json'];
  const killed = Bun.spawn([process.execPath, MAIN, ...args], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } });
  const deadline = Date.now() + 20_000;
  while (seller.state.ids.length === hits0 && Date.now() < deadline) await Bun.sleep(20);
  killed.kill('SIGKILL');
  await killed.exited;
  // The daemon finishes the send it began (pending: the seller held the answer); the agent runs the same command again.
  let run: { code: number; json: any } = { code: -1, json: null };
  for (let i = 0; i < 10; i++) {
    const again = Bun.spawn([process.execPath, MAIN, ...args], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } });
    const [code, out] = await Promise.all([again.exited, new Response(again.stdout).text()]);
    run = { code, json: out ? JSON.parse(out) : null };
    if (code === 0) break;
    await Bun.sleep(500);
  }
  expect(run.code).toBe(0);
  expect(run.json).toMatchObject({ outcome: 'completed', purchase_status: 'completed' });
  expect(JSON.parse(run.json.response.body)).toMatchObject({ content: 'bought once' });
  const ids = seller.state.ids.slice(hits0);
  expect(new Set(ids).size).toBe(1);
  expect(ids[0]).toBe(run.json.fetch_id);
  expect(facilitator.settled.length - settled0).toBe(1);
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
}, 60_000);

test('a payment without an id is refused by a seller that requires one, and nothing is settled', async () => {
  const refused = seller.state.refusedWithoutId;
  const res = await fetch(`${seller.url}/once`, { headers: { 'payment-signature': Buffer.from(JSON.stringify({ x402Version: 2, accepted: {}, payload: { transaction: 'AA==' } })).toString('base64') } });
  expect(res.status).toBe(400);
  expect(seller.state.refusedWithoutId).toBe(refused + 1);
  const err = await errorOf(alice.api.call('bot', 'x402_settle', { fetch_id: 'x402_00000000000000000000000000' }));
  expect(err.errorCode).toBe('NOT_FOUND');
});
