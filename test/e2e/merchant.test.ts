/**
 * Merchants end to end on simnet: a merchant registers over HTTP, an agent pays it with an order
 * reference through the real client (FROST over HTTP), the merchant verifies the order, and a real
 * HTTP receiver on loopback gets the signed webhook, checked with the test's own Standard
 * Webhooks verifier. Also: reused references are refused, keys do not cross endpoints, public
 * stats follow payments and are cached, and the merchant CLI works against the same service.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ApiClient, ApiError } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { deliverDueWebhooks } from '../../src/webhooks/deliver.ts';
import { runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { randomAddress, startReceiver, verifyStandardWebhook, type Receiver } from '../webhooks/receiver.ts';
import { errorOf } from '../helpers/errors.ts';
import { signWithoutSubmit } from '../helpers/signing.ts';

let world: World;
let alice: Agent;
let receiver: Receiver;
let merchant: { api: ApiClient; data: any; payout: string };


/** pay + confirm + FROST sign + submit, as the CLI does; returns the final transaction. */
async function payAndSettle(agent: Agent, to: string, amount: string, reference?: string): Promise<any> {
  const intent = await agent.api.call<any>('bot', 'pay', { to, amount, ...(reference ? { reference } : {}) });
  expect(intent.status).toBe('pre_approved');
  return confirmSignSubmit(agent.api, agent.profile, intent.transaction_id);
}

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  alice = await world.agent('Alice', { claimBy: 'alice-owner@example.com' });
  await world.fund(alice.address, 200_000_000n);
  receiver = startReceiver();
  const payout = randomAddress();
  const data = await new ApiClient(world.url).call<any>('merchant', 'register', { name: 'Acme Store', username: 'acme-store', payout_address: payout, webhook_url: receiver.url });
  merchant = { api: new ApiClient(world.url, data.api_key), data, payout };
});
afterAll(async () => {
  receiver.stop();
  await world.stop();
});

