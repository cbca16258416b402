/**
 * x402 at the edges of the outbound client: private-range URLs refused unless the operator allows
 * them, a stalled seller cut by the configured deadline, and a paid request whose answer never
 * comes — `pending`, never `failed`, resolved later from the chain (landed → completed; absent
 * after its blockhash expired → failed and released).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { ApiError } from '../../src/client/api.ts';
import { x402Fetch } from '../../src/client/x402.ts';
import { getTx } from '../../src/db/transactions.ts';
import { getPurchaseById, listCatalog } from '../../src/db/x402.ts';
import { addEntry } from '../../src/x402/catalog.ts';
import { resolvePendingPurchases } from '../../src/x402/purchase.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { sellerAddress, startFacilitator, startV2Seller, type Facilitator, type Server } from '../x402/sellers.ts';
import { errorOf } from '../helpers/errors.ts';


describe('without an allowlist', () => {
  let world: World;
  let alice: Agent;
  let seller: Server;

  beforeAll(async () => {
    world = await startWorld();
    alice = await world.agent('Alice', { claimBy: 'alice@example.com' });
    seller = await startV2Seller(world, await startFacilitator(world), { payTo: await sellerAddress(world) });
  });
  afterAll(async () => {
    await seller?.stop();
    await world?.stop();
  });

  test('private-range and metadata URLs are refused before anything is sent; nothing created', async () => {
    const port = new URL(seller.url).port;
    for (const url of [`${seller.url}/paid`, `http://[::1]:${port}/paid`, `http://0x7f.1:${port}/paid`, 'http://10.1.2.3/paid', 'http://169.254.169.254/latest/meta-data/', 'http://100.64.0.1/x']) {
      const err = await errorOf(alice.api.call('bot', 'x402_prepare', { url }));
      expect(err.errorCode).toBe('VALIDATION_ERROR');
      expect(err.message).toContain('refusing to contact');
      expect(err.howToFix).toContain('allow_hosts');
    }
    expect(seller.state.paidHits).toBe(0);
    expect((await alice.api.call<any>('bot', 'transactions', { type: 'x402' })).total).toBe(0);
  });
});

describe('with small deadlines (total 500 ms, connect 300 ms)', () => {
  let world: World;
  let alice: Agent;
  let facilitator: Facilitator;
  let payTo: Address;
  let seller: Server;

  beforeAll(async () => {
    // 20 ms slots: a blockhash lives 150 blocks = 3 s, so expiry is quick to reach.
    world = await startWorld({
      slotMs: 20,
      env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1', AGENT_WALLET_OUTBOUND_TOTAL_TIMEOUT_MS: '500', AGENT_WALLET_OUTBOUND_CONNECT_TIMEOUT_MS: '300' },
    });
    alice = await world.agent('Alice', { claimBy: 'alice@example.com' });
    await world.fund(alice.address, 5_000_000n);
    facilitator = await startFacilitator(world);
    payTo = await sellerAddress(world);
    seller = await startV2Seller(world, facilitator, { payTo });
  });
  afterAll(async () => {
    await seller?.stop();
    await world?.stop();
  });

  test('a seller that stalls for 30 s: a timeout error after the configured 500 ms, nothing created', async () => {
    const started = Date.now();
    const err = await errorOf(alice.api.call('bot', 'x402_prepare', { url: `${seller.url}/stall` }));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(err.errorCode).toBe('SERVICE_UNAVAILABLE');
    expect(err.status).toBe(504);
    expect(err.message).toContain('500 ms');
    expect((await alice.api.call<any>('bot', 'transactions', { type: 'x402' })).total).toBe(0);
  });

  test('the paid answer times out after the seller settled: pending (do not pay again), then completed from the chain', async () => {
    const seller0 = await world.balance(payTo);
    const err = await errorOf(x402Fetch(alice.api, alice.profile, { url: `${seller.url}/slow-settle` }));
    expect(err.errorCode).toBe('SERVICE_UNAVAILABLE');
    expect(err.howToFix).toContain('Do not pay again');
    expect(err.details).toMatchObject({ purchase_status: 'pending' });
    const fetchId = err.details.fetch_id as string;
    const p = (await getPurchaseById(world.services.db, fetchId))!;
    expect((await getTx(world.services.db, p.transaction_id))!.status).toBe('pending');

    // A repeated x402_settle looks the payment up on chain (the facilitator's signature is found
    // among the wallet's transactions) instead of sending anything again.
    let settled: any = null;
    const deadline = Date.now() + 10_000;
    while (!settled && Date.now() < deadline) {
      try {
        settled = await alice.api.call<any>('bot', 'x402_settle', { fetch_id: fetchId });
      } catch (e) {
        if (!(e instanceof ApiError) || e.details.purchase_status !== 'pending') throw e;
        await Bun.sleep(200);
      }
    }
    expect(settled).toMatchObject({ purchase_status: 'completed', status: 'completed', response: null });
    expect(facilitator.settled).toContain(settled.signature);
    expect((await world.balance(payTo)) - seller0).toBe(10_000n);
    expect(seller.state.paidHits).toBe(0);
  });

  test('the paid request vanishes without settlement: pending until the blockhash expires, then failed and released (job)', async () => {
    const balance0 = await world.balance(alice.address);
    const err = await errorOf(x402Fetch(alice.api, alice.profile, { url: `${seller.url}/black-hole` }));
    expect(err.details).toMatchObject({ purchase_status: 'pending' });
    const fetchId = err.details.fetch_id as string;
    const txId = (await getPurchaseById(world.services.db, fetchId))!.transaction_id;
    const still = await errorOf(alice.api.call('bot', 'x402_settle', { fetch_id: fetchId }));
    expect(still.details).toMatchObject({ purchase_status: 'pending' });

    const lastValid = (await getTx(world.services.db, txId))!.last_valid_block_height!;
    while (BigInt(world.simnet.blockHeight()) <= lastValid + 2n) await Bun.sleep(100);
    expect(await resolvePendingPurchases(world.services)).toBe(1);
    expect((await getTx(world.services.db, txId))!.status).toBe('failed');
    const final = await alice.api.call<any>('bot', 'x402_settle', { fetch_id: fetchId });
    expect(final).toMatchObject({ purchase_status: 'failed', status: 'failed', replayed: true });
    expect(final.error).toContain('blockhash expired');
    expect(await world.balance(alice.address)).toBe(balance0);
    const events = await alice.api.call<any>('bot', 'events', { types: ['payment.failed'] });
    expect(events.items.map((e: any) => e.data.transaction_id)).toContain(txId);
  });

  test('a seller that refuses the payment (402): not final while the signed bytes can land; released after expiry', async () => {
    const balance0 = await world.balance(alice.address);
    const r = await x402Fetch(alice.api, alice.profile, { url: `${seller.url}/refuse` });
    expect(r.outcome).toBe('pending');
    expect(r.response).toMatchObject({ status: 402 });
    expect(r.settled).toMatchObject({ purchase_status: 'pending', status: 'pending' });
    expect(r.settled!.error).toContain('invalid_exact_svm_payload_amount_mismatch');
    const txId = r.settled!.transaction_id as string;
    const lastValid = (await getTx(world.services.db, txId))!.last_valid_block_height!;
    while (BigInt(world.simnet.blockHeight()) <= lastValid + 2n) await Bun.sleep(100);
    const final = await alice.api.call<any>('bot', 'x402_settle', { fetch_id: r.fetch_id });
    expect(final).toMatchObject({ purchase_status: 'failed', status: 'failed' });
    expect(final.response.status).toBe(402);
    expect(await world.balance(alice.address)).toBe(balance0);
  });

  test('the catalog refuses a seller that stalls: the probe times out and nothing is stored', async () => {
    await expect(addEntry(world.services.config, world.services.db, { url: `${seller.url}/stall`, name: 'Stall', description: 'never answers', tags: [] })).rejects.toThrow('500 ms');
    expect(await listCatalog(world.services.db, { includeHidden: true })).toEqual([]);
  });
});
