/** Remembered responses of idempotent requests (DESIGN §3). */
import type { Database } from 'bun:sqlite';
import { sameHash } from '../domain/api-keys.ts';

export type Claim = { state: 'new' } | { state: 'replay'; status: number; response: string } | { state: 'running' } | { state: 'conflict' };

interface Row {
  request_hash: Uint8Array;
  state: 'running' | 'done';
  status: bigint | null;
  response: string | null;
  created_at: bigint;
}

/**
 * Check-and-claim, synchronously (STYLE habit 9): the first request with a key inserts a
 * running row; later ones see it. A running row older than `staleMs` belongs to a request that
 * died before committing anything (the response is recorded in the same transaction as the
 * intent), so it may be taken over.
 */
export function claimIdempotencyKey(db: Database, k: { principal: string; action: string; key: string; hash: Uint8Array; now: number; staleMs: number }): Claim {
  return db
    .transaction((): Claim => {
      const row = db
        .query<Row, [string, string, string]>('SELECT request_hash, state, status, response, created_at FROM idempotency_keys WHERE principal = ? AND action = ? AND idem_key = ?')
        .get(k.principal, k.action, k.key);
      if (!row) {
        db.query("INSERT INTO idempotency_keys (principal, action, idem_key, request_hash, state, created_at) VALUES (?, ?, ?, ?, 'running', ?)").run(
          k.principal,
          k.action,
          k.key,
          k.hash,
          k.now,
        );
        return { state: 'new' };
      }
      if (!sameHash(row.request_hash, k.hash)) return { state: 'conflict' };
      if (row.state === 'done') return { state: 'replay', status: Number(row.status), response: row.response ?? '' };
      if (Number(row.created_at) < k.now - k.staleMs) {
        db.query('UPDATE idempotency_keys SET created_at = ? WHERE principal = ? AND action = ? AND idem_key = ?').run(k.now, k.principal, k.action, k.key);
        return { state: 'new' };
      }
      return { state: 'running' };
    })
    .immediate();
}

/** Records the response of a claimed key; call inside the transaction that makes the change when there is one. */
export function recordIdempotentResponse(db: Database, k: { principal: string; action: string; key: string }, status: number, response: string): void {
  db.query("UPDATE idempotency_keys SET state = 'done', status = ?, response = ? WHERE principal = ? AND action = ? AND idem_key = ?").run(status, response, k.principal, k.action, k.key);
}

export function isRecorded(db: Database, k: { principal: string; action: string; key: string }): boolean {
  return db.query("SELECT 1 FROM idempotency_keys WHERE principal = ? AND action = ? AND idem_key = ? AND state = 'done'").get(k.principal, k.action, k.key) !== null;
}

/** Drops a claim whose request failed in a way worth retrying (nothing was changed). */
export function releaseIdempotencyKey(db: Database, k: { principal: string; action: string; key: string }): void {
  db.query("DELETE FROM idempotency_keys WHERE principal = ? AND action = ? AND idem_key = ? AND state = 'running'").run(k.principal, k.action, k.key);
}

/** Forgets keys older than the retention (72 h by default). */
export function purgeIdempotencyKeys(db: Database, before: number): number {
  return db.query('DELETE FROM idempotency_keys WHERE created_at < ?').run(before).changes;
}
