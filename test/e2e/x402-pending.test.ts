/**
 * Pending settlement (issue 28, item 2): a seller whose facilitator answers `settlement_pending`
 * (the official `@x402/hono` middleware passes it on as a 402 with the receipt) leaves the purchase
 * `pending` with that transaction — never `failed`, never paid again — and the chain decides:
 * landed → completed once; never sent → released once its blockhash expired, nothing paid.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { x402Fetch } from '../../src/client/x402.ts';
import { getTx } from '../../src/db/transactions.ts';
import { resolvePendingPurchases } from '../../src/x402/purchase.ts';
import { runCli } from '../helpers/daemon.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { pendingFacilitator, sellerAddress, startFacilitator, startV2Seller, type Facilitator, type Server } from '../x402/sellers.ts';

let world: World;
let alice: Agent;
let facilitator: Facilitator;
let pending: ReturnType<typeof pendingFacilitator>;
let payTo: Address;
let seller: Server;

beforeAll(async () => {
  // 20 ms slots: a blockhash lives 150 blocks = 3 s, so expiry is quick to reach.
  world = await startWorld({ slotMs: 20, env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  alice = await world.agent('Alice', { claimBy: 'alice@example.com' });
  await world.fund(alice.address, 10_000_000n);
  facilitator = await startFacilitator(world);
  pending = pendingFacilitator(facilitator);
  payTo = await sellerAddress(world);
  seller = await startV2Seller(world, pending.facilitator, { payTo });
});
afterAll(async () => {
  await seller?.stop();
  await world?.stop();
});

const paymentFailures = async (txId: string) =>
  ((await alice.api.call<any>('bot', 'events', { types: ['payment.failed'], limit: 100 })).items as any[]).filter((e) => e.data.transaction_id === txId).length;

test('settlement_pending, then landing: pending with the transaction (status and CLI say do not pay again), then completed once from the chain', async () => {
  const [seller0, alice0] = [await world.balance(payTo), await world.balance(alice.address)];
  const r = await x402Fetch(alice.api, alice.profile, { url: `${seller.url}/paid` });
  expect(r.outcome).toBe('pending');
  expect(r.response).toMatchObject({ status: 402 });
  expect(r.settled).toMatchObject({ purchase_status: 'pending', status: 'pending' });
  expect(r.settled!.error).toContain('settlement pending');
  expect(r.settled!.payment_response).toMatchObject({ success: false, errorReason: 'settlement_pending' });
  const txId = String(r.settled!.payment_response.transaction);
  expect(r.settled!.error).toContain(txId);
  expect(pending.held.size).toBe(1);

  const status = await alice.api.call<any>('bot', 'x402_status', { fetch_id: r.fetch_id });
  expect(status).toMatchObject({ purchase_status: 'pending', next_step: expect.stringContaining('pending, do not pay again') });
  const cli = await runCli(['x402', 'status', String(r.fetch_id), '--server', world.url, '--home', alice.home, '--json']);
  expect(cli.code).toBe(0);
  expect(cli.json).toMatchObject({ fetch_id: r.fetch_id, purchase_status: 'pending' });
  // The money stays reserved while pending: nothing moved yet.
  expect(await world.balance(alice.address)).toBe(alice0);

  expect(await pending.release()).toEqual([txId]);
  expect(await resolvePendingPurchases(world.services)).toBe(1);
  const done = await alice.api.call<any>('bot', 'x402_status', { fetch_id: r.fetch_id });
  expect(done).toMatchObject({ purchase_status: 'completed', status: 'completed', signature: txId });
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
  expect(alice0 - (await world.balance(alice.address))).toBe(10_000n);
  expect(await paymentFailures(done.transaction_id)).toBe(0);
  // Looked at again, nothing changes: one transfer, completed.
  expect(await resolvePendingPurchases(world.services)).toBe(0);
  expect((await alice.api.call<any>('bot', 'x402_settle', { fetch_id: r.fetch_id })).signature).toBe(txId);
}, 30_000);

test('settlement_pending that never lands: pending until the blockhash expired, then released, nothing paid', async () => {
  const [seller0, alice0] = [await world.balance(payTo), await world.balance(alice.address)];
  const r = await x402Fetch(alice.api, alice.profile, { url: `${seller.url}/paid` });
  expect(r.outcome).toBe('pending');
  const txId = r.settled!.transaction_id as string;
  const lastValid = (await getTx(world.services.db, txId))!.last_valid_block_height!;
  while (BigInt(world.simnet.blockHeight()) <= lastValid + 2n) await Bun.sleep(50);
  expect(await resolvePendingPurchases(world.services)).toBe(1);
  expect(await alice.api.call<any>('bot', 'x402_status', { fetch_id: r.fetch_id })).toMatchObject({ purchase_status: 'failed', status: 'failed' });
  pending.held.clear();
  expect(await world.balance(alice.address)).toBe(alice0);
  expect(await world.balance(payTo)).toBe(seller0);
}, 30_000);