describe('merchant account and verify', () => {
  test('register returns a mer_ id and a wallet_merchant_ key once; the username is in the shared namespace', async () => {
    expect(merchant.data.merchant_id).toMatch(/^mer_[0-9a-z]{26}$/);
    expect(merchant.data.api_key).toMatch(/^wallet_merchant_[1-9A-HJ-NP-Za-km-z]{32,50}$/);
    expect(merchant.data.webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const info = await merchant.api.call<any>('merchant', 'info');
    expect(info).toMatchObject({ merchant_id: merchant.data.merchant_id, username: 'acme-store', payout_address: merchant.payout, webhook: { url: receiver.url, status: 'active' } });
    expect(JSON.stringify(info)).not.toContain('whsec_');
    expect(await alice.api.call<any>('bot', 'lookup', { username: 'acme-store' })).toMatchObject({ found: true, type: 'merchant', address: merchant.payout });
    const taken = await errorOf(new ApiClient(world.url).call('merchant', 'register', { name: 'Copy', username: alice.username, payout_address: randomAddress() }));
    expect(taken.errorCode).toBe('VALIDATION_ERROR');
    expect(taken.message).toContain('already taken');
  });

  test('an agent pays with reference order-123; verify says paid with the amount, payer and time', async () => {
    const done = await payAndSettle(alice, 'acme-store', '12.5', 'order-123');
    expect(done.status).toBe('completed');
    expect(await world.balance(merchant.payout as never)).toBe(12_500_000n);
    const v = await merchant.api.call<any>('merchant', 'verify', { reference: 'order-123' });
    expect(v).toMatchObject({ paid: true, status: 'paid', transaction_id: done.transaction_id, amount: 12.5, payer: alice.username, signature: done.signature });
    expect(Date.parse(v.paid_at)).toBeGreaterThan(0);
    expect(await merchant.api.call<any>('merchant', 'verify', { reference: 'order-123', expected_amount: '12.5' })).toMatchObject({ paid: true });
  });

  test('verify order-999 → not paid; expected_amount above what was paid → not paid (underpaid)', async () => {
    expect(await merchant.api.call<any>('merchant', 'verify', { reference: 'order-999' })).toMatchObject({ paid: false, status: 'not_found', transaction_id: null, amount: null });
    const under = await merchant.api.call<any>('merchant', 'verify', { reference: 'order-123', expected_amount: 12.500001 });
    expect(under).toMatchObject({ paid: false, status: 'underpaid', amount: 12.5, expected_amount: 12.500001 });
  });

  test('a second payment with reference order-123 is refused at pay time and creates nothing', async () => {
    const before = await alice.api.call<any>('bot', 'list_payments', {});
    const err = await errorOf(alice.api.call('bot', 'pay', { to: 'acme-store', amount: '12.5', reference: 'order-123' }));
    expect(err.errorCode).toBe('INVALID_STATUS');
    expect(err.status).toBe(409);
    expect(err.message).toContain('already paid');
    expect(err.howToFix).toContain('Do not pay again');
    expect((await alice.api.call<any>('bot', 'list_payments', {})).total).toBe(before.total);
    // The same reference to another recipient is a different order: allowed.
    const bob = await world.agent('Bob', { claimBy: 'bob-owner@example.com' });
    const other = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: '1', reference: 'order-123' });
    expect(other.status).toBe('pre_approved');
    await alice.api.call('bot', 'cancel_payment', { transaction_id: other.transaction_id });
  });

  test('a second outstanding payment with the same reference is refused; after cancelling the first it is allowed', async () => {
    const first = await alice.api.call<any>('bot', 'pay', { to: 'acme-store', amount: '2', reference: 'order-777' });
    expect(first.status).toBe('pre_approved');
    expect(await merchant.api.call<any>('merchant', 'verify', { reference: 'order-777' })).toMatchObject({ paid: false, status: 'in_progress' });
    const err = await errorOf(alice.api.call('bot', 'pay', { to: 'acme-store', amount: '2', reference: 'order-777' }));
    expect(err.errorCode).toBe('INVALID_STATUS');
    expect(err.message).toContain('under way');
    expect(err.details.transaction_id).toBe(first.transaction_id);
    await alice.api.call('bot', 'cancel_payment', { transaction_id: first.transaction_id });
    const second = await alice.api.call<any>('bot', 'pay', { to: 'acme-store', amount: '2', reference: 'order-777' });
    expect(second.status).toBe('pre_approved');
    await alice.api.call('bot', 'cancel_payment', { transaction_id: second.transaction_id });
  });

  test('two concurrent pays with the same reference: exactly one intent is created, the other is refused', async () => {
    const results = await Promise.allSettled([1, 2, 3].map(() => alice.api.call<any>('bot', 'pay', { to: 'acme-store', amount: '1', reference: 'order-race' })));
    const created = results.filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<any>[];
    const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(created).toHaveLength(1);
    expect(refused.map((r) => (r.reason as ApiError).errorCode)).toEqual(['INVALID_STATUS', 'INVALID_STATUS']);
    await alice.api.call('bot', 'cancel_payment', { transaction_id: created[0]!.value.transaction_id });
  });

  test('balance shows the payout address on chain and the totals received through the service; history lists the payment', async () => {
    const balance = await merchant.api.call<any>('merchant', 'balance');
    expect(balance).toMatchObject({ balance: 12.5, currency: 'USDC', payout_address: merchant.payout, total_received: 12.5, payments_received: 1 });
    const history = await merchant.api.call<any>('merchant', 'history', {});
    expect(history).toMatchObject({ total: 1, limit: 20, offset: 0 });
    expect(history.items[0]).toMatchObject({ reference: 'order-123', amount: 12.5, payer: alice.username });
    expect((await merchant.api.call<any>('merchant', 'history', { since: new Date(Date.now() + 3_600_000).toISOString() })).total).toBe(0);
    expect((await errorOf(merchant.api.call('merchant', 'history', { since: 'yesterday' }))).errorCode).toBe('VALIDATION_ERROR');
  });
});

