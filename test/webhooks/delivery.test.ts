/**
 * Webhook delivery against real HTTP receivers on loopback, with the job function driven
 * directly under a fake clock (so the 5 s … 24 h backoff is skipped, not slept). Every message
 * is checked with the test's own Standard Webhooks verifier.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { createApp } from '../../src/api/app.ts';
import { loadConfig } from '../../src/config.ts';
import { buildServices } from '../../src/daemon/services.ts';
import { openDatabase } from '../../src/db/open.ts';
import { getDelivery } from '../../src/db/webhooks.ts';
import { silentLogger } from '../../src/log.ts';
import { retryDelaysMs } from '../../src/net/standard-webhooks.ts';
import { loadFeePayer, loadMasterKey } from '../../src/secret-files.ts';
import type { Services } from '../../src/services.ts';
import { deliverDueWebhooks } from '../../src/webhooks/deliver.ts';
import { recordMerchantEvent } from '../../src/webhooks/outbox.ts';
import { pruneWebhookHistory, WEBHOOK_HISTORY_DAYS, webhookJob } from '../../src/jobs/webhooks.ts';
import { call, tempDir, testServices } from '../helpers/services.ts';
import { randomAddress, startCanary, startReceiver, verifyStandardWebhook, type Receiver } from './receiver.ts';

const ALLOW_LOOPBACK = { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' };
const START = Date.parse('2030-01-01T00:00:00Z');

/** A fake clock, services on it, an app over them, and a merchant registered through the API. */
async function setup(opts: { services?: Services; clock?: { t: number } } = {}) {
  const clock = opts.clock ?? { t: START };
  const services = opts.services ?? testServices({ env: ALLOW_LOOPBACK, now: () => new Date(clock.t) });
  const app = createApp(services);
  const reg = await call(app, '/v1/merchant', { action: 'register', name: 'Shop', username: `shop-${crypto.randomUUID().slice(0, 8)}`, payout_address: randomAddress() });
  expect(reg.status).toBe(200);
  const key = reg.body.data.api_key as string;
  const merchant = async (action: string, params: Record<string, unknown> = {}) => call(app, '/v1/merchant', { action, ...params }, { headers: { authorization: `Bearer ${key}` } });
  return { clock, services, app, merchant, merchantId: reg.body.data.merchant_id as string };
}

const receivers: Receiver[] = [];
function receiver(script: number[] = [], fallback = 200, headers?: (s: number) => Record<string, string>): Receiver {
  const r = startReceiver(script, fallback, headers);
  receivers.push(r);
  return r;
}
afterEach(() => {
  for (const r of receivers.splice(0)) r.stop();
});

const seconds = (ms: number) => Math.floor(ms / 1000);
const rand = () => 0.5; // jitter factor exactly 1.0

