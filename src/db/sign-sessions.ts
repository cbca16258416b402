/** Signing sessions (DESIGN §4): nonces sealed, single use. */
import type { Database } from 'bun:sqlite';

export interface SignSessionRow {
  sign_session_id: string;
  transaction_id: string;
  message_hash: Uint8Array;
  agent_commitments: string;
  server_commitments: string;
  nonces: Uint8Array | null;
  status: 'open' | 'used' | 'failed';
  agent_share: Uint8Array | null;
  created_at: bigint;
  expires_at: bigint;
}

export function insertSignSession(
  db: Database,
  s: { sign_session_id: string; transaction_id: string; message_hash: Uint8Array; agent_commitments: string; server_commitments: string; nonces: Uint8Array; now: number; expires_at: number },
): void {
  db.query(
    "INSERT INTO sign_sessions (sign_session_id, transaction_id, message_hash, agent_commitments, server_commitments, nonces, status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?)",
  ).run(s.sign_session_id, s.transaction_id, s.message_hash, s.agent_commitments, s.server_commitments, s.nonces, s.now, s.expires_at);
}

export function getSignSession(db: Database, id: string): SignSessionRow | null {
  return db.query<SignSessionRow, [string]>('SELECT * FROM sign_sessions WHERE sign_session_id = ?').get(id);
}

/** The newest session of a transaction. */
export function latestSignSession(db: Database, transactionId: string): SignSessionRow | null {
  return db.query<SignSessionRow, [string]>('SELECT * FROM sign_sessions WHERE transaction_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1').get(transactionId);
}

/** Consumes the nonces of an open session; false when they were already consumed. */
export function consumeNonces(db: Database, id: string, status: 'used' | 'failed', agentShare: Uint8Array): boolean {
  return db.query("UPDATE sign_sessions SET nonces = NULL, status = ?, agent_share = ? WHERE sign_session_id = ? AND status = 'open' AND nonces IS NOT NULL").run(status, agentShare, id).changes === 1;
}

/** Closes the still-open sessions of a transaction (a newer session or a new message supersedes them). */
export function closeOpenSessions(db: Database, transactionId: string): void {
  db.query("UPDATE sign_sessions SET nonces = NULL, status = 'failed' WHERE transaction_id = ? AND status = 'open'").run(transactionId);
}
