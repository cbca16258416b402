/**
 * Delivering queued webhook messages (DESIGN §8 "Webhook wire format"; STYLE habits 9–11).
 *
 * Each run takes the due messages of active endpoints from the database, oldest first, leases
 * each row before its first await (so overlapping runs or a second process never send a message
 * twice at once), POSTs it through the one outbound client with Standard Webhooks headers, and
 * records the attempt in the same transaction that moves the message on:
 *
 * - 2xx → delivered;
 * - 408, 429, 5xx, a timeout or a network error → retried after 5 s, 5 min, 30 min, 2 h, 5 h,
 *   10 h, 14 h, 20 h, 24 h (±10% jitter; about 3 days), then failed;
 * - 410 Gone → the endpoint is disabled; its messages wait (pending) until set_webhook sets a new
 *   URL, which takes them over;
 * - any other status, 3xx included (redirects are never followed), and a refused target (a
 *   private or loopback address not allowlisted, a URL the client rejects) → failed at once:
 *   retrying cannot change the answer. A merchant can redeliver.
 *
 * The `webhook-id` is the delivery_id: the same on every attempt and on redelivery. The
 * signature covers the exact stored body. Everything is in the database, so deliveries survive
 * restarts: a message leased by a process that died is retried once its lease ends.
 */
import {
  getDelivery,
  getEndpoint,
  disableEndpoint,
  dueDeliveries,
  leaseDelivery,
  releaseDeliveryLease,
  recordAttempt,
  type AttemptOutcome,
  type DeliveryRow,
  type DeliveryStatus,
} from '../db/webhooks.ts';
import { OutboundError, type Outbound, type OutboundErrorKind } from '../net/outbound.ts';
import { classifyDeliveryStatus, nextAttemptDelay, signWebhook, webhookHeaders, type DeliveryVerdict } from '../net/standard-webhooks.ts';
import type { Services } from '../services.ts';
import { webhookOutbound } from './net.ts';
import { openWebhookSecret } from './secrets.ts';

/** Messages per run. */
const BATCH = 50;
/** Response bytes read (only a short excerpt is kept for the attempt log). */
const RESPONSE_CAP = 4096;
/** Beyond the outbound total timeout, how long a lease outlives an attempt. */
const LEASE_MARGIN_MS = 30_000;
/** Outbound failures no retry can fix. */
const PERMANENT: readonly OutboundErrorKind[] = ['bad_url', 'bad_request', 'refused_address'];

export interface DeliveryOptions {
  /** Default: {@link webhookOutbound} of the services. */
  outbound?: Outbound;
  /** Uniform in [0, 1), for the retry jitter; default Math.random. */
  rand?: () => number;
}

/** What one run did. */
export interface WebhookReport {
  delivered: number;
  retrying: number;
  failed: number;
  disabled: number;
}

