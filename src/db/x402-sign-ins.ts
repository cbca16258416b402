/** Sign-ins with x402's sign-in-with-x instead of paying again (migration 0011). */
import type { Database } from 'bun:sqlite';

export type SignInStatus = 'open' | 'signing' | 'completed' | 'refused' | 'failed';

export interface SignInRow {
  sign_in_id: string;
  wallet_id: string;
  url: string;
  host: string;
  method: string;
  request_sealed: Uint8Array;
  fields: string;
  message: string;
  status: SignInStatus;
  agent_commitments: string | null;
  server_commitments: string | null;
  nonces: Uint8Array | null;
  signature: string | null;
  response: string | null;
  error: string | null;
  expires_at: bigint;
  created_at: bigint;
  updated_at: bigint;
}

export function insertSignIn(
  db: Database,
  s: { sign_in_id: string; wallet_id: string; url: string; host: string; method: string; request_sealed: Uint8Array; fields: string; message: string; expires_at: number; now: number },
): void {
  db.query(
    `INSERT INTO x402_sign_ins (sign_in_id, wallet_id, url, host, method, request_sealed, fields, message, status, expires_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?)`,
  ).run(s.sign_in_id, s.wallet_id, s.url, s.host, s.method, s.request_sealed, s.fields, s.message, s.expires_at, s.now, s.now);
}

/** A sign-in of `walletId` only: another wallet's id is as unknown as a made-up one. */
export function getSignIn(db: Database, walletId: string, id: string): SignInRow | null {
  return db.query<SignInRow, [string, string]>('SELECT * FROM x402_sign_ins WHERE sign_in_id = ? AND wallet_id = ?').get(id, walletId);
}

/** Opens the round: the commitments and the server's sealed nonces, replacing an unused round. */
export function setSignInRound(db: Database, id: string, round: { agent: string; server: string; nonces: Uint8Array }, now: number): boolean {
  return (
    db
      .query("UPDATE x402_sign_ins SET agent_commitments = ?, server_commitments = ?, nonces = ?, updated_at = ? WHERE sign_in_id = ? AND status = 'open'")
      .run(round.agent, round.server, round.nonces, now, id).changes === 1
  );
}

/** Consumes the nonces with the signature they made, before anything is sent; false when used already. */
export function consumeSignInNonces(db: Database, id: string, signature: string | null, status: 'signing' | 'failed', now: number, error: string | null = null): boolean {
  return (
    db
      .query("UPDATE x402_sign_ins SET nonces = NULL, signature = ?, status = ?, error = ?, updated_at = ? WHERE sign_in_id = ? AND status = 'open' AND nonces IS NOT NULL")
      .run(signature, status, error, now, id).changes === 1
  );
}

/** Records the seller's answer to the signed-in request. */
export function finishSignIn(db: Database, id: string, status: 'completed' | 'refused', response: string, now: number): void {
  db.query("UPDATE x402_sign_ins SET status = ?, response = ?, updated_at = ? WHERE sign_in_id = ? AND status = 'signing'").run(status, response, now, id);
}

/** Whether the wallet has a completed purchase of this exact URL: the resource it may sign in to. */
export function hasPaidFor(db: Database, walletId: string, url: string): boolean {
  return db.query("SELECT 1 FROM x402_purchases WHERE wallet_id = ? AND url = ? AND status = 'completed' LIMIT 1").get(walletId, url) !== null;
}
