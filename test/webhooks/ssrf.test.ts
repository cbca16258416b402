/**
 * Webhook URLs cannot reach the operator's network. A matrix of URL forms — loopback in every
 * spelling, RFC 1918, cloud metadata, CGNAT, unspecified, IPv6 loopback/ULA/link-local, IPv4
 * inside IPv6, decimal/hex/octal IPv4, userinfo tricks, other schemes, names that resolve inside —
 * is refused by set_webhook and register, and again by the delivery job when such a URL is in
 * the database (written there directly, or a name that re-resolves after it was accepted).
 *
 * Nothing here may touch a non-loopback address: every name goes through an injected resolver,
 * the loopback guard makes any connect() to a non-loopback address throw (and records it), and
 * every loopback spelling targets a canary listener that must see 0 connections.
 */
import { afterAll, beforeEach, describe, expect, test } from 'bun:test';
import { connectAttempts, resetConnectAttempts } from '../net/loopback-guard.ts';
import { createApp } from '../../src/api/app.ts';
import { newId } from '../../src/contract/ids.ts';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { insertActiveEndpoint } from '../../src/db/webhooks.ts';
import { newWebhookSecret } from '../../src/net/standard-webhooks.ts';
import type { Services } from '../../src/services.ts';
import { deliverDueWebhooks } from '../../src/webhooks/deliver.ts';
import { setWebhookResolver } from '../../src/webhooks/net.ts';
import { newEndpointId, recordMerchantEvent } from '../../src/webhooks/outbox.ts';
import { sealWebhookSecret } from '../../src/webhooks/secrets.ts';
import { call, testServices } from '../helpers/services.ts';
import { randomAddress, startCanary } from './receiver.ts';

const canary = startCanary();
const P = canary.port;
afterAll(() => canary.stop());

