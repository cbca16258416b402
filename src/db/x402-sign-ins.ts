/** Sign-ins with x402's sign-in-with-x instead of paying again (migration 0011). */
import type { Store } from './store.ts';

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

export async function insertSignIn(
  db: Store,
  s: { sign_in_id: string; wallet_id: string; url: string; host: string; method: string; request_sealed: Uint8Array; fields: string; message: string; expires_at: number; now: number },
): Promise<void> {
  await db.run(`INSERT INTO x402_sign_ins (sign_in_id, wallet_id, url, host, method, request_sealed, fields, message, status, expires_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?)`, s.sign_in_id, s.wallet_id, s.url, s.host, s.method, s.request_sealed, s.fields, s.message, s.expires_at, s.now, s.now);
}

/** A sign-in of `walletId` only: another wallet's id is as unknown as a made-up one. */
export async function getSignIn(db: Store, walletId: string, id: string): Promise<SignInRow | null> {
  return await db.get<SignInRow>('SELECT * FROM x402_sign_ins WHERE sign_in_id = ? AND wallet_id = ?', id, walletId);
}

/** Opens the round: the commitments and the server's sealed nonces, replacing an unused round. */
export async function setSignInRound(db: Store, id: string, round: { agent: string; server: string; nonces: Uint8Array }, now: number): Promise<boolean> {
  return (
    (await db
      .run("UPDATE x402_sign_ins SET agent_commitments = ?, server_commitments = ?, nonces = ?, updated_at = ? WHERE sign_in_id = ? AND status = 'open'", round.agent, round.server, round.nonces, now, id)).changes === 1
  );
}

/** Consumes the nonces with the signature they made, before anything is sent; false when used already. */
export async function consumeSignInNonces(db: Store, id: string, signature: string | null, status: 'signing' | 'failed', now: number, error: string | null = null): Promise<boolean> {
  return (
    (await db
      .run("UPDATE x402_sign_ins SET nonces = NULL, signature = ?, status = ?, error = ?, updated_at = ? WHERE sign_in_id = ? AND status = 'open' AND nonces IS NOT NULL", signature, status, error, now, id)).changes === 1
  );
}

/** Records the seller's answer to the signed-in request. */
export async function finishSignIn(db: Store, id: string, status: 'completed' | 'refused', response: string, now: number): Promise<void> {
  await db.run("UPDATE x402_sign_ins SET status = ?, response = ?, updated_at = ? WHERE sign_in_id = ? AND status = 'signing'", status, response, now, id);
}

/** Whether the wallet has a completed purchase of this exact URL: the resource it may sign in to. */
export async function hasPaidFor(db: Store, walletId: string, url: string): Promise<boolean> {
  return (await db.get("SELECT 1 FROM x402_purchases WHERE wallet_id = ? AND url = ? AND status = 'completed' LIMIT 1", walletId, url)) !== null;
}