describe('retries', () => {
  test('500 three times then 200: delivered on the 4th attempt, same webhook-id, each attempt on the schedule and recorded', async () => {
    const { clock, services, merchant } = await setup();
    const r = receiver([500, 500, 500], 200);
    const set = await merchant('set_webhook', { url: r.url });
    expect(set.status).toBe(200);
    const secret = set.body.data.secret as string;

    expect(await deliverDueWebhooks(services, { rand })).toEqual({ delivered: 0, retrying: 1, failed: 0, disabled: 0 });
    // Not due again before its delay: nothing is sent.
    clock.t += retryDelaysMs[0]! - 1;
    expect(await deliverDueWebhooks(services, { rand })).toEqual({ delivered: 0, retrying: 0, failed: 0, disabled: 0 });
    clock.t += 1;
    await deliverDueWebhooks(services, { rand });
    clock.t += retryDelaysMs[1]! - 1000;
    await deliverDueWebhooks(services, { rand });
    expect(r.requests).toHaveLength(2);
    clock.t += 1000;
    await deliverDueWebhooks(services, { rand });
    clock.t += retryDelaysMs[2]!;
    expect(await deliverDueWebhooks(services, { rand })).toEqual({ delivered: 1, retrying: 0, failed: 0, disabled: 0 });

    expect(r.requests).toHaveLength(4);
    const ids = new Set(r.requests.map((q) => q.headers.get('webhook-id')));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^msg_[0-9a-z]{26}$/);
    const stamps = r.requests.map((q) => Number(q.headers.get('webhook-timestamp')));
    expect(stamps).toEqual([seconds(START), seconds(START + 5_000), seconds(START + 305_000), seconds(START + 2_105_000)]);
    for (const q of r.requests) expect(await verifyStandardWebhook(secret, q.headers, q.body, Number(q.headers.get('webhook-timestamp')))).toBe(true);
    expect(new Set(r.requests.map((q) => q.body)).size).toBe(1);

    const list = await merchant('webhook_deliveries');
    const row = list.body.data.items[0];
    expect(row).toMatchObject({ delivery_id: [...ids][0], event_type: 'webhook.test', status: 'delivered', attempts: 4, last_http_status: 200 });
    expect(row.attempt_log.map((a: any) => [a.attempt, a.http_status, a.outcome])).toEqual([
      [1, 500, 'retry'],
      [2, 500, 'retry'],
      [3, 500, 'retry'],
      [4, 200, 'delivered'],
    ]);
    for (const a of row.attempt_log) expect(a.duration_ms).toBeGreaterThanOrEqual(0);
    expect(row.attempt_log[0].error).toContain('HTTP 500');
  });

  test('a receiver that never answers is retried on the DESIGN schedule (about 3 days), then the message fails for good', async () => {
    const { clock, services, merchant } = await setup();
    const dead = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
    const port = dead.port;
    dead.stop(true);
    await merchant('set_webhook', { url: `http://127.0.0.1:${port}/gone` });
    const gaps: number[] = [];
    let last = clock.t;
    for (let i = 0; i < 20; i++) {
      const report = await deliverDueWebhooks(services, { rand: () => 0 });
      if (report.retrying + report.failed > 0) {
        gaps.push(clock.t - last);
        last = clock.t;
      }
      if (report.failed) break;
      const row = (await merchant('webhook_deliveries')).body.data.items[0];
      clock.t = Date.parse(row.next_attempt_at);
    }
    expect(gaps.slice(1)).toEqual(retryDelaysMs.map((d) => Math.round(d * 0.9)));
    const row = (await merchant('webhook_deliveries')).body.data.items[0];
    expect(row).toMatchObject({ status: 'failed', attempts: 10, next_attempt_at: null });
    expect(row.last_error).toContain('connect_failed');
    expect(row.last_error).toContain('gave up after 10 attempts');
    const total = retryDelaysMs.reduce((a, b) => a + b, 0);
    expect(total / 3_600_000).toBeGreaterThan(70);
    expect(total / 3_600_000).toBeLessThan(80);
  });

  test('408 and 429 are retried; 400 fails the message at once without retry', async () => {
    const { services, merchant, clock } = await setup();
    const r = receiver([408, 429, 400]);
    await merchant('set_webhook', { url: r.url });
    await deliverDueWebhooks(services, { rand });
    clock.t += 10_000;
    await deliverDueWebhooks(services, { rand });
    clock.t += 10 * 60_000;
    expect(await deliverDueWebhooks(services, { rand })).toMatchObject({ failed: 1 });
    clock.t += 24 * 3_600_000;
    expect(await deliverDueWebhooks(services, { rand })).toEqual({ delivered: 0, retrying: 0, failed: 0, disabled: 0 });
    expect(r.requests).toHaveLength(3);
  });
});

