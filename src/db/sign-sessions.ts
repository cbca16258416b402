/** Signing sessions (DESIGN §4): nonces sealed, single use. */
import { stepLedgerClock } from './ledger-clock.ts';
import type { NewSignSession, SignSession } from '../domain/custody-records.ts';
import type { Store } from './store.ts';

/** Breaks ties of created_at: SQLite's rowid is insertion order; PostgreSQL has no rowid, so ties order by the primary key there. */
const TIE = { sqlite: 'rowid', postgres: 'sign_session_id' } as const;

/** A stored session: the coordinator's view of it and when it was opened. */
export type SignSessionRow = SignSession & { created_at: bigint };

export async function insertSignSession(db: Store, s: NewSignSession): Promise<void> {
  await db.run("INSERT INTO sign_sessions (sign_session_id, transaction_id, message_hash, agent_commitments, server_commitments, nonces, status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?)", s.sign_session_id, s.transaction_id, s.message_hash, s.agent_commitments, s.server_commitments, s.nonces, s.now, s.expires_at);
}

export async function getSignSession(db: Store, id: string): Promise<SignSessionRow | null> {
  return await db.get<SignSessionRow>('SELECT * FROM sign_sessions WHERE sign_session_id = ?', id);
}

/** The newest session of a transaction. */
export async function latestSignSession(db: Store, transactionId: string): Promise<SignSessionRow | null> {
  return await db.get<SignSessionRow>(`SELECT * FROM sign_sessions WHERE transaction_id = ? ORDER BY created_at DESC, ${TIE[db.dialect]} DESC LIMIT 1`, transactionId);
}

/** Consumes the nonces of an open session; false when they were already consumed. */
export async function consumeNonces(db: Store, id: string, status: 'used' | 'failed', agentShare: Uint8Array): Promise<boolean> {
  const consumed = (await db.run("UPDATE sign_sessions SET nonces = NULL, status = ?, agent_share = ? WHERE sign_session_id = ? AND status = 'open' AND nonces IS NOT NULL", status, agentShare, id)).changes === 1;
  // A ledger put back to before this commit would hold these nonces open again: the clock tells.
  if (consumed) await stepLedgerClock(db);
  return consumed;
}

/** Closes the still-open sessions of a transaction (a newer session or a new message supersedes them). */
export async function closeOpenSessions(db: Store, transactionId: string): Promise<void> {
  await db.run("UPDATE sign_sessions SET nonces = NULL, status = 'failed' WHERE transaction_id = ? AND status = 'open'", transactionId);
}
