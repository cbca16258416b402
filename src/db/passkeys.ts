/** The owner's passkeys, their one-time challenges, dashboard grants for the owner API, and resets (migration 0019). */
import type { Store } from './store.ts';

export interface PasskeyRow {
  credential_id: string;
  owner_id: string;
  name: string;
  public_key: Uint8Array;
  counter: number;
  transports: string;
  /** JSON: the key as the log holds it (credential_id, public_key, rp_id, origin) and the assertion it was added under, if any. */
  evidence: string;
  created_at: number;
  last_used_at: number | null;
  removed_at: number | null;
}

const keyOf = (r: PasskeyRow): PasskeyRow => ({
  ...r,
  counter: Number(r.counter),
  created_at: Number(r.created_at),
  last_used_at: r.last_used_at === null ? null : Number(r.last_used_at),
  removed_at: r.removed_at === null ? null : Number(r.removed_at),
});

/** The owner's enrolled (not removed) passkeys, oldest first. */
export async function activePasskeys(db: Store, ownerId: string): Promise<PasskeyRow[]> {
  return (await db.all<PasskeyRow>('SELECT * FROM owner_passkeys WHERE owner_id = ? AND removed_at IS NULL ORDER BY created_at, credential_id', ownerId)).map(keyOf);
}

/** Every passkey the owner ever enrolled (removed ones too): an old approval is checked against the key it was made with. */
export async function allPasskeys(db: Store, ownerId: string): Promise<PasskeyRow[]> {
  return (await db.all<PasskeyRow>('SELECT * FROM owner_passkeys WHERE owner_id = ? ORDER BY created_at, credential_id', ownerId)).map(keyOf);
}

export async function getPasskey(db: Store, credentialId: string): Promise<PasskeyRow | null> {
  const r = await db.get<PasskeyRow>('SELECT * FROM owner_passkeys WHERE credential_id = ?', credentialId);
  return r ? keyOf(r) : null;
}

/** Whether the owner had an enrolled passkey at `at` (ms). */
export async function hadPasskeyAt(db: Store, ownerId: string, at: number): Promise<boolean> {
  return (await db.get('SELECT 1 AS one FROM owner_passkeys WHERE owner_id = ? AND created_at <= ? AND (removed_at IS NULL OR removed_at > ?) LIMIT 1', ownerId, at, at)) !== null;
}

export async function insertPasskey(db: Store, p: { credential_id: string; owner_id: string; name: string; public_key: Uint8Array; counter: number; transports: string; evidence: string; now: number }): Promise<void> {
  await db.run(
    'INSERT INTO owner_passkeys (credential_id, owner_id, name, public_key, counter, transports, evidence, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    p.credential_id, p.owner_id, p.name, p.public_key, p.counter, p.transports, p.evidence, p.now,
  );
}

/** Records a use; false when the key is gone or the counter went backwards (a cloned authenticator). */
export async function usePasskey(db: Store, credentialId: string, counter: number, now: number): Promise<boolean> {
  // Authenticators without a counter always report 0; one with a counter must move it forward.
  return (await db.run('UPDATE owner_passkeys SET counter = ?, last_used_at = ? WHERE credential_id = ? AND removed_at IS NULL AND (counter = 0 OR ? > counter)', counter, now, credentialId, counter)).changes === 1;
}

export async function removePasskey(db: Store, ownerId: string, credentialId: string, now: number): Promise<boolean> {
  return (await db.run('UPDATE owner_passkeys SET removed_at = ? WHERE owner_id = ? AND credential_id = ? AND removed_at IS NULL', now, ownerId, credentialId)).changes === 1;
}

export async function removeAllPasskeys(db: Store, ownerId: string, now: number): Promise<number> {
  return (await db.run('UPDATE owner_passkeys SET removed_at = ? WHERE owner_id = ? AND removed_at IS NULL', now, ownerId)).changes;
}