describe('410, redirects, redelivery, rotation', () => {
  test('410 Gone disables the endpoint; nothing more is sent to it; the next URL takes its messages with the same webhook-id', async () => {
    const { services, merchant, merchantId, clock } = await setup();
    const gone = receiver([410]);
    await merchant('set_webhook', { url: gone.url });
    expect(await deliverDueWebhooks(services, { rand })).toMatchObject({ disabled: 1 });
    const info = (await merchant('info')).body.data;
    expect(info.webhook).toBeNull();
    const listed = (await merchant('webhook_deliveries')).body.data;
    expect(listed.items[0]).toMatchObject({ status: 'pending', last_http_status: 410 });
    expect(listed.items[0].attempt_log[0].outcome).toBe('disabled');
    expect(listed.items[0].last_error).toContain('410');
    // New events while disabled are in the feed but have no endpoint to go to.
    await services.db.transaction(async () => await recordMerchantEvent(services.db, merchantId, 'payment_request.paid', { request_id: 'req_x', amount: 1 }, clock.t));
    clock.t += 3_600_000;
    expect(await deliverDueWebhooks(services, { rand })).toEqual({ delivered: 0, retrying: 0, failed: 0, disabled: 0 });
    expect(gone.requests).toHaveLength(1);
    const redeliver = await merchant('redeliver', { delivery_id: listed.items[0].delivery_id });
    expect(redeliver.body.error.code).toBe('INVALID_STATUS');

    const next = receiver();
    const set = await merchant('set_webhook', { url: next.url });
    await deliverDueWebhooks(services, { rand });
    // The 410'd webhook.test, then the new endpoint's own webhook.test, in the order they were written.
    expect(next.requests.map((q) => JSON.parse(q.body).type)).toEqual(['webhook.test', 'webhook.test']);
    expect(next.requests[0]!.headers.get('webhook-id')).toBe(gone.requests[0]!.headers.get('webhook-id'));
    expect(await verifyStandardWebhook(set.body.data.secret, next.requests[0]!.headers, next.requests[0]!.body, seconds(clock.t))).toBe(true);
  });

  test('a 3xx is not followed: a redirect to a loopback canary fails the message and the canary sees no connection', async () => {
    const { services, merchant } = await setup();
    const canary = startCanary();
    try {
      const r = receiver([302], 200, () => ({ location: `http://127.0.0.1:${canary.port}/internal` }));
      await merchant('set_webhook', { url: r.url });
      expect(await deliverDueWebhooks(services, { rand })).toMatchObject({ failed: 1, retrying: 0 });
      await Bun.sleep(50);
      expect(canary.connections()).toBe(0);
      const row = (await merchant('webhook_deliveries')).body.data.items[0];
      expect(row).toMatchObject({ status: 'failed', last_http_status: 302 });
      expect(row.last_error).toContain('not followed');
    } finally {
      canary.stop();
    }
  });

  test('redeliver sends a delivered message again with the same webhook-id; another merchant cannot redeliver it', async () => {
    const { services, merchant, app } = await setup();
    const r = receiver();
    await merchant('set_webhook', { url: r.url });
    await deliverDueWebhooks(services, { rand });
    const id = r.requests[0]!.headers.get('webhook-id')!;
    const again = await merchant('redeliver', { delivery_id: id });
    expect(again.body.data).toMatchObject({ delivery_id: id, status: 'pending' });
    await deliverDueWebhooks(services, { rand });
    expect(r.requests.map((q) => q.headers.get('webhook-id'))).toEqual([id, id]);
    expect((await merchant('webhook_deliveries')).body.data.items[0]).toMatchObject({ status: 'delivered', attempts: 2 });

    const other = await call(app, '/v1/merchant', { action: 'register', name: 'Other', username: 'other-shop', payout_address: randomAddress() });
    const stolen = await call(app, '/v1/merchant', { action: 'redeliver', delivery_id: id }, { headers: { authorization: `Bearer ${other.body.data.api_key}` } });
    expect(stolen.status).toBe(404);
    expect(JSON.stringify(stolen.body)).not.toContain('webhook.test');
    const unknown = await merchant('redeliver', { delivery_id: `msg_${'0'.repeat(26)}` });
    expect(unknown.body.error.code).toBe('NOT_FOUND');
  });

  test('rotate_webhook_secret: for 24 h a message carries a signature for the new and one for the old secret; then only the new', async () => {
    const { services, merchant, merchantId, clock } = await setup();
    const r = receiver();
    const set = await merchant('set_webhook', { url: r.url });
    const old = set.body.data.secret as string;
    const rotated = await merchant('rotate_webhook_secret');
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.secret as string;
    expect(fresh).not.toBe(old);
    expect(Date.parse(rotated.body.data.previous_secret_valid_until)).toBe(clock.t + 24 * 3_600_000);
    await deliverDueWebhooks(services, { rand });
    const q = r.requests[0]!;
    expect(q.headers.get('webhook-signature')!.split(' ')).toHaveLength(2);
    expect(await verifyStandardWebhook(fresh, q.headers, q.body, seconds(clock.t))).toBe(true);
    expect(await verifyStandardWebhook(old, q.headers, q.body, seconds(clock.t))).toBe(true);
    clock.t += 24 * 3_600_000 + 1000;
    await services.db.transaction(async () => await recordMerchantEvent(services.db, merchantId, 'payment_request.paid', { request_id: 'req_y' }, clock.t));
    await deliverDueWebhooks(services, { rand });
    const later = r.requests[1]!;
    expect(later.headers.get('webhook-signature')!.split(' ')).toHaveLength(1);
    expect(await verifyStandardWebhook(fresh, later.headers, later.body, seconds(clock.t))).toBe(true);
    expect(await verifyStandardWebhook(old, later.headers, later.body, seconds(clock.t))).toBe(false);
  });

  test('rotate without a webhook is INVALID_STATUS; secrets are stored sealed, never in clear', async () => {
    const { merchant, services } = await setup();
    expect((await merchant('rotate_webhook_secret')).body.error.code).toBe('INVALID_STATUS');
    const r = receiver();
    const set = await merchant('set_webhook', { url: r.url });
    const secret = set.body.data.secret as string;
    const row = (await services.db.get('SELECT secret FROM webhook_endpoints')) as { secret: Uint8Array };
    expect(Buffer.from(row.secret).toString('latin1')).not.toContain(secret.slice(6, 20));
    expect(Buffer.from(row.secret).toString('latin1')).not.toContain('whsec_');
  });
});