function excerpt(body: Uint8Array): string {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(body.subarray(0, 200));
  // Control characters out, so an attempt log line stays one line.
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

interface Attempt {
  verdict: DeliveryVerdict;
  httpStatus: number | null;
  error: string | null;
}

async function send(services: Services, outbound: Outbound, delivery: DeliveryRow, url: string, headers: Record<string, string>): Promise<Attempt> {
  try {
    // A merchant acts on a webhook: it leaves only once the ledger that recorded the event is on the disk.
    await services.durable();
    const res = await outbound.request(url, { method: 'POST', headers, body: delivery.payload, maxBytes: RESPONSE_CAP });
    const verdict = classifyDeliveryStatus(res.status);
    if (verdict === 'delivered') return { verdict, httpStatus: res.status, error: null };
    const location = res.headers.get('location');
    const detail = res.status >= 300 && res.status < 400 ? `redirect${location ? ` to ${location.slice(0, 200)}` : ''} not followed` : excerpt(res.body);
    return { verdict, httpStatus: res.status, error: `HTTP ${res.status}${detail ? `: ${detail}` : ''}` };
  } catch (err) {
    if (err instanceof OutboundError) return { verdict: PERMANENT.includes(err.kind) ? 'failed' : 'retry', httpStatus: null, error: `${err.kind}: ${err.message}` };
    services.log.error('webhook attempt crashed', { delivery_id: delivery.delivery_id, error: (err as Error)?.message, stack: (err as Error)?.stack });
    return { verdict: 'retry', httpStatus: null, error: 'internal error while sending' };
  }
}

/**
 * One attempt of one due message: lease, sign, send, record. Returns the attempt's outcome, or
 * null when the row was not ours to send (leased elsewhere, delivered meanwhile, endpoint gone).
 */
async function attemptDelivery(services: Services, due: DeliveryRow, outbound: Outbound, rand: () => number, report: WebhookReport): Promise<AttemptOutcome | null> {
  const { db } = services;
  const startedAt = services.now().getTime();
  const leaseMs = services.config.outbound.total_timeout_ms + LEASE_MARGIN_MS;
  const claimed = await db
    .transaction(async () => {
      if (!(await leaseDelivery(db, due.delivery_id, startedAt, startedAt + leaseMs))) return null;
      // Re-read under the lease: set_webhook may have moved the message to a new endpoint.
      const delivery = (await getDelivery(db, due.delivery_id))!;
      const endpoint = await getEndpoint(db, delivery.endpoint_id);
      if (!endpoint || endpoint.status !== 'active') {
        await releaseDeliveryLease(db, delivery.delivery_id);
        return null;
      }
      return { delivery, endpoint };
    });
  if (!claimed) return null;
  const { delivery, endpoint } = claimed;

  const timestamp = Math.floor(startedAt / 1000);
  let signed: Record<string, string> | null = null;
  try {
    signed = webhookHeaders(openWebhookSecret(services.masterKey, endpoint.endpoint_id, endpoint.secret), delivery.delivery_id, timestamp, delivery.payload);
    if (endpoint.previous_secret && endpoint.previous_until !== null && Number(endpoint.previous_until) > startedAt) {
      // Rotation grace: both signatures, space-separated (Standard Webhooks), so a receiver on either secret accepts.
      const previous = openWebhookSecret(services.masterKey, endpoint.endpoint_id, endpoint.previous_secret);
      signed['webhook-signature'] = `${signed['webhook-signature']} ${signWebhook(previous, delivery.delivery_id, timestamp, delivery.payload)}`;
    }
  } catch (err) {
    // A secret that cannot be opened (another master key) never will be: nothing unsigned is sent.
    services.log.error('cannot open a webhook signing secret', { endpoint_id: endpoint.endpoint_id, error: (err as Error)?.message });
  }
  const headers = signed && { 'content-type': 'application/json', 'user-agent': `agent-wallet-webhooks/${services.version}`, ...signed };

  const t0 = performance.now();
  const attempt: Attempt = headers
    ? await send(services, outbound, delivery, endpoint.url, headers)
    : { verdict: 'failed', httpStatus: null, error: 'the signing secret cannot be opened: set_webhook again for a new secret' };
  const durationMs = Math.round(performance.now() - t0);
  const now = services.now().getTime();

  let outcome: AttemptOutcome;
  let status: DeliveryStatus;
  let nextAttemptAt: number | null = null;
  let error = attempt.error;
  switch (attempt.verdict) {
    case 'delivered':
      outcome = 'delivered';
      status = 'delivered';
      break;
    case 'retry': {
      const delay = nextAttemptDelay(Number(delivery.failures) + 1, rand());
      if (delay === null) {
        outcome = 'failed';
        status = 'failed';
        error = `${error ?? 'failed'}; gave up after ${Number(delivery.attempts) + 1} attempts`;
      } else {
        outcome = 'retry';
        status = 'pending';
        nextAttemptAt = now + delay;
      }
      break;
    }
    case 'disable':
      // The message waits for the merchant's next URL; set_webhook moves it there.
      outcome = 'disabled';
      status = 'pending';
      nextAttemptAt = now;
      error = `${error ?? 'HTTP 410'}; the receiver answered 410 Gone, so the webhook endpoint was disabled: set_webhook to resume`;
      break;
    default:
      outcome = 'failed';
      status = 'failed';
  }
  await db.transaction(async () => {
    await recordAttempt(db, { delivery, url: endpoint.url, startedAt, durationMs, httpStatus: attempt.httpStatus, error, outcome, status, nextAttemptAt, now });
    if (outcome === 'disabled') await disableEndpoint(db, endpoint.endpoint_id, 'the receiver answered 410 Gone', now);
  });

  const fields = { delivery_id: delivery.delivery_id, merchant_id: delivery.merchant_id, event_type: delivery.event_type, http_status: attempt.httpStatus, error, duration_ms: durationMs };
  if (outcome === 'delivered') {
    report.delivered++;
    services.log.debug('webhook delivered', fields);
  } else if (outcome === 'retry') {
    report.retrying++;
    services.log.info('webhook attempt failed; will retry', { ...fields, next_attempt_at: new Date(nextAttemptAt!).toISOString() });
  } else if (outcome === 'disabled') {
    report.disabled++;
    services.log.warn('webhook endpoint disabled (410 Gone)', { ...fields, endpoint_id: endpoint.endpoint_id });
  } else {
    report.failed++;
    services.log.warn('webhook failed for good', fields);
  }
  return outcome;
}

/**
 * Delivers every due message once (the webhooks job calls this every second; tests call it
 * with a fake clock). Endpoints are served concurrently; each endpoint's messages go one after
 * another in the order they were written, and an endpoint whose attempt is to be retried (or
 * that was disabled) gets no more attempts in this run. Never throws for a message that fails.
 */
export async function deliverDueWebhooks(services: Services, opts: DeliveryOptions = {}): Promise<WebhookReport> {
  const outbound = opts.outbound ?? webhookOutbound(services);
  const rand = opts.rand ?? Math.random;
  const report: WebhookReport = { delivered: 0, retrying: 0, failed: 0, disabled: 0 };
  const queues = new Map<string, DeliveryRow[]>();
  for (const row of (await dueDeliveries(services.db, services.now().getTime(), BATCH))) {
    const queue = queues.get(row.endpoint_id) ?? [];
    queue.push(row);
    queues.set(row.endpoint_id, queue);
  }
  await Promise.all(
    [...queues.values()].map(async (queue) => {
      for (const row of queue) {
        const outcome = await attemptDelivery(services, row, outbound, rand, report);
        if (outcome === 'retry' || outcome === 'disabled') break;
      }
    }),
  );
  return report;
}