export interface ChallengeRow {
  challenge: string;
  owner_id: string;
  purpose: 'register' | 'decision' | 'add';
  decision: string;
  nonce: string;
  pending: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export async function insertChallenge(db: Store, c: { challenge: string; owner_id: string; purpose: ChallengeRow['purpose']; decision: string; nonce: string; pending?: string; now: number; expires_at: number }): Promise<void> {
  await db.run(
    'INSERT INTO passkey_challenges (challenge, owner_id, purpose, decision, nonce, pending, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    c.challenge, c.owner_id, c.purpose, c.decision, c.nonce, c.pending ?? null, c.now, c.expires_at,
  );
}

export async function getChallenge(db: Store, challenge: string): Promise<ChallengeRow | null> {
  const r = await db.get<ChallengeRow>('SELECT * FROM passkey_challenges WHERE challenge = ?', challenge);
  return r ? { ...r, created_at: Number(r.created_at), expires_at: Number(r.expires_at), used_at: r.used_at === null ? null : Number(r.used_at) } : null;
}

/** Spends a challenge once: false when it was already used or has expired (a replay). */
export async function spendChallenge(db: Store, challenge: string, now: number): Promise<boolean> {
  return (await db.run('UPDATE passkey_challenges SET used_at = ? WHERE challenge = ? AND used_at IS NULL AND expires_at > ?', now, challenge, now)).changes === 1;
}

export async function insertGrant(db: Store, g: { grant_id: string; owner_id: string; decision: string; evidence: string; now: number; expires_at: number }): Promise<void> {
  await db.run('INSERT INTO passkey_grants (grant_id, owner_id, decision, evidence, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)', g.grant_id, g.owner_id, g.decision, g.evidence, g.now, g.expires_at);
}

/** The owner's unused, unexpired grant for exactly `decision` (canonical JSON), or null. */
export async function peekGrant(db: Store, ownerId: string, decision: string, now: number): Promise<{ grant_id: string; evidence: string } | null> {
  return await db.get<{ grant_id: string; evidence: string }>('SELECT grant_id, evidence FROM passkey_grants WHERE owner_id = ? AND decision = ? AND used_at IS NULL AND expires_at > ? ORDER BY created_at LIMIT 1', ownerId, decision, now);
}

/** Spends a grant once; false when it was used meanwhile. */
export async function takeGrant(db: Store, grantId: string, now: number): Promise<boolean> {
  return (await db.run('UPDATE passkey_grants SET used_at = ? WHERE grant_id = ? AND used_at IS NULL', now, grantId)).changes === 1;
}

export interface ResetRow {
  reset_id: string;
  owner_id: string;
  created_at: number;
  effective_at: number;
  cancelled_at: number | null;
  done_at: number | null;
}

const resetOf = (r: ResetRow): ResetRow => ({ ...r, created_at: Number(r.created_at), effective_at: Number(r.effective_at), cancelled_at: r.cancelled_at === null ? null : Number(r.cancelled_at), done_at: r.done_at === null ? null : Number(r.done_at) });

/** The owner's reset neither cancelled nor done, or null. */
export async function openReset(db: Store, ownerId: string): Promise<ResetRow | null> {
  const r = await db.get<ResetRow>('SELECT * FROM passkey_resets WHERE owner_id = ? AND cancelled_at IS NULL AND done_at IS NULL ORDER BY created_at DESC LIMIT 1', ownerId);
  return r ? resetOf(r) : null;
}

export async function insertReset(db: Store, r: { reset_id: string; owner_id: string; now: number; effective_at: number }): Promise<void> {
  await db.run('INSERT INTO passkey_resets (reset_id, owner_id, created_at, effective_at) VALUES (?, ?, ?, ?)', r.reset_id, r.owner_id, r.now, r.effective_at);
}

export async function cancelReset(db: Store, resetId: string, now: number): Promise<boolean> {
  return (await db.run('UPDATE passkey_resets SET cancelled_at = ? WHERE reset_id = ? AND cancelled_at IS NULL AND done_at IS NULL', now, resetId)).changes === 1;
}

export async function finishReset(db: Store, resetId: string, now: number): Promise<boolean> {
  return (await db.run('UPDATE passkey_resets SET done_at = ? WHERE reset_id = ? AND cancelled_at IS NULL AND done_at IS NULL AND effective_at <= ?', now, resetId, now)).changes === 1;
}

/** Keeps an owner's assertion on the approval it approved, for the check before co-signing. */
export async function setApprovalEvidence(db: Store, approvalId: string, evidence: string): Promise<void> {
  await db.run('UPDATE approvals SET evidence = ? WHERE approval_id = ?', evidence, approvalId);
}

export async function approvalEvidence(db: Store, approvalId: string): Promise<string | null> {
  return (await db.get<{ evidence: string | null }>('SELECT evidence FROM approvals WHERE approval_id = ?', approvalId))?.evidence ?? null;
}

/** The ids of the owner's claimed wallets: a passkey change enters each one's decision log. */
export async function ownerWalletIds(db: Store, ownerId: string): Promise<string[]> {
  return (await db.all<{ wallet_id: string }>('SELECT wallet_id FROM wallets WHERE owner_id = ? ORDER BY claimed_at', ownerId)).map((r) => r.wallet_id);
}
