/**
 * x402 purchases end to end on simnet: real sellers built from the official packages (v2: the
 * @x402/hono middleware; v1: by hand, settled by the @x402/svm facilitator), a real facilitator
 * paying fees from its own simnet keypair, the real client (FROST over HTTP, the message checked
 * before signing) and the real CLI. Loopback is allowlisted for the outbound client here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { type ApiClient } from '../../src/client/api.ts';
import { payPurchase, x402Fetch } from '../../src/client/x402.ts';
import { getTx } from '../../src/db/transactions.ts';
import { decodeMessage } from '../../src/solana/decode.ts';
import { runCli } from '../helpers/daemon.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { sellerAddress, startFacilitator, startV1Seller, startV2Seller, type Facilitator, type Server } from '../x402/sellers.ts';
import { errorOf } from '../helpers/errors.ts';

let world: World;
let alice: Agent;
let facilitator: Facilitator;
let payTo: Address;
let v2: Server;
let v1: Server;

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost' } });
  alice = await world.agent('Alice');
  await world.claim(alice.walletId, 'alice-owner@example.com');
  await world.fund(alice.address, 50_000_000n);
  facilitator = await startFacilitator(world);
  payTo = await sellerAddress(world);
  v2 = await startV2Seller(world, facilitator, { payTo });
  v1 = await startV1Seller(facilitator, { payTo, amount: '20000' });
});
afterAll(async () => {
  await v2?.stop();
  await v1?.stop();
  await world?.stop();
});


/** A claimed, funded agent with its own owner (rails of one test never touch another's). */
async function freshAgent(name: string): Promise<{ agent: Agent; owner: ApiClient }> {
  const agent = await world.agent(name);
  const owner = await world.claim(agent.walletId, `${name.toLowerCase()}-owner@example.com`);
  await world.fund(agent.address, 5_000_000n);
  return { agent, owner };
}

const txCount = async (a: Agent) => (await a.api.call<any>('bot', 'transactions', { type: 'x402' })).total as number;

