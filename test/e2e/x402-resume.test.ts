/**
 * A paid answer lost after settlement is fetched again (issue 40, item 8): while a purchase from a
 * seller that declared payment-identifier holds no 2xx answer, `x402 resume` resends the same
 * signed bytes under the same identifier and the seller answers without charging again — also
 * after the outcome job completed the purchase from the chain, and after a gateway's 502.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { x402Fetch, x402Resume } from '../../src/client/x402.ts';
import { resolvePendingPurchases } from '../../src/x402/purchase.ts';
import { runCli } from '../helpers/daemon.ts';
import { errorOf } from '../helpers/errors.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { sellerAddress, startFacilitator, startIdentifierSeller, type Facilitator } from '../x402/sellers.ts';

// The buyer gives up on an answer after 1.5 s; the seller holds a stalled one for 2.5 s.
const env = { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1', AGENT_WALLET_OUTBOUND_CONNECT_TIMEOUT_MS: '1000', AGENT_WALLET_OUTBOUND_TOTAL_TIMEOUT_MS: '1500' };

let world: World;
let alice: Agent;
let facilitator: Facilitator;
let payTo: Address;
let seller: Awaited<ReturnType<typeof startIdentifierSeller>>;

beforeAll(async () => {
  world = await startWorld({ env });
  alice = await world.agent('Alice', { claimBy: 'alice@example.com' });
  await world.fund(alice.address, 10_000_000n);
  facilitator = await startFacilitator(world);
  payTo = await sellerAddress(world);
  seller = await startIdentifierSeller(world, facilitator, { payTo, stallMs: 2_500 });
});
afterAll(async () => {
  await seller?.stop();
  await world?.stop();
});

const body = (r: { response: Record<string, any> | null }) => (r.response ? JSON.parse(String(r.response.body)) : null);

test('answer lost, the outcome job completes the purchase from the chain, then x402 resume gets the seller\'s answer; paid once', async () => {
  const [seller0, settled0, hits0] = [await world.balance(payTo), facilitator.settled.length, seller.state.paidHits];
  seller.state.stall = 1;
  const lost = await errorOf(x402Fetch(alice.api, alice.profile, { url: `${seller.url}/once` }));
  const fetchId = String(lost.details.fetch_id);
  expect(await resolvePendingPurchases(world.services)).toBe(1);
  const completed = await alice.api.call<any>('bot', 'x402_status', { fetch_id: fetchId });
  expect(completed).toMatchObject({ purchase_status: 'completed', response: null });

  const resumed = await x402Resume(alice.api, alice.profile, fetchId);
  expect(resumed.outcome).toBe('completed');
  expect(resumed.response).toMatchObject({ status: 200 });
  expect(body(resumed)).toEqual({ content: 'bought once', n: hits0 + 1 });
  // The CLI's resume now replays the stored answer without sending again.
  const sends = seller.state.ids.length;
  const cli = await runCli(['x402', 'resume', fetchId, '--server', world.url, '--home', alice.home, '--json']);
  expect(cli.code).toBe(0);
  expect(JSON.parse(cli.json.response.body)).toEqual({ content: 'bought once', n: hits0 + 1 });
  expect(seller.state.ids.length).toBe(sends);
  expect(seller.state.paidHits - hits0).toBe(1);
  expect(facilitator.settled.length - settled0).toBe(1);
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
}, 60_000);

test('a gateway answers 502 after the settlement, then x402 resume gets the 200; paid once', async () => {
  const [seller0, settled0, alice0] = [await world.balance(payTo), facilitator.settled.length, await world.balance(alice.address)];
  seller.state.badGateway = 1;
  const first = await x402Fetch(alice.api, alice.profile, { url: `${seller.url}/once` });
  expect(first.outcome).toBe("completed");
  expect(first.response).toMatchObject({ status: 502 });
  const resumed = await x402Resume(alice.api, alice.profile, String(first.fetch_id));
  expect(resumed.response).toMatchObject({ status: 200 });
  expect(body(resumed)).toMatchObject({ content: 'bought once' });
  expect(await alice.api.call<any>('bot', 'x402_status', { fetch_id: first.fetch_id })).toMatchObject({ purchase_status: 'completed', response: { status: 200 } });
  expect(facilitator.settled.length - settled0).toBe(1);
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
  expect(alice0 - (await world.balance(alice.address))).toBe(10_000n);
}, 60_000);
