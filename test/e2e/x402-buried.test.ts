/**
 * A landed x402 payment buried in the wallet's history (issue 40, item 6): a purchase whose
 * transfer landed, then 101+ other transactions touching the wallet (dust anyone can send), then
 * its blockhash expired — the outcome job must still find it (the seller's receipt looked up by
 * its own signature; without a receipt, the history paged back to the purchase's creation) and
 * complete it, never release the budget of money that left.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { x402Fetch } from '../../src/client/x402.ts';
import { getTx } from '../../src/db/transactions.ts';
import { resolvePendingPurchases } from '../../src/x402/purchase.ts';
import { errorOf } from '../helpers/errors.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { pendingFacilitator, sellerAddress, startFacilitator, startIdentifierSeller, startV2Seller, type Facilitator, type Server } from '../x402/sellers.ts';

const DUST = 101;

let world: World;
let alice: Agent;
let facilitator: Facilitator;
let pending: ReturnType<typeof pendingFacilitator>;
let payTo: Address;
let slow: Server;
let stalling: Awaited<ReturnType<typeof startIdentifierSeller>>;

beforeAll(async () => {
  // 20 ms slots: a blockhash lives 150 blocks = 3 s. The buyer gives up on an answer after 1.5 s.
  world = await startWorld({
    slotMs: 20,
    env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1', AGENT_WALLET_OUTBOUND_CONNECT_TIMEOUT_MS: '1000', AGENT_WALLET_OUTBOUND_TOTAL_TIMEOUT_MS: '1500' },
  });
  alice = await world.agent('Alice', { claimBy: 'alice@example.com' });
  await world.fund(alice.address, 10_000_000n);
  facilitator = await startFacilitator(world);
  pending = pendingFacilitator(facilitator);
  payTo = await sellerAddress(world);
  slow = await startV2Seller(world, pending.facilitator, { payTo });
  stalling = await startIdentifierSeller(world, facilitator, { payTo, stallMs: 2_500 });
});
afterAll(async () => {
  await slow?.stop();
  await stalling?.stop();
  await world?.stop();
});

/** DUST one-micro-USDC transfers into the wallet from simnet's faucet: each a transaction touching the wallet. */
async function bury(address: Address): Promise<void> {
  for (let i = 0; i < DUST; i++) await world.fund(address, 1n);
}

async function pastBlockhash(transactionId: string): Promise<void> {
  const lastValid = (await getTx(world.services.db, transactionId))!.last_valid_block_height!;
  const height = BigInt(world.simnet.blockHeight());
  if (height <= lastValid + 2n) world.simnet.skipBlocks(Number(lastValid + 3n - height));
}

test('settlement_pending, landed, then 101 dust transfers and the blockhash expired: completed from the receipt\'s own signature, not released', async () => {
  const [seller0, alice0] = [await world.balance(payTo), await world.balance(alice.address)];
  const r = await x402Fetch(alice.api, alice.profile, { url: `${slow.url}/paid` });
  expect(r.outcome).toBe('pending');
  const txId = String(r.settled!.payment_response.transaction);
  expect(await pending.release()).toEqual([txId]);
  await bury(alice.address);
  await pastBlockhash(r.settled!.transaction_id);
  await resolvePendingPurchases(world.services);
  const done = await alice.api.call<any>('bot', 'x402_status', { fetch_id: r.fetch_id });
  expect(done).toMatchObject({ purchase_status: 'completed', status: 'completed', signature: txId });
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
  expect(alice0 + BigInt(DUST) - (await world.balance(alice.address))).toBe(10_000n);
}, 60_000);

test('an answer lost after settlement, then 101 dust transfers and the blockhash expired: completed from the history paged back to the purchase, not released', async () => {
  const [seller0, alice0] = [await world.balance(payTo), await world.balance(alice.address)];
  stalling.state.stall = 1;
  const lost = await errorOf(x402Fetch(alice.api, alice.profile, { url: `${stalling.url}/once` }));
  expect(lost.details).toMatchObject({ purchase_status: 'pending' });
  const fetchId = String(lost.details.fetch_id);
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
  await bury(alice.address);
  await pastBlockhash(String(lost.details.transaction_id));
  await resolvePendingPurchases(world.services);
  const done = await alice.api.call<any>('bot', 'x402_status', { fetch_id: fetchId });
  expect(done).toMatchObject({ purchase_status: 'completed', status: 'completed', signature: facilitator.settled.at(-1) });
  expect(alice0 + BigInt(DUST) - (await world.balance(alice.address))).toBe(10_000n);
  const failures = (await alice.api.call<any>('bot', 'events', { types: ['payment.failed'], limit: 100 })).items as unknown[];
  expect(failures).toHaveLength(0);
}, 60_000);

test('an unresolved purchase among 101 dust transfers: a second outcome pass reads no transaction the first found not ours', async () => {
  await bury(alice.address);
  const r = await x402Fetch(alice.api, alice.profile, { url: `${slow.url}/paid` });
  expect(r.outcome).toBe('pending');
  await resolvePendingPurchases(world.services);
  world.simnet.resetStats();
  await resolvePendingPurchases(world.services);
  // At most the receipt's own signature is read again; the dust was read once, by the first pass.
  expect(world.simnet.stats().calls.getTransaction ?? 0).toBeLessThanOrEqual(1);
  pending.held.clear();
}, 60_000);