describe('v2 seller (@x402/hono)', () => {
  test('a purchase: FROST-signed transfer settled by the facilitator, 200 with the paid body, seller +0.01 on chain', async () => {
    const [seller0, alice0] = await Promise.all([world.balance(payTo), world.balance(alice.address)]);
    const r = await x402Fetch(alice.api, alice.profile, { url: `${v2.url}/paid` });
    expect(r.outcome).toBe('completed');
    expect(r.response).toMatchObject({ status: 200, truncated: false });
    expect(JSON.parse(r.response!.body)).toMatchObject({ joke: 'a paid joke' });
    const [seller1, alice1] = await Promise.all([world.balance(payTo), world.balance(alice.address)]);
    expect(seller1 - seller0).toBe(10_000n);
    expect(alice0 - alice1).toBe(10_000n);
    // The facilitator settled exactly our transaction: the landed signature is its fee-payer signature.
    expect(facilitator.settled).toContain(r.settled!.signature);
    expect(r.settled).toMatchObject({ status: 'completed', purchase_status: 'completed', amount: 0.01, pay_to: payTo, fee_payer: facilitator.feePayer, x402_version: 2 });
    expect(r.settled!.payment_response).toMatchObject({ success: true, transaction: r.settled!.signature });

    // The signed message was the x402 exact layout with the facilitator as fee payer.
    const tx = (await getTx(world.services.db, r.settled!.transaction_id))!;
    const msg = decodeMessage(tx.message!);
    expect(msg.feePayer).toBe(facilitator.feePayer);
    expect(msg.instructions.map((i) => i.kind)).toEqual(['computeUnitLimit', 'computeUnitPrice', 'transferChecked', 'memo']);

    const events = await alice.api.call<any>('bot', 'events', { types: ['x402.settled', 'payment.completed'], limit: 50 });
    expect(events.items.map((e: any) => e.type)).toEqual(expect.arrayContaining(['x402.settled', 'payment.completed']));
    expect(events.items.find((e: any) => e.type === 'x402.settled').data).toMatchObject({ fetch_id: r.fetch_id, signature: r.settled!.signature, http_status: 200 });
    const history = await alice.api.call<any>('bot', 'transactions', { type: 'x402' });
    expect(history.items[0]).toMatchObject({ transaction_id: tx.transaction_id, type: 'x402', status: 'completed', amount: 0.01, fee: 0, signature: r.settled!.signature });

    // A repeated settle returns the stored outcome: same body, no second transfer.
    const again = await alice.api.call<any>('bot', 'x402_settle', { fetch_id: r.fetch_id });
    expect(again).toMatchObject({ replayed: true, purchase_status: 'completed', signature: r.settled!.signature });
    expect(again.response.body).toBe(r.response!.body);
    expect(await world.balance(payTo)).toBe(seller1);
    expect(v2.state.paidHits).toBe(1);
  });

  test('the CLI: x402 fetch with a method, headers and a body prints the paid answer (progress on stderr)', async () => {
    const res = await runCli(['x402', 'fetch', `${v2.url}/paid`, '--method', 'POST', '--header', 'X-Custom: yes', '--data', 'hello', '--server', world.url, '--home', alice.home]);
    expect(res.stderr).toContain('signing the payment');
    expect(res.stderr).toContain('paid 0.01 USDC');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ echo: 'hello', header: 'yes' });

    const json = await runCli(['x402', 'fetch', `${v2.url}/paid`, '--json', '--server', world.url, '--home', alice.home]);
    expect(json.code).toBe(0);
    expect(json.json).toMatchObject({ outcome: 'completed', status: 'completed', amount: 0.01, response: { status: 200 } });
  });

  test('a seller memo (extra.memo) is carried in the transfer the facilitator checks', async () => {
    const memoSeller = await startV2Seller(world, facilitator, { payTo, memo: 'order-42' });
    try {
      const r = await x402Fetch(alice.api, alice.profile, { url: `${memoSeller.url}/paid` });
      expect(r.outcome).toBe('completed');
      const msg = decodeMessage((await getTx(world.services.db, r.settled!.transaction_id))!.message!);
      expect(msg.instructions[3]).toEqual({ kind: 'memo', text: 'order-42' });
    } finally {
      await memoSeller.stop();
    }
  });

  test('x402_prepare is idempotent: the same key returns the same purchase, one transaction', async () => {
    const before = await txCount(alice);
    const a = await alice.api.call<any>('bot', 'x402_prepare', { url: `${v2.url}/paid` }, { idempotencyKey: 'x402-idem-1' });
    const b = await alice.api.call<any>('bot', 'x402_prepare', { url: `${v2.url}/paid` }, { idempotencyKey: 'x402-idem-1' });
    expect(b).toEqual(a);
    expect(a).toMatchObject({ payment_required: true, status: 'pre_approved', purchase_status: 'open' });
    expect(a.fetch_id).toMatch(/^x402_/);
    expect(await txCount(alice)).toBe(before + 1);
    await alice.api.call('bot', 'cancel_payment', { transaction_id: a.transaction_id });
  });
});

describe('misuse of the generic signing actions', () => {
  test('the generic signing actions refuse an x402 purchase (NOT_FOUND); x402_settle pays it', async () => {
    const prepared = await alice.api.call<any>('bot', 'x402_prepare', { url: `${v2.url}/paid` });
    // Confirm and sign with the real client, but stop before x402_settle.
    const signOnly = new Proxy(alice.api, {
      get: (target, prop) => (prop === 'call' ? (ep: any, action: string, params: any, o: any) => (action === 'x402_settle' ? Promise.resolve({}) : target.call(ep, action, params, o)) : Reflect.get(target, prop)),
    });
    await payPurchase(signOnly, alice.profile, prepared.fetch_id, prepared);
    // The partially signed bytes are the seller's facilitator's to send: the generic actions do not see them.
    for (const action of ['submit_signed_tx', 'confirm_payment']) {
      const refused = await errorOf(alice.api.call('bot', action, { transaction_id: prepared.transaction_id }));
      expect(refused.errorCode).toBe('NOT_FOUND');
    }
    const settled = await alice.api.call<any>('bot', 'x402_settle', { fetch_id: prepared.fetch_id });
    expect(settled).toMatchObject({ purchase_status: 'completed', status: 'completed', response: { status: 200 } });
    expect(facilitator.settled).toContain(settled.signature);
  });
});

