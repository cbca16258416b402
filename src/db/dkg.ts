/** DKG session rows (DESIGN §4): single use, short-lived, secret state sealed. */
import type { Database } from 'bun:sqlite';

export interface DkgSessionRow {
  dkg_session_id: string;
  state: Uint8Array;
  client_round1: string;
  status: 'started' | 'completed' | 'used';
  result: Uint8Array | null;
  public_package: string | null;
  address: string | null;
  created_at: bigint;
  expires_at: bigint;
}

/** Inserts a started session. Returns false when the round-1 package was seen before (replay). */
export function insertDkgSession(
  db: Database,
  s: { dkg_session_id: string; state: Uint8Array; client_round1: string; client_round1_hash: Uint8Array; created_at: number; expires_at: number },
): boolean {
  const res = db
    .query(
      `INSERT INTO dkg_sessions (dkg_session_id, state, client_round1, client_round1_hash, status, created_at, expires_at)
       VALUES ($dkg_session_id, $state, $client_round1, $client_round1_hash, 'started', $created_at, $expires_at)
       ON CONFLICT (client_round1_hash) DO NOTHING`,
    )
    .run(s);
  return res.changes === 1;
}

export function getDkgSession(db: Database, id: string): DkgSessionRow | null {
  return db.query<DkgSessionRow, [string]>('SELECT * FROM dkg_sessions WHERE dkg_session_id = ?').get(id);
}

/** Moves a started session to completed, dropping the round state. False when it was not started (a concurrent completion won). */
export function completeDkgSession(db: Database, id: string, result: Uint8Array, publicPackage: string, address: string): boolean {
  return (
    db
      .query("UPDATE dkg_sessions SET status = 'completed', state = x'', result = ?, public_package = ?, address = ? WHERE dkg_session_id = ? AND status = 'started'")
      .run(result, publicPackage, address, id).changes === 1
  );
}

/** Marks a completed session used by a registration. False when it was not completed. */
export function useDkgSession(db: Database, id: string): boolean {
  return db.query("UPDATE dkg_sessions SET status = 'used', result = NULL WHERE dkg_session_id = ? AND status = 'completed'").run(id).changes === 1;
}

/** Deletes expired sessions that never produced a wallet. */
export function deleteExpiredDkgSessions(db: Database, now: number): number {
  return db.query("DELETE FROM dkg_sessions WHERE expires_at < ? AND status != 'used'").run(now).changes;
}
