/**
 * The webhook outbox (DESIGN §8, STYLE habit 11): endpoints, one delivery row per message and
 * endpoint, and every attempt. Delivery rows are written in the transaction of the change they
 * announce; the webhooks job leases a due row before it sends (a crash retries after the lease).
 */
import type { Database } from 'bun:sqlite';

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
export function activeEndpoint(db: Database, merchantId: string): EndpointRow | null {
  return db.query<EndpointRow, [string]>("SELECT * FROM webhook_endpoints WHERE merchant_id = ? AND status = 'active'").get(merchantId);
}

/** An endpoint by id, whatever its status. */
export function getEndpoint(db: Database, endpointId: string): EndpointRow | null {
  return db.query<EndpointRow, [string]>('SELECT * FROM webhook_endpoints WHERE endpoint_id = ?').get(endpointId);
}

/**
 * Makes a new endpoint the merchant's active one; the previous active endpoint becomes
 * 'replaced' and its undelivered messages move to the new one (a merchant that changes its URL
 * loses no notification). Call inside a write transaction.
 */
export function insertActiveEndpoint(db: Database, e: { endpoint_id: string; merchant_id: string; url: string; secret: Uint8Array; now: number }): void {
  const previous = activeEndpoint(db, e.merchant_id);
  if (previous) db.query("UPDATE webhook_endpoints SET status = 'replaced', updated_at = ? WHERE endpoint_id = ?").run(e.now, previous.endpoint_id);
  db.query("INSERT INTO webhook_endpoints (endpoint_id, merchant_id, url, secret, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'active', ?, ?)").run(
    e.endpoint_id,
    e.merchant_id,
    e.url,
    e.secret,
    e.now,
    e.now,
  );
  // A new URL gets a fresh retry schedule: the old URL's failures say nothing about it.
  db.query("UPDATE webhook_deliveries SET endpoint_id = ?, failures = 0, next_attempt_at = ?, updated_at = ? WHERE merchant_id = ? AND status = 'pending'").run(
    e.endpoint_id,
    e.now,
    e.now,
    e.merchant_id,
  );
}

/** A new secret for an active endpoint; the old one keeps signing (as a second signature) until `previousUntil`. */
export function rotateEndpointSecret(db: Database, endpointId: string, secret: Uint8Array, previous: Uint8Array, previousUntil: number, now: number): boolean {
  return (
    db
      .query("UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_until = ?, updated_at = ? WHERE endpoint_id = ? AND status = 'active'")
      .run(secret, previous, previousUntil, now, endpointId).changes === 1
  );
}

/** Disables an active endpoint (410 Gone from the receiver); its pending messages stay pending until a new endpoint is set. */
export function disableEndpoint(db: Database, endpointId: string, reason: string, now: number): boolean {
  return db.query("UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ?, updated_at = ? WHERE endpoint_id = ? AND status = 'active'").run(reason, now, endpointId).changes === 1;
}

// ---------------------------------------------------------------------------------------------
// Deliveries

/** Queues one message for an endpoint, due at once. Call inside the transaction of the change. */
export function insertDelivery(db: Database, d: { delivery_id: string; endpoint_id: string; merchant_id: string; event_id: string; event_type: string; payload: string; now: number }): void {
  db.query(
    `INSERT INTO webhook_deliveries (delivery_id, endpoint_id, merchant_id, event_id, event_type, payload, status, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
  ).run(d.delivery_id, d.endpoint_id, d.merchant_id, d.event_id, d.event_type, d.payload, d.now, d.now, d.now);
}

/** A delivery by id (callers check it belongs to the merchant asking). */
export function getDelivery(db: Database, deliveryId: string): DeliveryRow | null {
  return db.query<DeliveryRow, [string]>('SELECT * FROM webhook_deliveries WHERE delivery_id = ?').get(deliveryId);
}

/**
 * Pending deliveries that are due and not leased, to active endpoints only, oldest first (each
 * endpoint's messages go out in the order they were written).
 */
export function dueDeliveries(db: Database, now: number, limit: number): DeliveryRow[] {
  return db
    .query<DeliveryRow, [number, number, number]>(
      `SELECT d.* FROM webhook_deliveries d JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id AND e.status = 'active'
       WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
       ORDER BY d.created_at, d.rowid LIMIT ?`,
    )
    .all(now, now, limit);
}

/** Gives a leased row back untouched (its endpoint is no longer active). */
export function releaseDeliveryLease(db: Database, deliveryId: string): void {
  db.query('UPDATE webhook_deliveries SET lease_until = NULL WHERE delivery_id = ?').run(deliveryId);
}

/** Takes the lease on a due row before sending; false when another run took it or it is no longer pending. */
export function leaseDelivery(db: Database, deliveryId: string, now: number, until: number): boolean {
  return (
    db
      .query("UPDATE webhook_deliveries SET lease_until = ? WHERE delivery_id = ? AND status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)")
      .run(until, deliveryId, now, now).changes === 1
  );
}

/** Records one attempt and its effect on the delivery row: next status, next attempt time, counters. */
export function recordAttempt(
  db: Database,
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
): void {
  const attempt = a.delivery.attempts + 1n;
  db.query(
    `INSERT INTO webhook_attempts (delivery_id, endpoint_id, url, attempt, started_at, duration_ms, http_status, error, outcome)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(a.delivery.delivery_id, a.delivery.endpoint_id, a.url, attempt, a.startedAt, a.durationMs, a.httpStatus, a.error, a.outcome);
  db.query(
    `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, failures = failures + ?, next_attempt_at = ?, lease_until = NULL,
       last_status = ?, last_error = ?, updated_at = ?, delivered_at = coalesce(?, delivered_at)
     WHERE delivery_id = ?`,
  ).run(
    a.status,
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
export function requeueDelivery(db: Database, deliveryId: string, endpointId: string, now: number): boolean {
  return (
    db
      .query("UPDATE webhook_deliveries SET status = 'pending', endpoint_id = ?, failures = 0, next_attempt_at = ?, lease_until = NULL, updated_at = ? WHERE delivery_id = ?")
      .run(endpointId, now, now, deliveryId).changes === 1
  );
}

/** A merchant's deliveries, newest first. */
export function merchantDeliveries(db: Database, merchantId: string, limit: number, offset: number): { items: DeliveryRow[]; total: number } {
  const total = db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM webhook_deliveries WHERE merchant_id = ?').get(merchantId);
  const items = db
    .query<DeliveryRow, [string, number, number]>('SELECT * FROM webhook_deliveries WHERE merchant_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?')
    .all(merchantId, limit, offset);
  return { items, total: Number(total?.n ?? 0n) };
}

/** Every attempt of a delivery, oldest first. */
export function deliveryAttempts(db: Database, deliveryId: string): AttemptRow[] {
  return db.query<AttemptRow, [string]>('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY seq').all(deliveryId);
}

/**
 * Deletes messages that finished (delivered or failed) before `before`, with their attempts;
 * pending ones are never touched. Returns how many messages went. Call inside a write transaction:
 * both deletes read the same ordered batch.
 */
export function pruneFinishedDeliveries(db: Database, before: number, batch = 5_000): number {
  const finished = `SELECT delivery_id FROM webhook_deliveries WHERE status IN ('delivered', 'failed') AND updated_at < ? ORDER BY updated_at, delivery_id LIMIT ?`;
  db.query(`DELETE FROM webhook_attempts WHERE delivery_id IN (${finished})`).run(before, batch);
  return db.query(`DELETE FROM webhook_deliveries WHERE delivery_id IN (${finished})`).run(before, batch).changes;
}