describe('v1 seller (X-PAYMENT, settled by the @x402/svm facilitator)', () => {
  test('a v1 purchase: 200 with the paid body, seller +0.02 on chain', async () => {
    const seller0 = await world.balance(payTo);
    const r = await x402Fetch(alice.api, alice.profile, { url: `${v1.url}/v1-paid` });
    expect(r.outcome).toBe('completed');
    expect(r.prepared).toMatchObject({ x402_version: 1, network: 'solana-devnet', amount: 0.02 });
    expect(JSON.parse(r.response!.body)).toEqual({ v1: 'paid content' });
    expect((await world.balance(payTo)) - seller0).toBe(20_000n);
    expect(facilitator.settled).toContain(r.settled!.signature);
    expect(r.settled!.payment_response).toMatchObject({ success: true, network: 'solana-devnet' });
  });
});

describe('guard rails', () => {
  test('above x402_max_per_request → rejected by the rails, nothing signed', async () => {
    const { agent, owner } = await freshAgent('Maxie');
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { x402_max_per_request: '0.005' } });
    const r = await x402Fetch(agent.api, agent.profile, { url: `${v2.url}/paid` });
    expect(r.outcome).toBe('rejected');
    expect(r.prepared).toMatchObject({ status: 'rejected', decision: { rule: 'x402_max_per_request' } });
    expect((await getTx(world.services.db, r.prepared.transaction_id as string))!.message).toBeNull();
    const refused = await errorOf(agent.api.call('bot', 'x402_settle', { fetch_id: r.fetch_id }));
    expect(refused.errorCode).toBe('INVALID_STATUS');
    expect(await world.balance(agent.address)).toBe(5_000_000n);
  });

  test('x402_daily_per_host: purchases at a host pass up to the day’s budget; the next is rejected (reject mode), paid nothing; another host has its own', async () => {
    const { agent, owner } = await freshAgent('Hosta');
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { x402_daily_per_host: '0.015', on_budget_exceeded: 'reject' } });
    const first = await x402Fetch(agent.api, agent.profile, { url: `${v2.url}/paid` });
    expect(first.outcome).toBe('completed');
    const before = await world.balance(agent.address);
    const second = await x402Fetch(agent.api, agent.profile, { url: `${v2.url}/paid` });
    expect(second.outcome).toBe('rejected');
    expect(second.prepared).toMatchObject({ status: 'rejected', decision: { rule: 'x402_daily_per_host' } });
    expect(String((second.prepared.decision as { reason: string }).reason)).toContain('127.0.0.1');
    expect(await world.balance(agent.address)).toBe(before);
    // The same seller under another host name (localhost) starts its own day.
    const other = await x402Fetch(agent.api, agent.profile, { url: `${v2.url.replace('127.0.0.1', 'localhost')}/paid` });
    expect(other.outcome).toBe('completed');
  });

  test('above approval_above → awaiting_approval (CLI exit 5); after the owner approves, x402 resume pays', async () => {
    const { agent, owner } = await freshAgent('Appie');
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { approval_above: '0.005' } });
    const res = await runCli(['x402', 'fetch', `${v2.url}/paid`, '--json', '--server', world.url, '--home', agent.home]);
    expect(res.code).toBe(5);
    expect(res.json).toMatchObject({ outcome: 'awaiting_approval', status: 'awaiting_approval', decision: { rule: 'approval_above' } });
    expect((await getTx(world.services.db, res.json.transaction_id))!.message).toBeNull();
    const early = await errorOf(agent.api.call('bot', 'x402_settle', { fetch_id: res.json.fetch_id }));
    expect(early.errorCode).toBe('AWAITING_APPROVAL');
    await owner.call('owner', 'approve', { approval_id: res.json.approval_id });
    const resumed = await runCli(['x402', 'resume', res.json.fetch_id, '--json', '--server', world.url, '--home', agent.home]);
    expect(resumed.code).toBe(0);
    expect(resumed.json).toMatchObject({ outcome: 'completed', status: 'completed', response: { status: 200 } });
    expect(await world.balance(agent.address)).toBe(5_000_000n - 10_000n);
  });

  test('rails tightened after prepare apply at signing: the server refuses to sign, nothing moves', async () => {
    const { agent, owner } = await freshAgent('Tighty');
    const prepared = await agent.api.call<any>('bot', 'x402_prepare', { url: `${v2.url}/paid` });
    expect(prepared.status).toBe('pre_approved');
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { x402_max_per_request: '0.001' } });
    const err = await errorOf(payPurchase(agent.api, agent.profile, prepared.fetch_id, prepared));
    expect(err.errorCode).toBe('INVALID_STATUS');
    expect(err.details).toMatchObject({ rule: 'x402_max_per_request' });
    const tx = (await getTx(world.services.db, prepared.transaction_id))!;
    expect(tx.status).toBe('rejected');
    expect(tx.signed_tx).toBeNull();
    expect(await world.balance(agent.address)).toBe(5_000_000n);
  });

  test('x402_allowed_hosts: another host → rejected; the listed host passes at prepare and again at signing', async () => {
    const { agent, owner } = await freshAgent('Hosty');
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { x402_allowed_hosts: ['api.example.com'] } });
    const r = await x402Fetch(agent.api, agent.profile, { url: `${v2.url}/paid` });
    expect(r.outcome).toBe('rejected');
    expect(r.prepared).toMatchObject({ status: 'rejected', decision: { rule: 'x402_allowed_hosts' } });
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { x402_allowed_hosts: ['127.0.0.1'] } });
    const ok = await x402Fetch(agent.api, agent.profile, { url: `${v2.url}/paid` });
    expect(ok.outcome).toBe('completed');
  });
});

