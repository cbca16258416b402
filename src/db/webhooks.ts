/**
 * The webhook outbox (DESIGN §8, STYLE habit 11): endpoints, one delivery row per message and
 * endpoint, and every attempt. Delivery rows are written in the transaction of the change they
 * announce; the webhooks job leases a due row before it sends (a crash retries after the lease).
 */
import type { Store } from './store.ts';

/** Break ties of created_at: SQLite's rowid is insertion order; PostgreSQL has no rowid, so listings order ties by the primary key there. */
const TIE = { sqlite: 'rowid', postgres: 'delivery_id' } as const;
/** The send queue keeps the written order on PostgreSQL through the event's seq (taken in the same transaction; events are never deleted). */
const DUE_TIE = { sqlite: 'd.rowid', postgres: '(SELECT seq FROM events WHERE event_id = d.event_id)' } as const;

export type EndpointStatus = 'active' | 'disabled' | 'replaced';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'disabled';

/** A row of `webhook_endpoints`; `secret` and `previous_secret` are sealed. */
export interface EndpointRow {
  endpoint_id: string;
  merchant_id: string;
  url: string;
  secret: Uint8Array;
  previous_secret: Uint8Array | null;
  previous_until: bigint | null;
  status: EndpointStatus;
  disabled_reason: string | null;
  created_at: bigint;
  updated_at: bigint;
}

/** A row of `webhook_deliveries`: one message to one endpoint. */
export interface DeliveryRow {
  delivery_id: string;
  endpoint_id: string;
  merchant_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: DeliveryStatus;
  attempts: bigint;
  failures: bigint;
  next_attempt_at: bigint | null;
  lease_until: bigint | null;
  last_status: bigint | null;
  last_error: string | null;
  created_at: bigint;
  updated_at: bigint;
  delivered_at: bigint | null;
}

/** A row of `webhook_attempts`. */
export interface AttemptRow {
  seq: bigint;
  delivery_id: string;
  endpoint_id: string;
  url: string;
  attempt: bigint;
  started_at: bigint;
  duration_ms: bigint;
  http_status: bigint | null;
  error: string | null;
  outcome: AttemptOutcome;
}

// ---------------------------------------------------------------------------------------------
// Endpoints

/** The merchant's active endpoint (at most one), or null. */
export async function activeEndpoint(db: Store, merchantId: string): Promise<EndpointRow | null> {
  return await db.get<EndpointRow>("SELECT * FROM webhook_endpoints WHERE merchant_id = ? AND status = 'active'", merchantId);
}

/** An endpoint by id, whatever its status. */
export async function getEndpoint(db: Store, endpointId: string): Promise<EndpointRow | null> {
  return await db.get<EndpointRow>('SELECT * FROM webhook_endpoints WHERE endpoint_id = ?', endpointId);
}

/**
 * Makes a new endpoint the merchant's active one; the previous active endpoint becomes
 * 'replaced' and its undelivered messages move to the new one (a merchant that changes its URL
 * loses no notification). Call inside a write transaction.
 */
export async function insertActiveEndpoint(db: Store, e: { endpoint_id: string; merchant_id: string; url: string; secret: Uint8Array; now: number }): Promise<void> {
  const previous = await activeEndpoint(db, e.merchant_id);
  if (previous) await db.run("UPDATE webhook_endpoints SET status = 'replaced', updated_at = ? WHERE endpoint_id = ?", e.now, previous.endpoint_id);
  await db.run("INSERT INTO webhook_endpoints (endpoint_id, merchant_id, url, secret, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'active', ?, ?)", e.endpoint_id,
    e.merchant_id,
    e.url,
    e.secret,
    e.now,
    e.now,
  );
  // A new URL gets a fresh retry schedule: the old URL's failures say nothing about it.
  await db.run("UPDATE webhook_deliveries SET endpoint_id = ?, failures = 0, next_attempt_at = ?, updated_at = ? WHERE merchant_id = ? AND status = 'pending'", e.endpoint_id,
    e.now,
    e.now,
    e.merchant_id,
  );
}

/** A new secret for an active endpoint; the old one keeps signing (as a second signature) until `previousUntil`. */
export async function rotateEndpointSecret(db: Store, endpointId: string, secret: Uint8Array, previous: Uint8Array, previousUntil: number, now: number): Promise<boolean> {
  return (
    (await db
      .run("UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_until = ?, updated_at = ? WHERE endpoint_id = ? AND status = 'active'", secret, previous, previousUntil, now, endpointId)).changes === 1
  );
}

/** Disables an active endpoint (410 Gone from the receiver); its pending messages stay pending until a new endpoint is set. */
export async function disableEndpoint(db: Store, endpointId: string, reason: string, now: number): Promise<boolean> {
  return (await db.run("UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ?, updated_at = ? WHERE endpoint_id = ? AND status = 'active'", reason, now, endpointId)).changes === 1;
}

// ---------------------------------------------------------------------------------------------
// Deliveries

/** Queues one message for an endpoint, due at once. Call inside the transaction of the change. */
export async function insertDelivery(db: Store, d: { delivery_id: string; endpoint_id: string; merchant_id: string; event_id: string; event_type: string; payload: string; now: number }): Promise<void> {
  await db.run(`INSERT INTO webhook_deliveries (delivery_id, endpoint_id, merchant_id, event_id, event_type, payload, status, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`, d.delivery_id, d.endpoint_id, d.merchant_id, d.event_id, d.event_type, d.payload, d.now, d.now, d.now);
}

