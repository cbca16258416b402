/**
 * The merchant endpoint as a scenario table through `app.handle` on a fresh app and in-memory
 * ledger (STYLE habit 12): validation of register, keys per endpoint, tenant isolation, the
 * answers when no payment exists, public stats and its cache, and the OpenAPI document.
 */
import { describe, expect, test } from 'bun:test';
import { createApp } from '../../src/api/app.ts';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { call, testServices } from '../helpers/services.ts';
import { randomAddress } from '../webhooks/receiver.ts';

const clock = { t: Date.parse('2030-06-01T12:00:00Z') };
const services = testServices({ now: () => new Date(clock.t) });
const app = createApp(services);

async function register(params: Record<string, unknown>) {
  return call(app, '/v1/merchant', { action: 'register', name: 'Shop', payout_address: randomAddress(), ...params });
}

const shop = (await register({ username: 'main-shop' })).body.data;
const asShop = (action: string, params: Record<string, unknown> = {}) => call(app, '/v1/merchant', { action, ...params }, { headers: { authorization: `Bearer ${shop.api_key}` } });

describe('register', () => {
  test('returns merchant_id, the key once and the normalised username; only the key hash is stored', async () => {
    const res = await register({ username: '  New-Shop ', name: '  Café Ünïcode  ' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ username: 'new-shop', name: 'Café Ünïcode', webhook: null });
    expect(res.body.data.next_step).toContain('shown once');
    const row = (await services.db.get('SELECT api_key_hash FROM merchants WHERE merchant_id = ?', res.body.data.merchant_id)) as { api_key_hash: Uint8Array };
    expect(row.api_key_hash.length).toBe(32);
    const info = await call(app, '/v1/merchant', { action: 'info' }, { headers: { authorization: `Bearer ${res.body.data.api_key}` } });
    expect(JSON.stringify(info.body)).not.toContain(res.body.data.api_key);
  });

  test.each([
    ['username too short', '/username', { username: 'ab' }],
    ['username with a double dash', '/username', { username: 'a--b' }],
    ['username with a trailing dash', '/username', { username: 'shop-' }],
    ['username with a dot', '/username', { username: 'shop.co' }],
    ['username already taken', '/username', { username: 'main-shop' }],
    ['username taken case-insensitively', '/username', { username: 'MAIN-SHOP' }],
    ['payout address not base58', '/payout_address', { username: 'pay-shop', payout_address: '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl' }],
    ['payout address too short', '/payout_address', { username: 'pay-shop', payout_address: 'abc' }],
    ['name with a bidi override', '/name', { username: 'bidi-shop', name: 'Shop\u202e' }],
    ['unknown parameter', '/extra', { username: 'x-shop', extra: 1 }],
  ])('%s → VALIDATION_ERROR naming %s', async (_name, field, params) => {
    const res = await register(params);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toContain(field);
    expect(res.body.error.how_to_fix.length).toBeGreaterThan(0);
  });
});

describe('keys and tenants', () => {
  test.each([
    ['no key', {}],
    ['a bot key', { authorization: `Bearer ${newApiKey('bot').key}` }],
    ['an owner token', { authorization: `Bearer ${newApiKey('owner').key}` }],
    ['an unknown merchant key', { authorization: `Bearer ${newApiKey('merchant').key}` }],
  ])('%s on a keyed merchant action → 401 naming the wallet_merchant_ prefix', async (_name, headers) => {
    const res = await call(app, '/v1/merchant', { action: 'balance' }, { headers });
    expect(res.status).toBe(401);
    expect(res.body.error.how_to_fix).toContain('wallet_merchant_');
  });

  test('a merchant key on /bot and /owner → 401', async () => {
    for (const path of ['/v1/bot', '/v1/owner']) {
      const res = await call(app, path, { action: path === '/v1/bot' ? 'balance' : 'wallets' }, { headers: { authorization: `Bearer ${shop.api_key}` } });
      expect(res.status).toBe(401);
    }
  });

  test('another merchant sees nothing of this one: its deliveries, references and history are its own', async () => {
    const other = (await register({ username: 'other-shop' })).body.data;
    const asOther = (action: string, params: Record<string, unknown> = {}) => call(app, '/v1/merchant', { action, ...params }, { headers: { authorization: `Bearer ${other.api_key}` } });
    expect((await asOther('history')).body.data).toMatchObject({ items: [], total: 0 });
    expect((await asOther('webhook_deliveries')).body.data).toMatchObject({ items: [], total: 0 });
    expect((await asOther('verify', { reference: 'anything' })).body.data).toMatchObject({ paid: false, status: 'not_found' });
  });
});