describe('what cannot be bought', () => {
  test('only another network offered → VALIDATION_ERROR naming what was offered; nothing created', async () => {
    const before = await txCount(alice);
    const err = await errorOf(alice.api.call('bot', 'x402_prepare', { url: `${v2.url}/eth-only` }));
    expect(err.errorCode).toBe('VALIDATION_ERROR');
    expect(err.message).toContain('eip155:8453');
    expect(err.howToFix).toContain('USDC');
    expect(err.details.offered).toEqual([expect.objectContaining({ network: 'eip155:8453' })]);
    expect(await txCount(alice)).toBe(before);
  });

  test('only a non-USDC asset offered → VALIDATION_ERROR naming the asset', async () => {
    const err = await errorOf(alice.api.call('bot', 'x402_prepare', { url: `${v2.url}/other-asset` }));
    expect(err.errorCode).toBe('VALIDATION_ERROR');
    expect(err.message).toContain('So11111111111111111111111111111111111111112');
  });

  test('a price above max_amount is refused before anything is created', async () => {
    const before = await txCount(alice);
    const err = await errorOf(alice.api.call('bot', 'x402_prepare', { url: `${v2.url}/paid`, max_amount: '0.001' }));
    expect(err.errorCode).toBe('VALIDATION_ERROR');
    expect(err.details).toMatchObject({ field: '/max_amount', price: 0.01, max_amount: 0.001 });
    expect(await txCount(alice)).toBe(before);
  });

  test("a seller whose pay_to has no USDC token account → INVALID_RECIPIENT, nothing created", async () => {
    const bare = await sellerAddress(world, false);
    const seller = await startV2Seller(world, facilitator, { payTo: bare });
    try {
      const before = await txCount(alice);
      const err = await errorOf(alice.api.call('bot', 'x402_prepare', { url: `${seller.url}/paid` }));
      expect(err.errorCode).toBe('INVALID_RECIPIENT');
      expect(err.message).toContain('token account');
      expect(await txCount(alice)).toBe(before);
    } finally {
      await seller.stop();
    }
  });

  test('a non-402 answer is returned as is: nothing to pay, nothing created', async () => {
    const res = await alice.api.call<any>('bot', 'x402_prepare', { url: `${v2.url}/free` });
    expect(res).toMatchObject({ payment_required: false, fetch_id: null, response: { status: 200, truncated: false } });
    expect(JSON.parse(res.response.body)).toEqual({ free: true });
    expect(res.response.headers['content-type']).toContain('application/json');
  });
});

describe('size caps', () => {
  test('a 10 MiB unpaid answer is cut at 64 KiB with truncated: true', async () => {
    const res = await alice.api.call<any>('bot', 'x402_prepare', { url: `${v2.url}/big` });
    expect(res.response).toMatchObject({ status: 200, truncated: true, body_bytes: 64 * 1024 });
  });

  test('a 10 MiB paid answer is paid and cut at 1 MiB with truncated: true', async () => {
    const r = await x402Fetch(alice.api, alice.profile, { url: `${v2.url}/big-paid` });
    expect(r.outcome).toBe('completed');
    expect(r.response).toMatchObject({ status: 200, truncated: true, body_bytes: 1024 * 1024 });
  });
});
