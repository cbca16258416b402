/**
 * The ledger tells the chain's truth (issue 20), driven through the real app and simnet as an
 * agent, an owner and a hostile x402 seller would: x402 outcomes decided by our own view of the
 * chain and our own signature only, rails at signing time, transfers between our own wallets
 * recorded on both sides, and no reservation held forever. Blocks are 50 ms here, so a blockhash
 * (150 blocks) expires in under 8 s.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { payPurchase, x402Fetch } from '../../src/client/x402.ts';
import { outstandingOut, getTx } from '../../src/db/transactions.ts';
import { getPurchaseById } from '../../src/db/x402.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { paymentHeader } from '../../src/x402/wire.ts';
import { resolvePendingPurchases } from '../../src/x402/purchase.ts';
import { errorOf } from '../helpers/errors.ts';
import { agentKey } from '../helpers/signing.ts';
import { ledgerBalance } from '../reliability/money-invariants.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { failedTransactionListing, sellerAddress, startFacilitator, startHostileSeller, startV2Seller, type Facilitator, type HostileSeller, type Server, signOnly } from '../x402/sellers.ts';
import { commit, signShare } from '../../src/frost/party.ts';
import { commitmentList } from '../../src/frost/commitments.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../../src/frost/wire.ts';
import { AGENT_ID, SERVER_ID } from '../../src/frost/ids.ts';

let world: World;
let facilitator: Facilitator;
let payTo: Address;
let hostile: HostileSeller;
let honest: Server;

beforeAll(async () => {
  world = await startWorld({ slotMs: 50, env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost' } });
  facilitator = await startFacilitator(world);
  payTo = await sellerAddress(world);
  hostile = await startHostileSeller(world, facilitator, { payTo, amount: '10000' });
  honest = await startV2Seller(world, facilitator, { payTo });
});
afterAll(async () => {
  await hostile?.stop();
  await honest?.stop();
  await world?.stop();
});

let n = 0;
/** A claimed agent with its own owner, funded with `usdc` (deposit recorded). */
async function freshAgent(usdc = 5_000_000n): Promise<{ agent: Agent; owner: ApiClient }> {
  const agent = await world.agent(`Truth ${++n}`);
  const owner = await world.claim(agent.walletId, `truth-${n}@example.com`);
  await world.fund(agent.address, usdc);
  await scanDeposits(world.services);
  return { agent, owner };
}

const ledgerOf = async (walletId: string): Promise<bigint> => await ledgerBalance(world.services.db, walletId);

async function expectLedgerIsChain(a: Agent): Promise<void> {
  expect({ wallet: a.username, ledger: await ledgerOf(a.walletId) }).toEqual({ wallet: a.username, ledger: await world.balance(a.address) });
}

/** Polls until the chain's block height is past `height`. */
async function heightPast(height: bigint): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (world.simnet.blockHeight() <= height + 1n) {
    if (Date.now() > deadline) throw new Error(`block height never passed ${height}`);
    await Bun.sleep(50);
  }
}

/** Sends the stored partially signed bytes of a purchase to the facilitator, as a seller holding them would. */
async function sellerSettlesStoredBytes(fetchId: string): Promise<string> {
  const p = (await getPurchaseById(world.services.db, fetchId))!;
  const tx = (await getTx(world.services.db, p.transaction_id))!;
  const header = paymentHeader(2, (JSON.parse(p.requirements) as { resource?: unknown }).resource, JSON.parse(p.accepted), Buffer.from(tx.signed_tx!).toString('base64'));
  const payload = JSON.parse(Buffer.from(header.value, 'base64').toString('utf8'));
  return hostile.settleHeld({ payload, accepted: payload.accepted });
}