describe('webhooks to a real receiver', () => {
  test('the receiver gets webhook.test and payment.received, signed as Standard Webhooks say (checked by our own verifier)', async () => {
    const report = await deliverDueWebhooks(world.services);
    expect(report).toEqual({ delivered: 2, retrying: 0, failed: 0, disabled: 0 });
    expect(receiver.requests.map((r) => JSON.parse(r.body).type)).toEqual(['webhook.test', 'payment.received']);
    const received = receiver.requests[1]!;
    const now = Math.floor(Date.now() / 1000);
    expect(await verifyStandardWebhook(merchant.data.webhook.secret, received.headers, received.body, now)).toBe(true);
    // A tampered body, a wrong secret or a stale timestamp fail the same check.
    expect(await verifyStandardWebhook(merchant.data.webhook.secret, received.headers, received.body.replace('12.5', '125'), now)).toBe(false);
    expect(await verifyStandardWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, received.headers, received.body, now)).toBe(false);
    expect(await verifyStandardWebhook(merchant.data.webhook.secret, received.headers, received.body, now + 3600)).toBe(false);
    expect(received.headers.get('content-type')).toBe('application/json');
    const body = JSON.parse(received.body);
    expect(body).toMatchObject({ type: 'payment.received', data: { reference: 'order-123', amount: 12.5, payer: alice.username, currency: 'USDC' } });
    expect(body.data.transaction_id).toMatch(/^tx_/);
    expect(body.data.signature).toBeString();
    expect(body.event_id).toMatch(/^evt_/);
    const deliveries = await merchant.api.call<any>('merchant', 'webhook_deliveries', {});
    const row = deliveries.items.find((d: any) => d.event_type === 'payment.received');
    expect(row).toMatchObject({ status: 'delivered', attempts: 1, delivery_id: received.headers.get('webhook-id') });
    expect(row.attempt_log[0]).toMatchObject({ attempt: 1, http_status: 200, outcome: 'delivered', url: receiver.url });
  });

  test('set_webhook checks the URL against the outbound rules and returns a new secret; the test event is signed with it', async () => {
    const refused = await errorOf(merchant.api.call('merchant', 'set_webhook', { url: 'http://10.0.0.1/hook' }));
    expect(refused.errorCode).toBe('VALIDATION_ERROR');
    expect(refused.message).toContain('class private');
    const second = startReceiver();
    try {
      const set = await merchant.api.call<any>('merchant', 'set_webhook', { url: second.url });
      expect(set).toMatchObject({ url: second.url, status: 'active' });
      expect(set.secret).not.toBe(merchant.data.webhook.secret);
      await deliverDueWebhooks(world.services);
      await second.waitFor(1);
      expect(JSON.parse(second.requests[0]!.body)).toMatchObject({ type: 'webhook.test', data: { webhook_id: set.webhook_id } });
      expect(await verifyStandardWebhook(set.secret, second.requests[0]!.headers, second.requests[0]!.body, Math.floor(Date.now() / 1000))).toBe(true);
      expect(await verifyStandardWebhook(merchant.data.webhook.secret, second.requests[0]!.headers, second.requests[0]!.body, Math.floor(Date.now() / 1000))).toBe(false);
    } finally {
      second.stop();
    }
  });
});

describe('keys and public stats', () => {
  test('a merchant key on /bot and a bot key on /merchant are 401 UNAUTHORIZED', async () => {
    const asBot = await errorOf(new ApiClient(world.url, merchant.data.api_key).call('bot', 'balance'));
    expect(asBot.status).toBe(401);
    expect(asBot.errorCode).toBe('UNAUTHORIZED');
    expect(asBot.howToFix).toContain('wallet_bot_');
    const asMerchant = await errorOf(new ApiClient(world.url, alice.profile.api_key).call('merchant', 'balance'));
    expect(asMerchant.status).toBe(401);
    expect(asMerchant.howToFix).toContain('wallet_merchant_');
    const none = await errorOf(new ApiClient(world.url).call('merchant', 'verify', { reference: 'order-123' }));
    expect(none.status).toBe(401);
  });

  test('stats counts change after a payment, and an answer is served from cache for 60 s', async () => {
    const stats = async () => (await (await fetch(`${world.url}/public?action=stats`)).json()).data;
    world.clock.offsetMs += 61_000;
    const s0 = await stats();
    expect(s0).toMatchObject({ merchants: 1, payments_completed: 1, volume_usdc: 12.5 });
    expect(s0.wallets).toBeGreaterThanOrEqual(2);
    expect(s0.claimed_wallets).toBeGreaterThanOrEqual(2);
    await payAndSettle(alice, 'acme-store', '3', 'order-456');
    world.clock.offsetMs += 59_000;
    expect(await stats()).toEqual(s0);
    world.clock.offsetMs += 2_000;
    const s1 = await stats();
    expect(s1).toMatchObject({ payments_completed: 2, volume_usdc: 15.5, merchants: 1 });
    expect(Date.parse(s1.as_of)).toBeGreaterThan(Date.parse(s0.as_of));
  });
});

