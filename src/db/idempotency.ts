/** Remembered responses of idempotent requests (DESIGN §3). */
import type { Database } from 'bun:sqlite';

export interface IdempotencyRow {
  request_hash: Uint8Array;
  state: 'running' | 'done';
  status: bigint | null;
  response: string | null;
  created_at: bigint;
}

/** The scope of a key: who sent it, for which action. */
export interface IdempotencyScope {
  principal: string;
  action: string;
  key: string;
}

/** The remembered row of a key, if any. */
export function findIdempotencyKey(db: Database, k: IdempotencyScope): IdempotencyRow | null {
  return db
    .query<IdempotencyRow, [string, string, string]>('SELECT request_hash, state, status, response, created_at FROM idempotency_keys WHERE principal = ? AND action = ? AND idem_key = ?')
    .get(k.principal, k.action, k.key);
}

/**
 * Records the answer of a key; call inside the transaction that makes the change when there is
 * one, so the change and its answer commit together (one commit, and a crash keeps both or neither).
 */
export function recordIdempotentResponse(db: Database, k: IdempotencyScope & { hash: Uint8Array; now: number }, status: number, response: string): void {
  db.query(
    `INSERT INTO idempotency_keys (principal, action, idem_key, request_hash, state, status, response, created_at) VALUES (?, ?, ?, ?, 'done', ?, ?, ?)
     ON CONFLICT (principal, action, idem_key) DO UPDATE SET state = 'done', status = excluded.status, response = excluded.response`,
  ).run(k.principal, k.action, k.key, k.hash, status, response, k.now);
}

export function isRecorded(db: Database, k: IdempotencyScope): boolean {
  return db.query("SELECT 1 FROM idempotency_keys WHERE principal = ? AND action = ? AND idem_key = ? AND state = 'done'").get(k.principal, k.action, k.key) !== null;
}

/** Forgets keys older than the retention (72 h by default). */
export function purgeIdempotencyKeys(db: Database, before: number): number {
  return db.query('DELETE FROM idempotency_keys WHERE created_at < ?').run(before).changes;
}