describe('x402 outcome from the chain only', () => {
  test("a seller claiming a short lastValidBlockHeight refuses, then settles after that height: the purchase completes, never released", async () => {
    const { agent } = await freshAgent();
    const r = await x402Fetch(agent.api, agent.profile, { url: `${hostile.url}/short-claim` });
    expect(r.outcome).toBe('pending');
    const claimed = BigInt((JSON.parse((await getPurchaseById(world.services.db, r.fetch_id!))!.accepted) as { extra: { lastValidBlockHeight: string } }).extra.lastValidBlockHeight);
    await heightPast(claimed);
    // Past the seller's word, before our own expiry: still pending, the money still reserved.
    const early = await errorOf(agent.api.call('bot', 'x402_settle', { fetch_id: r.fetch_id }));
    expect(early.errorCode).toBe('SERVICE_UNAVAILABLE');
    expect((await getTx(world.services.db, r.prepared.transaction_id as string))!.status).toBe('pending');

    const landed = await hostile.settleHeld(hostile.held.at(-1)!);
    await resolvePendingPurchases(world.services);
    const settled = await agent.api.call<any>('bot', 'x402_settle', { fetch_id: r.fetch_id });
    expect(settled).toMatchObject({ purchase_status: 'completed', status: 'completed', signature: landed });
    expect(await world.balance(agent.address)).toBe(5_000_000n - 10_000n);
    expect(await outstandingOut(world.services.db, agent.walletId)).toBe(0n);
    await expectLedgerIsChain(agent);
  }, 60_000);

  test("a receipt naming another purchase's signature at the same price is not believed; the unsettled purchase is released at our own expiry", async () => {
    const { agent } = await freshAgent();
    const first = await x402Fetch(agent.api, agent.profile, { url: `${hostile.url}/steal` });
    const second = await x402Fetch(agent.api, agent.profile, { url: `${hostile.url}/steal` });
    expect(first.outcome).toBe('completed');
    expect(second.outcome).toBe('pending');
    expect(second.settled!.payment_response.transaction).toBe(first.settled!.signature);
    const tx = (await getTx(world.services.db, second.prepared.transaction_id as string))!;
    expect(tx).toMatchObject({ status: 'pending', signature: null });

    await heightPast(tx.last_valid_block_height!);
    await resolvePendingPurchases(world.services);
    expect((await getTx(world.services.db, tx.transaction_id))!.status).toBe('failed');
    expect((await getPurchaseById(world.services.db, second.fetch_id!))!.status).toBe('failed');
    expect(await outstandingOut(world.services.db, agent.walletId)).toBe(0n);
    expect(await world.balance(agent.address)).toBe(5_000_000n - 10_000n);
    await expectLedgerIsChain(agent);
  }, 60_000);
  test('a receipt naming a failed transaction that merely lists the wallet does not release the purchase; the held bytes landing later complete it', async () => {
    const { agent } = await freshAgent();
    hostile.fakeReceipt = await failedTransactionListing(world, agent.address);
    const r = await x402Fetch(agent.api, agent.profile, { url: `${hostile.url}/fake-receipt` });
    expect(r.outcome).toBe('pending');
    expect((await getTx(world.services.db, r.prepared.transaction_id as string))!.status).toBe('pending');
    const landed = await hostile.settleHeld(hostile.held.at(-1)!);
    await resolvePendingPurchases(world.services);
    expect(await getPurchaseById(world.services.db, r.fetch_id!)).toMatchObject({ status: 'completed', signature: landed });
    expect(await world.balance(agent.address)).toBe(5_000_000n - 10_000n);
    await expectLedgerIsChain(agent);
  }, 60_000);
});

describe('the height is read before the look (issue 21)', () => {
  test('a transfer that lands between the height read and the look, answered from a node already past expiry, is found, not released', async () => {
    const { agent } = await freshAgent();
    const r = await x402Fetch(agent.api, agent.profile, { url: `${hostile.url}/short-claim` });
    expect(r.outcome).toBe('pending');
    const tx = (await getTx(world.services.db, r.prepared.transaction_id as string))!;
    const chain = world.services.chain;
    const realHeight = chain.getBlockHeight;
    // The height comes from a node past the expiry; the seller lands the bytes just as it is read.
    chain.getBlockHeight = async () => {
      await hostile.settleHeld(hostile.held.at(-1)!);
      return tx.last_valid_block_height! + 1n;
    };
    try {
      await resolvePendingPurchases(world.services);
    } finally {
      chain.getBlockHeight = realHeight;
    }
    expect((await getPurchaseById(world.services.db, r.fetch_id!))!.status).toBe('completed');
    expect((await getTx(world.services.db, tx.transaction_id))!.status).toBe('completed');
    await expectLedgerIsChain(agent);
  }, 60_000);
});