describe('outbox and restarts', () => {
  test('recordMerchantEvent writes the event and one outbox row per active endpoint; without a webhook, or for a type webhooks do not carry, only the event', async () => {
    const { services, merchantId, merchant } = await setup();
    const first = await services.db.transaction(async () => await recordMerchantEvent(services.db, merchantId, 'payment_request.paid', { request_id: 'req_1', amount: 5 }, START));
    expect(first.deliveryId).toBeNull();
    const events = (await services.db.all('SELECT type, data FROM events WHERE merchant_id = ?', merchantId)) as { type: string; data: string }[];
    expect(events).toEqual([{ type: 'payment_request.paid', data: JSON.stringify({ request_id: 'req_1', amount: 5 }) }]);
    const r = receiver();
    await merchant('set_webhook', { url: r.url });
    const second = await services.db.transaction(async () => await recordMerchantEvent(services.db, merchantId, 'payment_request.paid', { request_id: 'req_2', amount: 6 }, START));
    const row = (await getDelivery(services.db, second.deliveryId!))!;
    expect(JSON.parse(row.payload)).toEqual({ type: 'payment_request.paid', timestamp: new Date(START).toISOString(), event_id: second.eventId, data: { request_id: 'req_2', amount: 6 } });
    // A type webhooks do not carry stays in the feed only, even with an active endpoint.
    const feedOnly = await services.db.transaction(async () => await recordMerchantEvent(services.db, merchantId, 'payment_request.created', { request_id: 'req_4' }, START));
    expect(feedOnly.deliveryId).toBeNull();
    expect(await services.db.get('SELECT type FROM events WHERE event_id = ?', feedOnly.eventId)).toEqual({ type: 'payment_request.created' });
    // A write that rolls back leaves neither the event nor the message.
    expect(async () =>
      await services.db
        .transaction(async () => {
          await recordMerchantEvent(services.db, merchantId, 'payment_request.paid', { request_id: 'req_3' }, START);
          throw new Error('business write failed');
        }),
    ).toThrow('business write failed');
    expect(((await services.db.get("SELECT count(*) AS n FROM events WHERE data LIKE '%req_3%'")) as { n: bigint }).n).toBe(0n);
    expect(((await services.db.get("SELECT count(*) AS n FROM webhook_deliveries WHERE payload LIKE '%req_3%'")) as { n: bigint }).n).toBe(0n);
  });

  test('history: finished messages older than 30 days go with their attempts; pending and recent ones stay', async () => {
    const { clock, services, merchant } = await setup();
    const ok = receiver([], 200);
    await merchant('set_webhook', { url: ok.url });
    await deliverDueWebhooks(services, { rand }); // webhook.test delivered at START
    const count = async (table: string) => Number(((await services.db.get(`SELECT count(*) AS n FROM ${table}`)) as { n: bigint }).n);
    expect([await count('webhook_deliveries'), await count('webhook_attempts')]).toEqual([1, 1]);
    // A second endpoint that never answers: its message stays pending through its retries.
    const down = receiver([], 503);
    await merchant('set_webhook', { url: down.url });
    clock.t += 1000;
    await deliverDueWebhooks(services, { rand });
    clock.t += WEBHOOK_HISTORY_DAYS * 86_400_000 - 1000;
    expect(await pruneWebhookHistory(services)).toBe(0); // exactly 30 days: kept
    clock.t += 1;
    expect(await pruneWebhookHistory(services)).toBe(1);
    const left = await services.db.all('SELECT event_type, status FROM webhook_deliveries');
    expect(left).toEqual([{ event_type: 'webhook.test', status: 'pending' }]);
    expect(await count('webhook_attempts')).toBe(1);
    expect(await services.db.all('PRAGMA foreign_key_check')).toEqual([]);
    expect((await merchant('webhook_deliveries')).body.data.total).toBe(1);
  });

  test('two overlapping runs send a message once (the lease is taken before sending)', async () => {
    const { services, merchant } = await setup();
    const r = receiver();
    await merchant('set_webhook', { url: r.url });
    const [a, b] = await Promise.all([deliverDueWebhooks(services, { rand }), deliverDueWebhooks(services, { rand })]);
    expect(a.delivered + b.delivered).toBe(1);
    expect(r.requests).toHaveLength(1);
  });

  test('deliveries survive a restart: services re-created over the same SQLite file resume the retry from the database', async () => {
    const dataDir = tempDir('aw-webhook-restart-');
    const clock = { t: START };
    const open = () => {
      const config = loadConfig({ dataDir }, { ...ALLOW_LOOPBACK, AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '100000' });
      config.rpcUrl = 'http://127.0.0.1:9';
      const db = openDatabase(join(dataDir, 'wallet.db'), { network: config.solana.network });
      return buildServices({ config, db, log: silentLogger, masterKey: loadMasterKey(dataDir), feePayer: loadFeePayer(dataDir, 'fee-payer.json'), listenUrl: () => 'http://127.0.0.1:8787', now: () => new Date(clock.t) });
    };
    const first = open();
    const { merchant } = await setup({ services: first, clock });
    const r = receiver([503], 200);
    const set = await merchant('set_webhook', { url: r.url });
    expect(await deliverDueWebhooks(first, { rand })).toMatchObject({ retrying: 1 });
    first.db.close();

    const second = open();
    clock.t += retryDelaysMs[0]!;
    // The daemon's job, run as the runner would at start.
    await webhookJob(second, { rand }).run();
    expect(r.requests).toHaveLength(2);
    expect(r.requests[1]!.headers.get('webhook-id')).toBe(r.requests[0]!.headers.get('webhook-id'));
    expect(await verifyStandardWebhook(set.body.data.secret, r.requests[1]!.headers, r.requests[1]!.body, seconds(clock.t))).toBe(true);
    const row = (await second.db.get("SELECT status, attempts FROM webhook_deliveries")) as { status: string; attempts: bigint };
    expect(row).toEqual({ status: 'delivered', attempts: 2n });
    second.db.close();
  });
});

afterAll(() => {
  for (const r of receivers.splice(0)) r.stop();
});
