/**
 * Merchant paylinks on simnet (SPEC: "an agent or merchant can create payment requests"): a
 * merchant creates a paylink paying its payout address; a human pays it from the Solana Pay URL
 * with a plain @solana/kit wallet, or an agent pays it with pay {payment_request_id} through the
 * real client (FROST over HTTP). Either way verify finds the order by its reference, history and
 * balance count it once, the merchant's feed and its signed webhook say payment_request.paid, and
 * one reference is never paid twice. Merchants see only their own paylinks and events.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { ApiClient } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { scanPaylink } from '../../src/earning/scan.ts';
import { deliverDueWebhooks } from '../../src/webhooks/deliver.ts';
import { SolanaPayWallet } from '../earning/solana-pay-client.ts';
import { runCli } from '../helpers/daemon.ts';
import { errorOf } from '../helpers/errors.ts';
import { tempDir } from '../helpers/services.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { randomAddress, startReceiver, verifyStandardWebhook, type Receiver } from '../webhooks/receiver.ts';

let world: World;
let alice: Agent;
let human: SolanaPayWallet;
let receiver: Receiver;
let shop: { api: ApiClient; data: any; payout: string };
let other: { api: ApiClient; data: any };

async function registerMerchant(name: string, username: string, payout: string, webhookUrl?: string) {
  const data = await new ApiClient(world.url).call<any>('merchant', 'register', { name, username, payout_address: payout, ...(webhookUrl ? { webhook_url: webhookUrl } : {}) });
  return { api: new ApiClient(world.url, data.api_key), data };
}

const shopCall = (action: string, params: Record<string, unknown> = {}) => shop.api.call<any>('merchant', action, params);

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  alice = await world.agent('Alice', { claimBy: 'alice-owner@example.com' });
  await world.fund(alice.address, 100_000_000n);
  human = await SolanaPayWallet.create(world.simnet.url);
  await world.simnet.faucet(human.address, 100_000_000n, 1_000_000_000n);
  receiver = startReceiver();
  const payout = randomAddress();
  shop = { ...(await registerMerchant('Corner Shop', 'corner-shop', payout, receiver.url)), payout };
  other = await registerMerchant('Other Shop', 'other-shop', randomAddress());
});
afterAll(async () => {
  receiver.stop();
  await world.stop();
});

describe('a merchant paylink paid by a human with Solana Pay', () => {
  let link: any;

  test('it pays the payout address: checkout shows the merchant, the Solana Pay URL names the payout address', async () => {
    link = await shopCall('create_payment_request', { description: 'Order ord-1', items: [{ description: 'Tea', price: '2.5', quantity: 2 }], reference: 'ord-1' });
    expect(link.request_id).toMatch(/^req_[0-9a-z]{26}$/);
    expect(link).toMatchObject({ status: 'open', amount: 5, reference: 'ord-1', pay_to: shop.payout });
    expect(link.solana_pay_url).toStartWith(`solana:${shop.payout}?amount=5&`);
    const checkout = await new ApiClient(world.url).call<any>('public', 'pay', { short_code: link.short_code });
    expect(checkout).toMatchObject({ payee: { name: 'Corner Shop', username: 'corner-shop', kind: 'merchant' }, pay_to: shop.payout, status: 'open' });
    // The payout address was made payable for Solana Pay wallets before the link was handed out.
    expect(await world.services.chain.accountExists(shop.payout as never)).toBe(true);
    expect(await world.services.chain.tokenAccountExists(shop.payout as never, world.simnet.mint as never)).toBe(true);
  });

  test('the payment marks it paid; verify, history and balance count it once; the signed webhook says payment_request.paid', async () => {
    const signature = await human.payUrl(link.solana_pay_url);
    await scanPaylink(world.services, link.request_id);
    await scanPaylink(world.services, link.request_id);
    const paid = await shopCall('get_payment_request', { reference: 'ord-1' });
    expect(paid).toMatchObject({ request_id: link.request_id, status: 'paid', paid_via: 'solana_pay', payer: human.address, signature, paid_amount: 5, transaction_id: null });
    expect(await world.balance(shop.payout as never)).toBe(5_000_000n);

    expect(await shopCall('verify', { reference: 'ord-1', expected_amount: '5' })).toMatchObject({
      paid: true,
      status: 'paid',
      amount: 5,
      via: 'solana_pay',
      payer: null,
      payer_address: human.address,
      signature,
      payment_request_id: link.request_id,
      transaction_id: null,
    });
    const history = await shopCall('history');
    expect(history.total).toBe(1);
    expect(history.items[0]).toMatchObject({ reference: 'ord-1', amount: 5, via: 'solana_pay', signature });
    expect(await shopCall('balance')).toMatchObject({ balance: 5, total_received: 5, payments_received: 1 });

    const events = await shopCall('events', { types: ['payment_request.created', 'payment_request.paid'] });
    expect(events.items.map((e: any) => e.type)).toEqual(['payment_request.created', 'payment_request.paid']);
    expect(events.items[1].data).toMatchObject({ request_id: link.request_id, reference: 'ord-1', amount: 5, payer: human.address, signature, via: 'solana_pay' });

    await deliverDueWebhooks(world.services);
    const hooks = receiver.requests.map((r) => ({ body: JSON.parse(r.body), raw: r.body, headers: r.headers }));
    expect(hooks.map((h) => h.body.type)).toEqual(['webhook.test', 'payment_request.paid']);
    expect(hooks[1]!.body).toMatchObject({ event_id: events.items[1].event_id, data: { request_id: link.request_id, reference: 'ord-1', amount: 5, signature } });
    expect(await verifyStandardWebhook(shop.data.webhook.secret, hooks[1]!.headers, hooks[1]!.raw, Math.floor(Date.now() / 1000))).toBe(true);
    // Its signed receipt, on the webhook and from get_receipt, verifies with jose against the published key.
    const jwks = createLocalJWKSet((await (await fetch(`${new URL(world.url).origin}/.well-known/agent-wallet/log-key`)).json()) as JSONWebKeySet);
    const fromApi = (await shopCall('get_receipt', { transaction_id: link.request_id })).receipt;
    for (const jws of [fromApi, hooks[1]!.body.data.receipt]) {
      const claims = JSON.parse(new TextDecoder().decode((await compactVerify(jws, jwks)).payload));
      expect(claims).toMatchObject({ sub: link.request_id, kind: 'paylink_payment', amount: '5', reference: 'ord-1', signature, from: { address: human.address }, to: { address: shop.payout } });
    }
  });

  test('the reference is spent: a new paylink and a direct agent payment with ord-1 are refused and change nothing', async () => {
    const again = await errorOf(shopCall('create_payment_request', { description: 'Again', amount: '5', reference: 'ord-1' }));
    expect(again).toMatchObject({ errorCode: 'INVALID_STATUS', status: 409 });
    expect(again.message).toContain(link.request_id);
    const direct = await errorOf(alice.api.call('bot', 'pay', { to: 'corner-shop', amount: '5', reference: 'ord-1' }));
    expect(direct.errorCode).toBe('INVALID_STATUS');
    expect(direct.message).toContain('already paid');
    expect((await shopCall('list_payment_requests')).total).toBe(1);
    expect((await alice.api.call<any>('bot', 'list_payments', {})).items).toHaveLength(0);
  });
});

describe('a merchant paylink paid by an agent', () => {
  test('pay {payment_request_id} pays it once; verify shows the agent payment; direct pays and second pays of the reference are refused', async () => {
    const link = await shopCall('create_payment_request', { description: 'Order ord-2', amount: '3', reference: 'ord-2' });
    // While the paylink waits, a direct payment of its reference is sent to the paylink instead.
    const direct = await errorOf(alice.api.call('bot', 'pay', { to: 'corner-shop', amount: '3', reference: 'ord-2' }));
    expect(direct.errorCode).toBe('INVALID_STATUS');
    expect(direct.details).toMatchObject({ payment_request_id: link.request_id });
    expect(direct.howToFix).toContain(`pay {payment_request_id: "${link.request_id}"}`);

    const intent = await alice.api.call<any>('bot', 'pay', { payment_request_id: link.request_id });
    expect(intent).toMatchObject({ status: 'pre_approved', amount: 3, reference: 'ord-2' });
    const done = await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id);
    expect(done.status).toBe('completed');
    expect(await world.balance(shop.payout as never)).toBe(8_000_000n);

    expect(await shopCall('get_payment_request', { request_id: link.request_id })).toMatchObject({
      status: 'paid',
      paid_via: 'wallet',
      payer: alice.username,
      transaction_id: done.transaction_id,
      signature: done.signature,
    });
    expect(await shopCall('verify', { reference: 'ord-2' })).toMatchObject({ paid: true, via: 'wallet', transaction_id: done.transaction_id, payer: alice.username, payment_request_id: link.request_id });
    expect(await shopCall('balance')).toMatchObject({ total_received: 8, payments_received: 2 });
    const feed = await shopCall('events', { types: ['payment.received', 'payment_request.paid'] });
    expect(feed.items.filter((e: any) => e.data.signature === done.signature).map((e: any) => e.type).sort()).toEqual(['payment.received', 'payment_request.paid']);

    const second = await errorOf(alice.api.call('bot', 'pay', { payment_request_id: link.request_id }));
    expect(second).toMatchObject({ errorCode: 'INVALID_STATUS', details: { status: 'paid' } });
    expect((await errorOf(shopCall('create_payment_request', { description: 'Again', reference: 'ord-2' }))).errorCode).toBe('INVALID_STATUS');
  });

  test('two concurrent creates with one reference: exactly one paylink, the other refused', async () => {
    const tries = await Promise.allSettled(Array.from({ length: 5 }, () => shopCall('create_payment_request', { description: 'Race', amount: '1', reference: 'race-1' })));
    expect(tries.filter((t) => t.status === 'fulfilled')).toHaveLength(1);
    for (const t of tries.filter((t) => t.status === 'rejected')) expect((t as PromiseRejectedResult).reason.errorCode).toBe('INVALID_STATUS');
    expect((await shopCall('list_payment_requests', { limit: 100 })).items.filter((r: any) => r.reference === 'race-1')).toHaveLength(1);
    await shopCall('cancel_payment_request', { request_id: (tries.find((t) => t.status === 'fulfilled') as PromiseFulfilledResult<any>).value.request_id });
  });

  test('a reference paid directly cannot be put on a new paylink', async () => {
    const intent = await alice.api.call<any>('bot', 'pay', { to: 'corner-shop', amount: '1', reference: 'ord-3' });
    await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id);
    const err = await errorOf(shopCall('create_payment_request', { description: 'Late link', amount: '1', reference: 'ord-3' }));
    expect(err.errorCode).toBe('INVALID_STATUS');
    expect(err.details).toMatchObject({ transaction_id: intent.transaction_id });
  });
});

describe('merchant paylinks and events are the merchant\'s own', () => {
  test('another merchant gets NOT_FOUND for them; a bot key gets 401; list filters by status', async () => {
    const link = await shopCall('create_payment_request', { description: 'Private order', amount: '1' });
    for (const action of ['get_payment_request', 'cancel_payment_request']) {
      expect((await errorOf(other.api.call('merchant', action, { request_id: link.request_id }))).errorCode).toBe('NOT_FOUND');
    }
    expect((await errorOf(other.api.call('merchant', 'send_paylink_invitation', { request_id: link.request_id, to_wallet: alice.username }))).errorCode).toBe('NOT_FOUND');
    expect((await other.api.call<any>('merchant', 'list_payment_requests')).total).toBe(0);
    expect((await errorOf(alice.api.call('bot', 'get_payment_request', { request_id: link.request_id }))).errorCode).toBe('NOT_FOUND');
    expect((await errorOf(new ApiClient(world.url, alice.profile.api_key).call('merchant', 'list_payment_requests'))).status).toBe(401);
    const paid = await shopCall('list_payment_requests', { status: 'paid' });
    expect(paid.items.map((r: any) => r.reference).sort()).toEqual(['ord-1', 'ord-2']);
  });

  test('cancel and invitations: the cancel is in the feed but not on the webhook; a wallet invited by the merchant sees who invites it', async () => {
    const link = await shopCall('create_payment_request', { description: 'Invoice 7', amount: '2', reference: 'inv-7' });
    const sent = await shopCall('send_paylink_invitation', { request_id: link.request_id, to_wallet: alice.username, message: 'Your invoice' });
    expect(sent).toMatchObject({ channel: 'wallet', to: alice.username });
    const invitation = (await alice.api.call<any>('bot', 'events', { types: ['paylink.invitation'] })).items.at(-1);
    expect(invitation.data).toMatchObject({ request_id: link.request_id, from: 'corner-shop', amount: 2, message: 'Your invoice' });

    expect(await shopCall('cancel_payment_request', { request_id: link.request_id })).toMatchObject({ status: 'cancelled' });
    expect((await errorOf(alice.api.call('bot', 'pay', { payment_request_id: link.request_id }))).errorCode).toBe('INVALID_STATUS');
    const feed = await shopCall('events', { types: ['payment_request.cancelled'] });
    expect(feed.items.map((e: any) => e.data.request_id)).toContain(link.request_id);
    await deliverDueWebhooks(world.services);
    expect(receiver.requests.map((r) => JSON.parse(r.body).type)).not.toContain('payment_request.cancelled');
    // A cancelled paylink releases its reference for a new one.
    expect(await shopCall('create_payment_request', { description: 'Invoice 7, again', amount: '2', reference: 'inv-7' })).toMatchObject({ status: 'open', reference: 'inv-7' });
  });

  test('a paylink past its expiry releases its reference at once, before the expiry job moves it', async () => {
    const first = await shopCall('create_payment_request', { description: 'Short-lived', amount: '1', reference: 'exp-1', expires_in: 60 });
    expect((await errorOf(shopCall('create_payment_request', { description: 'Too early', amount: '1', reference: 'exp-1' }))).errorCode).toBe('INVALID_STATUS');
    world.clock.offsetMs += 61_000;
    try {
      const second = await shopCall('create_payment_request', { description: 'After expiry', amount: '1', reference: 'exp-1' });
      expect(second.request_id).not.toBe(first.request_id);
      expect((await shopCall('get_payment_request', { request_id: first.request_id })).status).toBe('expired');
      await shopCall('cancel_payment_request', { request_id: second.request_id });
    } finally {
      world.clock.offsetMs -= 61_000;
    }
  });

  test('events: since, unread counts and mark_read work on the merchant feed and never touch another feed', async () => {
    const page = await shopCall('events', { limit: 100 });
    expect(page.items.length).toBeGreaterThan(3);
    expect(page.unread).toBe(page.items.length);
    const after = await shopCall('events', { since: page.items[1].event_id, limit: 100 });
    expect(after.items.map((e: any) => e.event_id)).toEqual(page.items.slice(2).map((e: any) => e.event_id));
    expect((await errorOf(shopCall('events', { since: 'evt_0000000000000000000000000a' }))).errorCode).toBe('VALIDATION_ERROR');

    // Another merchant cannot mark these, nor read them.
    expect(await other.api.call<any>('merchant', 'mark_read', { event_ids: [page.items[0].event_id] })).toEqual({ marked: 0 });
    expect((await other.api.call<any>('merchant', 'events')).items.map((e: any) => e.event_id)).not.toContain(page.items[0].event_id);
    expect(await alice.api.call<any>('bot', 'mark_read', { event_ids: [page.items[0].event_id] })).toEqual({ marked: 0 });

    expect(await shopCall('mark_read', { event_ids: [page.items[0].event_id] })).toEqual({ marked: 1 });
    expect((await shopCall('events', { unread_only: true, limit: 100 })).items).toHaveLength(page.items.length - 1);
    expect(await shopCall('mark_read', { all: true })).toEqual({ marked: page.items.length - 1 });
    expect((await shopCall('events', { limit: 100 })).unread).toBe(0);
    expect((await errorOf(shopCall('mark_read', {}))).errorCode).toBe('VALIDATION_ERROR');
  });
});

describe('guard rails on a merchant paid by its address', () => {
  test('blocked_recipients naming the merchant also refuses a payment to its payout address', async () => {
    const owner = await world.ownerClient('alice-owner@example.com');
    await owner.call('owner', 'set_guard_rails', { wallet_id: alice.walletId, rails: { blocked_recipients: ['other-shop'] } });
    const payout = (await alice.api.call<any>('bot', 'lookup', { username: 'other-shop' })).address;
    expect((await alice.api.call<any>('bot', 'pay', { to: 'other-shop', amount: '1' })).status).toBe('rejected');
    expect((await alice.api.call<any>('bot', 'pay', { to: payout, amount: '1' })).status).toBe('rejected');
  });
});

describe('merchant CLI', () => {
  test('merchant request create|list|get and merchant events through the agent-wallet binary', async () => {
    const home = tempDir('aw-merchant-req-');
    const cli = (args: string[]) => runCli(['merchant', ...args, '--home', home, '--json'], {});
    expect((await cli(['register', '--name', 'CLI Tea', '--username', 'cli-tea', '--payout-address', randomAddress(), '--server', world.url])).code).toBe(0);
    const created = await cli(['request', 'create', '--description', 'Tea order', '--item', 'Green tea:2:3', '--reference', 'cli-1']);
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ amount: 6, reference: 'cli-1', status: 'open', items: [{ description: 'Green tea', price: 2, quantity: 3, total: 6 }] });
    expect((await cli(['request', 'get', '--reference', 'cli-1'])).json.request_id).toBe(created.json.request_id);
    expect((await cli(['request', 'list', '--status', 'open'])).json).toMatchObject({ total: 1 });
    const refused = await cli(['request', 'create', '--description', 'Again', '--amount', '1', '--reference', 'cli-1']);
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('INVALID_STATUS');
    expect((await cli(['request', 'create', '--description', 'x', '--reveal-owner'])).code).toBe(2);
    const events = await cli(['events', '--type', 'payment_request.created']);
    expect(events.json.items.map((e: any) => e.data.request_id)).toEqual([created.json.request_id]);
    expect((await cli(['events', 'read', '--all'])).json.marked).toBeGreaterThan(0);
    expect((await cli(['events', '--unread'])).json.items).toEqual([]);
  }, 30_000);
});