const dns: Record<string, string[]> = {
  localhost: ['127.0.0.1'],
  'internal.test': ['10.0.0.5'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['93.184.216.34', '10.0.0.5'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'ula.test': ['fd12::1'],
  'cgnat.test': ['100.64.1.1'],
  'public.test': ['93.184.216.34'],
};
const resolve = async (host: string): Promise<string[]> => {
  const addresses = dns[host];
  if (!addresses) throw new Error(`ENOTFOUND ${host}`);
  return addresses;
};

/** Every form must be refused when nothing is allowlisted. */
const REFUSED: string[] = [
  // loopback, every spelling, aimed at the canary
  `http://127.0.0.1:${P}/hook`,
  `http://127.1:${P}/hook`,
  `http://127.0.0.1.:${P}/hook`,
  `http://2130706433:${P}/hook`,
  `http://0x7f000001:${P}/hook`,
  `http://0x7f.1:${P}/hook`,
  `http://0177.0.0.1:${P}/hook`,
  `http://127.0.0.2:${P}/hook`,
  `http://localhost:${P}/hook`,
  `http://LOCALHOST.:${P}/hook`,
  `http://[::1]:${P}/hook`,
  `http://[0:0:0:0:0:0:0:1]:${P}/hook`,
  `http://[::ffff:127.0.0.1]:${P}/hook`,
  `http://[::ffff:7f00:1]:${P}/hook`,
  `http://mapped.test:${P}/hook`,
  // RFC 1918, decimal / hex / octal spellings
  'http://10.0.0.1/hook',
  'http://172.16.0.1/hook',
  'http://172.31.255.254/hook',
  'http://192.168.1.1/hook',
  'http://167772161/hook',
  'http://0xc0a80101/hook',
  'http://0300.0250.1.1/hook',
  'http://[::ffff:10.0.0.1]/hook',
  'http://internal.test/hook',
  'http://mixed.test/hook',
  // cloud metadata and link-local
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/latest/meta-data/',
  'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
  'http://metadata.test/latest/meta-data/',
  'http://[fe80::1]/hook',
  // CGNAT
  'http://100.64.0.1/hook',
  'http://100.127.255.254/hook',
  'http://cgnat.test/hook',
  // unspecified, multicast, broadcast
  `http://0.0.0.0:${P}/hook`,
  `http://0:${P}/hook`,
  `http://[::]:${P}/hook`,
  'http://224.0.0.1/hook',
  'http://255.255.255.255/hook',
  // IPv6 ULA and IPv4 embedded in IPv6 translation prefixes
  'http://[fd00::1]/hook',
  'http://[fc00::1]/hook',
  'http://ula.test/hook',
  'http://[64:ff9b::a00:1]/hook',
  `http://[2002:7f00:1::]:${P}/hook`,
  // userinfo tricks
  `http://public.test@127.0.0.1:${P}/hook`,
  'http://user:pass@public.test/hook',
  `http://@127.0.0.1:${P}/hook`,
  `http://public.test:80@127.0.0.1:${P}/hook`,
  // other schemes and non-URLs
  'file:///etc/passwd',
  `ftp://127.0.0.1:${P}/hook`,
  `gopher://127.0.0.1:${P}/_GET`,
  'ws://public.test/hook',
  'javascript:alert(1)',
  'data:text/plain,hello',
  'not a url',
  'http://',
  // a name that does not resolve
  'http://nowhere.test/hook',
];

function services(env: Record<string, string> = {}): Services {
  const s = testServices({ env });
  setWebhookResolver(s, resolve);
  return s;
}

async function registerMerchant(app: ReturnType<typeof createApp>) {
  const reg = await call(app, '/v1/merchant', { action: 'register', name: 'Shop', username: `shop-${crypto.randomUUID().slice(0, 8)}`, payout_address: randomAddress() });
  return reg.body.data.api_key as string;
}

beforeEach(() => {
  resetConnectAttempts();
});

describe('set_webhook and register refuse URLs that reach inside', () => {
  const s = services();
  const app = createApp(s);

  test(`the matrix has at least 30 forms (${REFUSED.length})`, () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(30);
  });

  test.each(REFUSED)('set_webhook %s → VALIDATION_ERROR on /url, nothing stored, nothing contacted', async (url) => {
    const key = await registerMerchant(app);
    const res = await call(app, '/v1/merchant', { action: 'set_webhook', url }, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', field: '/url' });
    expect(res.body.error.how_to_fix).toContain('outbound.allow_hosts');
    expect((await call(app, '/v1/merchant', { action: 'info' }, { headers: { authorization: `Bearer ${key}` } })).body.data.webhook).toBeNull();
    expect(connectAttempts).toEqual([]);
    expect(canary.connections()).toBe(0);
  });

  test.each([`http://127.0.0.1:${P}/hook`, 'http://169.254.169.254/', 'http://[fd00::1]/', 'http://internal.test/'])('register with webhook_url %s → VALIDATION_ERROR, no merchant created', async (url) => {
    const before = (await s.db.get('SELECT count(*) AS n FROM merchants')) as { n: bigint };
    const res = await call(app, '/v1/merchant', { action: 'register', name: 'Shop', username: 'would-be-shop', payout_address: randomAddress(), webhook_url: url });
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', field: '/webhook_url' });
    expect(((await s.db.get('SELECT count(*) AS n FROM merchants')) as { n: bigint }).n).toBe(before.n);
  });

  test('an operator allowlist opens exactly the listed address: 127.0.0.1 (and a name resolving only to it) is accepted, [::1] and 10.0.0.1 still are not', async () => {
    const open = services({ AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' });
    const app2 = createApp(open);
    const key = await registerMerchant(app2);
    const set = (url: string) => call(app2, '/v1/merchant', { action: 'set_webhook', url }, { headers: { authorization: `Bearer ${key}` } });
    expect((await set(`http://127.0.0.1:${P}/hook`)).status).toBe(200);
    expect((await set(`http://localhost:${P}/hook`)).status).toBe(200);
    for (const url of [`http://[::1]:${P}/`, 'http://10.0.0.1/', 'http://mixed.test/']) expect((await set(url)).status).toBe(400);
    expect(connectAttempts).toEqual([]);
  });
});

describe('the delivery job refuses them too', () => {
  test('each refused URL stored directly in the database: the message fails at once (no retry), no connection is attempted', async () => {
    const s = services();
    const now = s.now().getTime();
    await s.db
      .transaction(async () => {
        for (const [i, url] of REFUSED.entries()) {
          const merchantId = newId('merchant');
          await s.db.run("INSERT INTO usernames VALUES (?, 'merchant', ?)", `direct-${i}`, merchantId);
          await s.db.run('INSERT INTO merchants (merchant_id, username, name, payout_address, api_key_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)', merchantId, `direct-${i}`, 'Direct', randomAddress(), newApiKey('merchant').hash, now);
          const endpointId = newEndpointId();
          await insertActiveEndpoint(s.db, { endpoint_id: endpointId, merchant_id: merchantId, url, secret: sealWebhookSecret(s.masterKey, endpointId, newWebhookSecret()), now });
          await recordMerchantEvent(s.db, merchantId, 'payment.received', { reference: `order-${i}`, amount: 1 }, now);
        }
      });
    const report = { delivered: 0, retrying: 0, failed: 0, disabled: 0 };
    for (;;) {
      const run = await deliverDueWebhooks(s);
      if (run.delivered + run.retrying + run.failed + run.disabled === 0) break;
      for (const k of Object.keys(report) as (keyof typeof report)[]) report[k] += run[k];
    }
    expect(report).toEqual({ delivered: 0, retrying: 1, failed: REFUSED.length - 1, disabled: 0 });
    // The one retried form is the name that does not resolve (DNS may recover); everything else is final.
    const rows = (await s.db.all('SELECT d.status, d.last_error, e.url FROM webhook_deliveries d JOIN webhook_endpoints e USING (endpoint_id)')) as { status: string; last_error: string; url: string }[];
    for (const row of rows) {
      if (row.url === 'http://nowhere.test/hook') {
        expect(row).toMatchObject({ status: 'pending' });
        expect(row.last_error).toContain('dns_failed');
      } else {
        expect(row.status).toBe('failed');
        expect(row.last_error).toMatch(/^(refused_address|bad_url): /);
      }
    }
    expect(connectAttempts).toEqual([]);
    expect(canary.connections()).toBe(0);
  });

  test('a name accepted while it resolved to a public address is refused at delivery once it resolves to loopback (DNS rebinding): failed, not retried', async () => {
    const s = services();
    const app = createApp(s);
    const key = await registerMerchant(app);
    dns['rebind.test'] = ['93.184.216.34'];
    const set = await call(app, '/v1/merchant', { action: 'set_webhook', url: `http://rebind.test:${P}/hook` }, { headers: { authorization: `Bearer ${key}` } });
    expect(set.status).toBe(200);
    expect(connectAttempts).toEqual([]);
    dns['rebind.test'] = ['127.0.0.1'];
    expect(await deliverDueWebhooks(s)).toEqual({ delivered: 0, retrying: 0, failed: 1, disabled: 0 });
    const listed = await call(app, '/v1/merchant', { action: 'webhook_deliveries' }, { headers: { authorization: `Bearer ${key}` } });
    expect(listed.body.data.items[0]).toMatchObject({ status: 'failed', attempts: 1, last_http_status: null });
    expect(listed.body.data.items[0].last_error).toContain('refused_address');
    expect(listed.body.data.items[0].last_error).toContain('loopback');
    expect(connectAttempts).toEqual([]);
    expect(canary.connections()).toBe(0);
    delete dns['rebind.test'];
  });
});