describe('nothing reserved forever: a signed, never settled x402 purchase ends with its blockhash', () => {
  /** Signed, never sent to the seller: one stays absent, the other's bytes are landed by whoever held them. Both wait for one expiry. */
  let absent: { agent: Agent; fetchId: string; txId: string };
  let landed: { agent: Agent; fetchId: string; txId: string; signature: string };
  const signedOnly = async () => {
    const { agent } = await freshAgent();
    const prepared = await agent.api.call<any>('bot', 'x402_prepare', { url: `${honest.url}/paid` });
    await payPurchase(signOnly(agent.api), agent.profile, prepared.fetch_id, prepared);
    return { agent, fetchId: prepared.fetch_id as string, txId: prepared.transaction_id as string };
  };
  beforeAll(async () => {
    absent = await signedOnly();
    const held = await signedOnly();
    landed = { ...held, signature: await sellerSettlesStoredBytes(held.fetchId) };
  });

  test('absent from the chain → released', async () => {
    const tx = (await getTx(world.services.db, absent.txId))!;
    expect(tx.status).toBe('pending');
    expect(await outstandingOut(world.services.db, absent.agent.walletId)).toBe(10_000n);

    await heightPast((await getTx(world.services.db, landed.txId))!.last_valid_block_height!);
    await heightPast(tx.last_valid_block_height!);
    expect(await resolvePendingPurchases(world.services)).toBeGreaterThanOrEqual(1);
    expect((await getPurchaseById(world.services.db, absent.fetchId))!.status).toBe('failed');
    expect((await getTx(world.services.db, tx.transaction_id))!.status).toBe('failed');
    expect(await outstandingOut(world.services.db, absent.agent.walletId)).toBe(0n);
    await expectLedgerIsChain(absent.agent);
  }, 60_000);

  test('landed by whoever held the bytes → completed', async () => {
    await heightPast((await getTx(world.services.db, landed.txId))!.last_valid_block_height!);
    await resolvePendingPurchases(world.services);
    expect(await getPurchaseById(world.services.db, landed.fetchId)).toMatchObject({ status: 'completed', signature: landed.signature });
    expect(await getTx(world.services.db, landed.txId)).toMatchObject({ status: 'completed', signature: landed.signature });
    expect(await outstandingOut(world.services.db, landed.agent.walletId)).toBe(0n);
    await expectLedgerIsChain(landed.agent);
  }, 60_000);

  test('a purchase released on a view the chain then contradicts is completed by the sweep, its budget charged again', async () => {
    const { agent, owner } = await freshAgent();
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { budgets: { daily: '1' } } });
    const prepared = await agent.api.call<any>('bot', 'x402_prepare', { url: `${honest.url}/paid` });
    await payPurchase(signOnly(agent.api), agent.profile, prepared.fetch_id, prepared);
    const reserved = (await agent.api.call<any>('bot', 'my_limits')).remaining;
    // Released (as a lagging node's view would have it) while the seller still holds the bytes.
    const now = Date.now();
    await world.services.db.transaction(async () => {
      await world.services.db.run("UPDATE transactions SET status = 'failed', error = 'released', updated_at = ? WHERE transaction_id = ?", now, prepared.transaction_id);
      await world.services.db.run("UPDATE x402_purchases SET status = 'failed', updated_at = ? WHERE fetch_id = ?", now, prepared.fetch_id);
    });
    expect((await agent.api.call<any>('bot', 'my_limits')).remaining).not.toEqual(reserved);
    const landed = await sellerSettlesStoredBytes(prepared.fetch_id);
    await resolvePendingPurchases(world.services);
    expect(await getTx(world.services.db, prepared.transaction_id)).toMatchObject({ status: 'completed', signature: landed });
    expect((await getPurchaseById(world.services.db, prepared.fetch_id))!.status).toBe('completed');
    expect((await agent.api.call<any>('bot', 'my_limits')).remaining).toEqual(reserved);
    await expectLedgerIsChain(agent);
  }, 60_000);
});