describe('merchant CLI', () => {
  test('merchant register, verify, history and set-webhook through the agent-wallet binary', async () => {
    const home = tempDir('aw-merchant-cli-');
    const cli = (args: string[]) => runCli(['merchant', ...args, '--home', home, '--json'], {});
    const reg = await cli(['register', '--name', 'CLI Shop', '--username', 'cli-shop', '--payout-address', randomAddress(), '--server', world.url]);
    expect(reg.code).toBe(0);
    expect(reg.json).toMatchObject({ username: 'cli-shop', profile: 'default' });
    expect(reg.stderr).toContain('mode 0600');
    const profile = await Bun.file(`${home}/merchants/default.json`).json();
    expect(profile.api_key).toBe(reg.json.api_key);
    expect((await Bun.file(`${home}/merchants/default.json`).stat()).mode & 0o777).toBe(0o600);
    await payAndSettle(alice, 'cli-shop', '4', 'inv-1');
    const verify = await cli(['verify', 'inv-1', '--expected-amount', '4']);
    expect(verify.code).toBe(0);
    expect(verify.json).toMatchObject({ paid: true, amount: 4, payer: alice.username });
    const history = await cli(['history', '--limit', '5']);
    expect(history.json).toMatchObject({ total: 1, limit: 5 });
    const hook = await cli(['set-webhook', 'http://169.254.169.254/latest/meta-data/']);
    expect(hook.code).toBe(1);
    expect(hook.json.error.code).toBe('VALIDATION_ERROR');
    const usage = await cli(['verify']);
    expect(usage.code).toBe(2);
  }, 20_000);
});

