/** Remembered responses of idempotent requests (DESIGN §3). */
import type { Store } from './store.ts';

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
export async function findIdempotencyKey(db: Store, k: IdempotencyScope): Promise<IdempotencyRow | null> {
  return await db
    .get<IdempotencyRow>('SELECT request_hash, state, status, response, created_at FROM idempotency_keys WHERE principal = ? AND action = ? AND idem_key = ?', k.principal, k.action, k.key);
}

/**
 * Records the answer of a key; call inside the transaction that makes the change when there is
 * one, so the change and its answer commit together (one commit, and a crash keeps both or neither).
 */
export async function recordIdempotentResponse(db: Store, k: IdempotencyScope & { hash: Uint8Array; now: number }, status: number, response: string): Promise<void> {
  await db.run(`INSERT INTO idempotency_keys (principal, action, idem_key, request_hash, state, status, response, created_at) VALUES (?, ?, ?, ?, 'done', ?, ?, ?)
     ON CONFLICT (principal, action, idem_key) DO UPDATE SET state = 'done', status = excluded.status, response = excluded.response`, k.principal, k.action, k.key, k.hash, status, response, k.now);
}

export async function isRecorded(db: Store, k: IdempotencyScope): Promise<boolean> {
  return (await db.get("SELECT 1 FROM idempotency_keys WHERE principal = ? AND action = ? AND idem_key = ? AND state = 'done'", k.principal, k.action, k.key)) !== null;
}

/** Forgets keys older than the retention (72 h by default). */
export async function purgeIdempotencyKeys(db: Store, before: number): Promise<number> {
  return (await db.run('DELETE FROM idempotency_keys WHERE created_at < ?', before)).changes;
}