/** confirm, then frost_sign_init; returns what frost_sign_complete needs, or the refusal. */
async function confirmAndInit(a: Agent, txId: string) {
  await a.api.call('bot', 'confirm_payment', { transaction_id: txId });
  const key = agentKey(a.profile);
  const { nonces, commitments } = commit(key);
  const init = await a.api.call<{ sign_session_id: string; server_commitments: unknown; message: string }>('bot', 'frost_sign_init', { transaction_id: txId, commitments: encodeCommitments(commitments) });
  const share = signShare(key, nonces, commitmentList(commitments, decodeCommitments(init.server_commitments, SERVER_ID)), new Uint8Array(Buffer.from(init.message, 'base64')));
  return { sign_session_id: init.sign_session_id, signature_share: encodeSignatureShare(AGENT_ID, share) };
}

describe('rules at signing time are the rules', () => {
  test("paid by address, then the owner blocks that wallet's username: refused at signing, nothing moves", async () => {
    const { agent, owner } = await freshAgent();
    const { agent: bob } = await freshAgent(0n);
    const intent = await agent.api.call<any>('bot', 'pay', { to: bob.address, amount: 1 });
    expect(intent.status).toBe('pre_approved');
    await agent.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { blocked_recipients: [bob.username] } });
    const refused = await errorOf(confirmSignSubmit(agent.api, agent.profile, intent.transaction_id));
    expect(refused.errorCode).toBe('INVALID_STATUS');
    expect(refused.details).toMatchObject({ rule: 'blocked_recipients' });
    expect((await getTx(world.services.db, intent.transaction_id))!.status).toBe('rejected');
    expect(await world.balance(bob.address)).toBe(0n);
  }, 30_000);

  test('allowed_recipients naming a username lets a payment to its address through confirm and signing', async () => {
    const { agent, owner } = await freshAgent();
    const { agent: bob } = await freshAgent(0n);
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { allowed_recipients: [bob.username] } });
    const intent = await agent.api.call<any>('bot', 'pay', { to: bob.address, amount: 1 });
    expect(intent.status).toBe('pre_approved');
    const done = await confirmSignSubmit(agent.api, agent.profile, intent.transaction_id);
    expect(done.status).toBe('completed');
    expect(await world.balance(bob.address)).toBe(1_000_000n);
  }, 30_000);

  test('rails tightened after confirm so the payment needs approval: frost_sign_init sends it to the owner (approval + mail), then it pays once approved', async () => {
    const { agent, owner } = await freshAgent();
    const { agent: bob } = await freshAgent(0n);
    const intent = await agent.api.call<any>('bot', 'pay', { to: bob.username, amount: 2 });
    await agent.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
    const mails = async () => ((await world.services.db.get("SELECT count(*) AS n FROM mail_outbox WHERE kind = 'approval' AND to_addr = ?", `truth-${n - 1}@example.com`)) as { n: bigint }).n;
    const mails0 = await mails();
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { approval_above: '1' } });
    const held = await errorOf(agent.api.call('bot', 'frost_sign_init', { transaction_id: intent.transaction_id, commitments: encodeCommitments(commit(agentKey(agent.profile)).commitments) }));
    expect(held.errorCode).toBe('AWAITING_APPROVAL');
    const tx = (await getTx(world.services.db, intent.transaction_id))!;
    expect(tx).toMatchObject({ status: 'awaiting_approval', signed_tx: null });
    expect(held.details.approval_id).toBe(tx.approval_id!);
    expect(await mails()).toBe(mails0 + 1n);
    expect(await world.balance(bob.address)).toBe(0n);

    await owner.call('owner', 'approve', { approval_id: tx.approval_id });
    const done = await confirmSignSubmit(agent.api, agent.profile, intent.transaction_id);
    expect(done.status).toBe('completed');
    expect(await world.balance(bob.address)).toBe(2_000_000n);
  }, 30_000);

  test('rails tightened between frost_sign_init and frost_sign_complete: the share is refused and the payment awaits the owner', async () => {
    const { agent, owner } = await freshAgent();
    const { agent: bob } = await freshAgent(0n);
    const intent = await agent.api.call<any>('bot', 'pay', { to: bob.username, amount: 2 });
    const share = await confirmAndInit(agent, intent.transaction_id);
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { approval_above: '1' } });
    const held = await errorOf(agent.api.call('bot', 'frost_sign_complete', { transaction_id: intent.transaction_id, ...share }));
    expect(held.errorCode).toBe('AWAITING_APPROVAL');
    expect(await getTx(world.services.db, intent.transaction_id)).toMatchObject({ status: 'awaiting_approval', signed_tx: null, signature: null });
    expect(await world.balance(bob.address)).toBe(0n);
  }, 30_000);
});

