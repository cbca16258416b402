/** Standard Webhooks signing (spec vector), the retry schedule of DESIGN §8 and status handling. */
import { describe, expect, it } from 'bun:test';
import {
  classifyDeliveryStatus,
  newWebhookSecret,
  nextAttemptDelay,
  retryDelaysMs,
  signWebhook,
  verifyWebhook,
  webhookHeaders,
  type DeliveryVerdict,
} from '../../src/net/standard-webhooks.ts';

// From standard-webhooks spec/standard-webhooks.md ("Signature scheme" example).
const vector = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('signing', () => {
  it('reproduces the Standard Webhooks test vector', () => {
    expect(signWebhook(vector.secret, vector.id, vector.timestamp, vector.body)).toBe(vector.signature);
  });

  it('emits the three webhook-* headers', () => {
    expect(webhookHeaders(vector.secret, vector.id, vector.timestamp, vector.body)).toEqual({
      'webhook-id': vector.id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': vector.signature,
    });
  });

  it('makes fresh secrets of whsec_ + base64 of 32 bytes, different every time', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64').length).toBe(32);
    expect(newWebhookSecret()).not.toBe(a);
  });

  it('round-trips sign and verify with a fresh secret', () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ type: 'payment_request.paid', data: { amount: 1.5 } });
    const headers = webhookHeaders(secret, 'evt_123', 1_700_000_000, body);
    expect(verifyWebhook(secret, headers, body, 1_700_000_010)).toBe(true);
  });

  it('rejects a changed body, another secret, a stale timestamp, and accepts one of several signatures', () => {
    const secret = newWebhookSecret();
    const headers = webhookHeaders(secret, 'evt_1', 1_700_000_000, '{}');
    expect(verifyWebhook(secret, headers, '{ }', 1_700_000_000)).toBe(false);
    expect(verifyWebhook(newWebhookSecret(), headers, '{}', 1_700_000_000)).toBe(false);
    expect(verifyWebhook(secret, headers, '{}', 1_700_000_000 + 301)).toBe(false);
    const rotated = { ...headers, 'webhook-signature': `v1,bm90IGl0 ${headers['webhook-signature']}` };
    expect(verifyWebhook(secret, rotated, '{}', 1_700_000_000)).toBe(true);
  });

  it('refuses a secret without the whsec_ prefix or with a short key', () => {
    expect(() => signWebhook('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'm', 1, '')).toThrow('whsec_');
    expect(() => signWebhook('whsec_c2hvcnQ=', 'm', 1, '')).toThrow('24 to 64 bytes');
  });
});

describe('retry schedule', () => {
  it('is the DESIGN §8 schedule, about three days in total', () => {
    const s = 1000;
    const m = 60 * s;
    const h = 60 * m;
    expect(retryDelaysMs).toEqual([5 * s, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 14 * h, 20 * h, 24 * h]);
    const total = retryDelaysMs.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(72 * h);
    expect(total).toBeLessThan(80 * h);
  });

  it('keeps every jittered delay within ±10% of the schedule', () => {
    for (const [i, base] of retryDelaysMs.entries()) {
      for (const rand of [0, 0.25, 0.5, 0.75, 0.999999]) {
        const delay = nextAttemptDelay(i + 1, rand) as number;
        expect(delay).toBeGreaterThanOrEqual(base * 0.9);
        expect(delay).toBeLessThanOrEqual(base * 1.1);
      }
      expect(nextAttemptDelay(i + 1, 0.5)).toBe(base);
    }
  });

  it('gives up after the last scheduled retry', () => {
    expect(nextAttemptDelay(retryDelaysMs.length + 1, 0.5)).toBeNull();
    expect(nextAttemptDelay(0, 0.5)).toBeNull();
  });
});

describe('classifyDeliveryStatus', () => {
  const table: Array<[number | null, DeliveryVerdict]> = [
    [200, 'delivered'],
    [201, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [410, 'disable'],
    [408, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [599, 'retry'],
    [null, 'retry'],
    [301, 'failed'],
    [302, 'failed'],
    [307, 'failed'],
    [400, 'failed'],
    [401, 'failed'],
    [403, 'failed'],
    [404, 'failed'],
    [409, 'failed'],
    [422, 'failed'],
    [100, 'failed'],
  ];
  it.each(table)('treats status %p as %s', (status, verdict) => {
    expect(classifyDeliveryStatus(status)).toBe(verdict);
  });
});
