/** DKG session rows (DESIGN §4): single use, short-lived, secret state sealed. */
import { stepLedgerClock } from './ledger-clock.ts';
import type { DkgSession, NewDkgSession } from '../domain/custody-records.ts';
import type { Store } from './store.ts';

/** A stored session: the coordinator's view of it and when it started. */
export type DkgSessionRow = DkgSession & { created_at: bigint };

/** Inserts a started session. Returns false when the round-1 package was seen before (replay). */
export async function insertDkgSession(db: Store, s: NewDkgSession): Promise<boolean> {
  const res = await db
    .run(`INSERT INTO dkg_sessions (dkg_session_id, state, client_round1, client_round1_hash, status, created_at, expires_at)
       VALUES ($dkg_session_id, $state, $client_round1, $client_round1_hash, 'started', $created_at, $expires_at)
       ON CONFLICT (client_round1_hash) DO NOTHING`, { ...s });
  return res.changes === 1;
}

export async function getDkgSession(db: Store, id: string): Promise<DkgSessionRow | null> {
  return await db.get<DkgSessionRow>('SELECT * FROM dkg_sessions WHERE dkg_session_id = ?', id);
}

/** Moves a started session to completed, dropping the round state. False when it was not started (a concurrent completion won). */
export async function completeDkgSession(db: Store, id: string, result: Uint8Array, publicPackage: string, address: string): Promise<boolean> {
  const completed =
    (await db.run("UPDATE dkg_sessions SET status = 'completed', state = ?, result = ?, public_package = ?, address = ? WHERE dkg_session_id = ? AND status = 'started'", new Uint8Array(0), result, publicPackage, address, id)).changes === 1;
  // Its secret state is used up: a ledger put back to before this would hold it again (ledger-clock.ts).
  if (completed) await stepLedgerClock(db);
  return completed;
}

/** Marks a completed session used by a registration. False when it was not completed. */
export async function useDkgSession(db: Store, id: string): Promise<boolean> {
  return (await db.run("UPDATE dkg_sessions SET status = 'used', result = NULL WHERE dkg_session_id = ? AND status = 'completed'", id)).changes === 1;
}

/** Deletes expired sessions that never produced a wallet. */
export async function deleteExpiredDkgSessions(db: Store, now: number): Promise<number> {
  return (await db.run("DELETE FROM dkg_sessions WHERE expires_at < ? AND status != 'used'", now)).changes;
}
