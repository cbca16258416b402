/**
 * Merchant webhooks on the Standard Webhooks wire format (standard-webhooks
 * `spec/standard-webhooks.md`; DESIGN §8 "Webhook wire format"): the three `webhook-*` headers,
 * `v1` HMAC-SHA256 signatures, the retry schedule and what an HTTP status means for delivery.
 * Pure apart from `newWebhookSecret`'s randomness; sending and recording attempts live elsewhere.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A fresh per-endpoint signing secret: `whsec_` + base64 of 32 random bytes. Shown to the merchant once. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key inside a `whsec_` secret; the spec allows 24 to 64 bytes. */
function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('webhook secret must start with "whsec_"');
  const encoded = secret.slice(SECRET_PREFIX.length);
  const key = Buffer.from(encoded, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.length < 24 || key.length > 64) {
    throw new Error('webhook secret must be "whsec_" followed by base64 of 24 to 64 bytes');
  }
  return key;
}

/**
 * The `webhook-signature` value for one message: `v1,` + base64 HMAC-SHA256, keyed with the
 * base64-decoded part of `secret`, over `${id}.${timestampSeconds}.${body}`. `body` MUST be the
 * exact bytes sent (sign the serialized string, never re-serialize).
 */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one delivery attempt. `id` MUST stay the same across retries of a message. */
export function webhookHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signWebhook(secret, id, timestampSeconds, body),
  };
}

/**
 * What a receiver does: true when one of the space-separated `v1,` signatures matches (constant
 * time) and the timestamp is within `toleranceSeconds` of `nowSeconds` (replay protection; the
 * spec suggests 5 minutes). Used by our tests and as the reference for merchants.
 */
export function verifyWebhook(
  secret: string,
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const timestamp = Number(headers['webhook-timestamp']);
  if (!/^\d+$/.test(headers['webhook-timestamp']) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, headers['webhook-id'], timestamp, body));
  return headers['webhook-signature'].split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/**
 * Delay before each retry (DESIGN §8): `retryDelaysMs[n - 1]` follows the n-th failed attempt.
 * About 3 days in total; after the last entry the message is given up.
 */
export const retryDelaysMs: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
];

/**
 * The delay after the `failedAttempts`-th failed attempt (1-based) with ±10% jitter, so that
 * endpoints that failed together do not retry together; null when the schedule is exhausted.
 * `rand` is uniform in [0, 1), passed in to keep the function pure.
 */
export function nextAttemptDelay(failedAttempts: number, rand: number): number | null {
  const base = retryDelaysMs[failedAttempts - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.9 + 0.2 * rand));
}

/** What a delivery attempt's outcome means for the message and the endpoint. */
export type DeliveryVerdict = 'delivered' | 'retry' | 'disable' | 'failed';

/**
 * Classifies an attempt by its HTTP status, or `null` when no response came (network error,
 * timeout). 2xx delivered; 410 Gone disables the endpoint; 408, 429, 5xx and no response are
 * retried (STYLE habit 11); everything else, 3xx included (redirects are never followed), fails
 * the message without retry.
 */
export function classifyDeliveryStatus(status: number | null): DeliveryVerdict {
  if (status === null) return 'retry';
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'disable';
  if (status === 408 || status === 429 || (status >= 500 && status < 600)) return 'retry';
  return 'failed';
}