describe('answers without payments', () => {
  test('verify validates expected_amount and answers not_found', async () => {
    expect((await asShop('verify', { reference: 'order-1' })).body.data).toEqual({
      reference: 'order-1',
      expected_amount: null,
      paid: false,
      status: 'not_found',
      transaction_id: null,
      amount: null,
      paid_at: null,
      payer: null,
      reason: 'no payment with this reference was received',
    });
    for (const bad of ['-1', 0, '1.0000001', 'ten']) {
      const res = await asShop('verify', { reference: 'order-1', expected_amount: bad });
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message).toContain('/expected_amount');
    }
    expect((await asShop('verify', { reference: '' })).body.error.code).toBe('VALIDATION_ERROR');
  });

  test('balance without a reachable chain is SERVICE_UNAVAILABLE, never a stack trace', async () => {
    const res = await asShop('balance');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+|SELECT/);
  });

  test('history pages are bounded: limit above 100 is refused', async () => {
    expect((await asShop('history', { limit: 101 })).body.error.code).toBe('VALIDATION_ERROR');
    expect((await asShop('history', { limit: 100, offset: 5 })).body.data).toMatchObject({ limit: 100, offset: 5, total: 0 });
  });
});

describe('public stats', () => {
  test('GET /v1/public?action=stats counts wallets, merchants and payments; a new merchant shows only after the 60 s cache', async () => {
    clock.t += 120_000;
    const first = await call(app, '/v1/public?action=stats');
    expect(first.status).toBe(200);
    const merchants = Number(((await services.db.get('SELECT count(*) AS n FROM merchants')) as { n: bigint }).n);
    expect(first.body.data).toMatchObject({ wallets: 0, claimed_wallets: 0, merchants, payments_completed: 0, volume_usdc: 0, network: 'simnet' });
    await register({ username: 'late-shop' });
    clock.t += 59_999;
    expect((await call(app, '/v1/public?action=stats')).body.data).toEqual(first.body.data);
    clock.t += 1;
    expect((await call(app, '/v1/public?action=stats')).body.data.merchants).toBe(merchants + 1);
    expect((await call(app, '/v1/public?action=stats&extra=1')).body.error.code).toBe('VALIDATION_ERROR');
  });
});

describe('OpenAPI', () => {
  test('lists every merchant action under /merchant and stats under /public', async () => {
    const doc = (await call(app, '/v1/openapi.json')).body;
    const mapping = doc.paths['/merchant'].post.requestBody.content['application/json'].schema.discriminator.mapping;
    expect(Object.keys(mapping).sort()).toEqual([
      'balance',
      'cancel_payment_request',
      'create_payment_request',
      'events',
      'get_payment_request',
      'get_receipt',
      'history',
      'info',
      'list_payment_requests',
      'mark_read',
      'pay_sale_fees',
      'redeliver',
      'register',
      'rotate_webhook_secret',
      'sale_fees',
      'send_paylink_invitation',
      'set_webhook',
      'verify',
      'webhook_deliveries',
      'x402_refund_due',
    ]);
    expect(Object.keys(doc.paths['/public'].post.requestBody.content['application/json'].schema.discriminator.mapping)).toContain('stats');
  });
});