/** A delivery by id (callers check it belongs to the merchant asking). */
export async function getDelivery(db: Store, deliveryId: string): Promise<DeliveryRow | null> {
  return await db.get<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE delivery_id = ?', deliveryId);
}

/**
 * Pending deliveries that are due and not leased, to active endpoints only, oldest first (each
 * endpoint's messages go out in the order they were written).
 */
export async function dueDeliveries(db: Store, now: number, limit: number): Promise<DeliveryRow[]> {
  return await db
    .all<DeliveryRow>(`SELECT d.* FROM webhook_deliveries d JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id AND e.status = 'active'
       WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
       ORDER BY d.created_at, ${DUE_TIE[db.dialect]} LIMIT ?`, now, now, limit);
}

/** Gives a leased row back untouched (its endpoint is no longer active). */
export async function releaseDeliveryLease(db: Store, deliveryId: string): Promise<void> {
  await db.run('UPDATE webhook_deliveries SET lease_until = NULL WHERE delivery_id = ?', deliveryId);
}

/** Takes the lease on a due row before sending; false when another run took it or it is no longer pending. */
export async function leaseDelivery(db: Store, deliveryId: string, now: number, until: number): Promise<boolean> {
  return (
    (await db
      .run("UPDATE webhook_deliveries SET lease_until = ? WHERE delivery_id = ? AND status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)", until, deliveryId, now, now)).changes === 1
  );
}

/** Records one attempt and its effect on the delivery row: next status, next attempt time, counters. */
export async function recordAttempt(
  db: Store,
  a: {
    delivery: DeliveryRow;
    url: string;
    startedAt: number;
    durationMs: number;
    httpStatus: number | null;
    error: string | null;
    outcome: AttemptOutcome;
    /** The row's status after this attempt. */
    status: DeliveryStatus;
    nextAttemptAt: number | null;
    now: number;
  },
): Promise<void> {
  const attempt = a.delivery.attempts + 1n;
  await db.run(`INSERT INTO webhook_attempts (delivery_id, endpoint_id, url, attempt, started_at, duration_ms, http_status, error, outcome)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.delivery.delivery_id, a.delivery.endpoint_id, a.url, attempt, a.startedAt, a.durationMs, a.httpStatus, a.error, a.outcome);
  await db.run(`UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, failures = failures + ?, next_attempt_at = ?, lease_until = NULL,
       last_status = ?, last_error = ?, updated_at = ?, delivered_at = coalesce(?, delivered_at)
     WHERE delivery_id = ?`, a.status,
    a.outcome === 'delivered' ? 0 : 1,
    a.nextAttemptAt,
    a.httpStatus,
    a.error,
    a.now,
    a.outcome === 'delivered' ? a.now : null,
    a.delivery.delivery_id,
  );
}

/**
 * Puts a message back in the queue of `endpointId`, due at once, with a fresh retry schedule.
 * Keeps its delivery_id (the webhook-id), so the receiver can de-duplicate.
 */
export async function requeueDelivery(db: Store, deliveryId: string, endpointId: string, now: number): Promise<boolean> {
  return (
    (await db
      .run("UPDATE webhook_deliveries SET status = 'pending', endpoint_id = ?, failures = 0, next_attempt_at = ?, lease_until = NULL, updated_at = ? WHERE delivery_id = ?", endpointId, now, now, deliveryId)).changes === 1
  );
}

/** A merchant's deliveries, newest first. */
export async function merchantDeliveries(db: Store, merchantId: string, limit: number, offset: number): Promise<{ items: DeliveryRow[]; total: number }> {
  const total = await db.get<{ n: bigint }>('SELECT count(*) AS n FROM webhook_deliveries WHERE merchant_id = ?', merchantId);
  const items = await db
    .all<DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE merchant_id = ? ORDER BY created_at DESC, ${TIE[db.dialect]} DESC LIMIT ? OFFSET ?`, merchantId, limit, offset);
  return { items, total: Number(total?.n ?? 0n) };
}

/** Every attempt of a delivery, oldest first. */
export async function deliveryAttempts(db: Store, deliveryId: string): Promise<AttemptRow[]> {
  return await db.all<AttemptRow>('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY seq', deliveryId);
}

/**
 * Deletes messages that finished (delivered or failed) before `before`, with their attempts;
 * pending ones are never touched. Returns how many messages went. Call inside a write transaction:
 * both deletes read the same ordered batch.
 */
export async function pruneFinishedDeliveries(db: Store, before: number, batch = 5_000): Promise<number> {
  const finished = `SELECT delivery_id FROM webhook_deliveries WHERE status IN ('delivered', 'failed') AND updated_at < ? ORDER BY updated_at, delivery_id LIMIT ?`;
  await db.run(`DELETE FROM webhook_attempts WHERE delivery_id IN (${finished})`, before, batch);
  return (await db.run(`DELETE FROM webhook_deliveries WHERE delivery_id IN (${finished})`, before, batch)).changes;
}