describe('order references cannot be squatted (issue 24.9)', () => {
  test("another wallet's unconfirmed intent with a reference does not hold it: the real payer's payment completes and verify says paid", async () => {
    const mallory = await world.agent('Mallory', { claimBy: 'mallory-owner@example.com' });
    await world.fund(mallory.address, 10_000_000n);
    const squat = await mallory.api.call<any>('bot', 'pay', { to: 'acme-store', amount: '1', reference: 'order-sq' });
    expect(squat.status).toBe('pre_approved');
    const done = await payAndSettle(alice, 'acme-store', '3', 'order-sq');
    expect(done.status).toBe('completed');
    expect(await merchant.api.call<any>('merchant', 'verify', { reference: 'order-sq' })).toMatchObject({ paid: true, amount: 3, transaction_id: done.transaction_id });
    // The squatter's intent, signed now, is refused: the order is paid once.
    expect((await errorOf(confirmSignSubmit(mallory.api, mallory.profile, squat.transaction_id))).errorCode).toBe('INVALID_STATUS');
  });

  test('1 micro-USDC paid with an order id before its paylink exists neither consumes the order nor reads as paid; the paylink is created and paid in full, even by the one who underpaid', async () => {
    const mallory = await world.agent('Micro Mallory', { claimBy: 'micro-owner@example.com' });
    await world.fund(mallory.address, 10_000_000n);
    const tiny = await payAndSettle(mallory, 'acme-store', '0.000001', 'order-tiny');
    expect(tiny.status).toBe('completed');
    const link = await merchant.api.call<any>('merchant', 'create_payment_request', { description: 'Order tiny', amount: '5', reference: 'order-tiny' });
    const v = await merchant.api.call<any>('merchant', 'verify', { reference: 'order-tiny' });
    expect(v).toMatchObject({ paid: false, status: 'underpaid', expected_amount: 5, amount: 0.000001 });
    // Even the one who underpaid can still pay the order in full.
    const intent = await mallory.api.call<any>('bot', 'pay', { payment_request_id: link.request_id });
    expect((await confirmSignSubmit(mallory.api, mallory.profile, intent.transaction_id)).status).toBe('completed');
    expect(await merchant.api.call<any>('merchant', 'verify', { reference: 'order-tiny' })).toMatchObject({ paid: true, status: 'paid', amount: 5, expected_amount: 5 });
    expect(await merchant.api.call<any>('merchant', 'get_payment_request', { request_id: link.request_id })).toMatchObject({ status: 'paid', paid_amount: 5 });
  });

  test("1 micro-USDC paid with an order id that no paylink carries does not keep the order's payment out: another agent's payment completes, verify names it, and the order is then paid once", async () => {
    const mallory = await world.agent('Direct Mallory', { claimBy: 'direct-owner@example.com' });
    await world.fund(mallory.address, 10_000_000n);
    const received0 = await world.balance(merchant.payout as never);
    expect((await payAndSettle(mallory, 'acme-store', '0.000001', 'order-direct')).status).toBe('completed');
    expect(await merchant.api.call<any>('merchant', 'verify', { reference: 'order-direct', expected_amount: '4' })).toMatchObject({ paid: false, status: 'underpaid', amount: 0.000001 });
    const done = await payAndSettle(alice, 'acme-store', '4', 'order-direct');
    expect(done.status).toBe('completed');
    // With or without the amount the merchant expects, verify answers with the payment of the order.
    for (const asked of [{}, { expected_amount: '4' }]) {
      expect(await merchant.api.call<any>('merchant', 'verify', { reference: 'order-direct', ...asked })).toMatchObject({ paid: true, status: 'paid', amount: 4, transaction_id: done.transaction_id });
    }
    // Paid once: another payment of the order is refused, whoever makes it (its payer: of any amount).
    for (const [payer, amount] of [[alice, '4.5'], [mallory, '4']] as const) {
      const again = await errorOf(payer.api.call('bot', 'pay', { to: 'acme-store', amount, reference: 'order-direct' }));
      expect(again.errorCode).toBe('INVALID_STATUS');
      expect(again.message).toContain('already paid');
    }
    expect(await world.balance(merchant.payout as never)).toBe(received0 + 4_000_001n);
  });

  test('two payers who both confirmed a payment of one order: the first to sign holds it, the other is refused at signing and nothing of it is signed', async () => {
    const bob = await world.agent('Race Bob', { claimBy: 'race-bob-owner@example.com' });
    await world.fund(bob.address, 10_000_000n);
    const second = await bob.api.call<any>('bot', 'pay', { to: 'acme-store', amount: '2', reference: 'order-signed' });
    await bob.api.call('bot', 'confirm_payment', { transaction_id: second.transaction_id });
    const first = await signWithoutSubmit(alice.api, alice.profile, { to: 'acme-store', amount: '2', reference: 'order-signed' });
    const refused = await errorOf(confirmSignSubmit(bob.api, bob.profile, second.transaction_id));
    expect(refused.errorCode).toBe('INVALID_STATUS');
    expect(refused.message).toContain('under way');
    expect(await world.services.db.get('SELECT signed_tx FROM transactions WHERE transaction_id = ?', second.transaction_id)).toEqual({ signed_tx: null });
    expect((await alice.api.call<any>('bot', 'submit_signed_tx', { transaction_id: first, wait: true })).status).toBe('completed');
    expect(await merchant.api.call<any>('merchant', 'verify', { reference: 'order-signed' })).toMatchObject({ paid: true, amount: 2, transaction_id: first });
    expect((await errorOf(confirmSignSubmit(bob.api, bob.profile, second.transaction_id))).message).toContain('already paid');
  });
});