describe('transfers between our own wallets are recorded on both sides', () => {
  test("a withdrawal to one of our wallets' addresses: the recipient's incoming row, payment.received, its fund request fulfilled", async () => {
    const { agent, owner } = await freshAgent(10_000_000n);
    const { agent: bob } = await freshAgent(0n);
    const fr = await bob.api.call<any>('bot', 'request_funds', { amount: 3, reason: 'for an API' });
    const w = await agent.api.call<any>('bot', 'withdraw', { to_address: bob.address, amount: 3, reason: 'to a sibling wallet' });
    await owner.call('owner', 'approve', { approval_id: w.approval_id });
    const done = await confirmSignSubmit(agent.api, agent.profile, w.transaction_id, { confirmAction: 'confirm_withdrawal' });
    expect(done.status).toBe('completed');
    await scanDeposits(world.services);
    const incoming = await bob.api.call<any>('bot', 'transactions', {});
    expect(incoming.items).toEqual([expect.objectContaining({ direction: 'in', status: 'completed', amount: 3, signature: done.signature })]);
    const events = await bob.api.call<any>('bot', 'events', { types: ['payment.received', 'fund_request.fulfilled'], limit: 10 });
    expect(events.items.map((e: any) => e.type).sort()).toEqual(['fund_request.fulfilled', 'payment.received']);
    const requests = await bob.api.call<any>('bot', 'list_fund_requests', {});
    expect(requests.items.find((r: any) => r.fund_request_id === fr.fund_request_id)).toMatchObject({ status: 'fulfilled' });
    await expectLedgerIsChain(bob);
    await expectLedgerIsChain(agent);
  }, 30_000);

  test("an x402 seller whose payTo is one of our wallets: the recipient's ledger records it", async () => {
    const { agent } = await freshAgent();
    const { agent: bob } = await freshAgent(0n);
    const seller = await startV2Seller(world, facilitator, { payTo: bob.address });
    try {
      await world.fund(bob.address, 0n);
      await scanDeposits(world.services);
      const r = await x402Fetch(agent.api, agent.profile, { url: `${seller.url}/paid` });
      expect(r.outcome).toBe('completed');
      await scanDeposits(world.services);
      const incoming = await bob.api.call<any>('bot', 'transactions', {});
      expect(incoming.items).toEqual([expect.objectContaining({ direction: 'in', amount: 0.01, signature: r.settled!.signature })]);
      await expectLedgerIsChain(bob);
      await expectLedgerIsChain(agent);
    } finally {
      await seller.stop();
    }
  }, 30_000);

  test('a merchant whose payout address is one of our wallets: the merchant sees the payment and the wallet records it', async () => {
    const { agent } = await freshAgent();
    const { agent: bob } = await freshAgent(0n);
    await world.fund(bob.address, 0n);
    await scanDeposits(world.services);
    const shop = await new ApiClient(world.url).call<any>('merchant', 'register', { name: 'Bob Shop', username: `bob-shop-${n}`, payout_address: bob.address });
    const intent = await agent.api.call<any>('bot', 'pay', { to: `bob-shop-${n}`, amount: 1, reference: 'order-1' });
    const done = await confirmSignSubmit(agent.api, agent.profile, intent.transaction_id);
    expect(done.status).toBe('completed');
    await scanDeposits(world.services);
    expect((await new ApiClient(world.url, shop.api_key).call<any>('merchant', 'verify', { reference: 'order-1' })).paid).toBe(true);
    const incoming = await bob.api.call<any>('bot', 'transactions', {});
    expect(incoming.items).toEqual([expect.objectContaining({ direction: 'in', amount: 1, signature: done.signature })]);
    await expectLedgerIsChain(bob);
    await expectLedgerIsChain(agent);
  }, 30_000);
});
