/**
 * Owner-side rows (DESIGN §7): owners, their sessions and API tokens, one-time e-mailed links
 * (claim / login, approve / reject), the claim-code lockout, and the read models the owner API
 * and the dashboard show. Secrets are looked up by their SHA-256; callers compare in constant time.
 */
import type { Store } from './store.ts';
import type { ApprovalRow } from './approvals.ts';
import type { KeyHolder } from './credentials.ts';
import type { WalletRow } from './wallets.ts';

// ---------------------------------------------------------------------------------------------
// Owners

export interface OwnerRow {
  owner_id: string;
  email: string;
  created_at: bigint;
}

export async function getOwner(db: Store, ownerId: string): Promise<OwnerRow | null> {
  return await db.get<OwnerRow>('SELECT * FROM owners WHERE owner_id = ?', ownerId);
}

export async function findOwnerByEmail(db: Store, email: string): Promise<OwnerRow | null> {
  return await db.get<OwnerRow>('SELECT * FROM owners WHERE email = ?', email);
}

/** The owner with `email`, created when missing. Call inside a write transaction. */
export async function ensureOwner(db: Store, email: string, newOwnerId: string, now: number): Promise<{ owner: OwnerRow; created: boolean }> {
  const found = await findOwnerByEmail(db, email);
  if (found) return { owner: found, created: false };
  await db.run('INSERT INTO owners (owner_id, email, created_at) VALUES (?, ?, ?)', newOwnerId, email, now);
  return { owner: { owner_id: newOwnerId, email, created_at: BigInt(now) }, created: true };
}

// ---------------------------------------------------------------------------------------------
// API tokens

export interface OwnerTokenRow {
  token_id: string;
  owner_id: string;
  label: string;
  created_at: bigint;
  revoked_at: bigint | null;
}

/** The resolver of `wallet_owner_…` keys for src/api/auth.ts: revoked tokens resolve to nobody. */
export async function findOwnerByTokenHash(db: Store, hash: Uint8Array): Promise<KeyHolder | null> {
  const row = await db
    .get<{ token_id: string; owner_id: string; token_hash: Uint8Array }>('SELECT token_id, owner_id, token_hash FROM owner_tokens WHERE token_hash = ? AND revoked_at IS NULL', hash);
  return row ? { id: row.owner_id, keyHash: row.token_hash, claimed: true, tokenId: row.token_id } : null;
}

export async function insertOwnerToken(db: Store, t: { token_id: string; owner_id: string; token_hash: Uint8Array; label: string; now: number }): Promise<void> {
  await db.run('INSERT INTO owner_tokens (token_id, owner_id, token_hash, label, created_at) VALUES (?, ?, ?, ?, ?)', t.token_id, t.owner_id, t.token_hash, t.label, t.now);
}

/** Every token of the owner, newest first (revoked ones included, for the record). */
export async function listOwnerTokens(db: Store, ownerId: string): Promise<OwnerTokenRow[]> {
  return await db
    .all<OwnerTokenRow>('SELECT token_id, owner_id, label, created_at, revoked_at FROM owner_tokens WHERE owner_id = ? ORDER BY created_at DESC, token_id', ownerId);
}

export async function getOwnerToken(db: Store, ownerId: string, tokenId: string): Promise<OwnerTokenRow | null> {
  return await db
    .get<OwnerTokenRow>('SELECT token_id, owner_id, label, created_at, revoked_at FROM owner_tokens WHERE owner_id = ? AND token_id = ?', ownerId, tokenId);
}

/** Revokes a live token of the owner; false when it is not theirs or already revoked. */
export async function revokeOwnerToken(db: Store, ownerId: string, tokenId: string, now: number): Promise<boolean> {
  return (await db.run('UPDATE owner_tokens SET revoked_at = ? WHERE owner_id = ? AND token_id = ? AND revoked_at IS NULL', now, ownerId, tokenId)).changes === 1;
}

// ---------------------------------------------------------------------------------------------
// Browser sessions

export async function insertSession(db: Store, s: { session_hash: Uint8Array; owner_id: string; now: number; expires_at: number }): Promise<void> {
  await db.run('INSERT INTO owner_sessions (session_hash, owner_id, created_at, expires_at) VALUES (?, ?, ?, ?)', s.session_hash, s.owner_id, s.now, s.expires_at);
}

/** The live session with this hash, or null. */
export async function findSession(db: Store, hash: Uint8Array, now: number): Promise<{ session_hash: Uint8Array; owner_id: string; expires_at: bigint } | null> {
  return await db
    .get<{ session_hash: Uint8Array; owner_id: string; expires_at: bigint }>('SELECT session_hash, owner_id, expires_at FROM owner_sessions WHERE session_hash = ? AND expires_at > ?', hash, now);
}

export async function deleteSession(db: Store, hash: Uint8Array): Promise<void> {
  await db.run('DELETE FROM owner_sessions WHERE session_hash = ?', hash);
}

/** Housekeeping: drops expired sessions, and links, passkey challenges and grants older than a day past their expiry. */
export async function deleteExpiredOwnerRows(db: Store, now: number): Promise<number> {
  const day = 24 * 60 * 60 * 1000;
  return (
    (await db.run('DELETE FROM owner_sessions WHERE expires_at <= ?', now)).changes +
    (await db.run('DELETE FROM magic_links WHERE expires_at <= ?', now - day)).changes +
    (await db.run('DELETE FROM passkey_challenges WHERE expires_at <= ?', now - day)).changes +
    (await db.run('DELETE FROM passkey_grants WHERE expires_at <= ?', now - day)).changes
  );
}

// ---------------------------------------------------------------------------------------------
// Magic links (claim, login)

export interface MagicLinkRow {
  link_hash: Uint8Array;
  purpose: 'claim' | 'login';
  email: string;
  wallet_id: string | null;
  created_at: bigint;
  expires_at: bigint;
  used_at: bigint | null;
}

export async function insertMagicLink(db: Store, l: { link_hash: Uint8Array; purpose: MagicLinkRow['purpose']; email: string; wallet_id: string | null; now: number; expires_at: number }): Promise<void> {
  await db.run('INSERT INTO magic_links (link_hash, purpose, email, wallet_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)', l.link_hash,
    l.purpose,
    l.email,
    l.wallet_id,
    l.now,
    l.expires_at,
  );
}

export async function getMagicLink(db: Store, hash: Uint8Array): Promise<MagicLinkRow | null> {
  return await db.get<MagicLinkRow>('SELECT * FROM magic_links WHERE link_hash = ?', hash);
}

/** How many links of `purpose` were made for `email` since `since` (a mail-bomb brake). */
export async function countMagicLinksSince(db: Store, email: string, purpose: MagicLinkRow['purpose'], since: number): Promise<number> {
  const row = await db.get<{ n: bigint }>('SELECT count(*) AS n FROM magic_links WHERE email = ? AND purpose = ? AND created_at >= ?', email, purpose, since);
  return Number(row?.n ?? 0n);
}

/** Spends a live link; false when it was used already or has expired (a concurrent use won). */
export async function useMagicLink(db: Store, hash: Uint8Array, now: number): Promise<boolean> {
  return (await db.run('UPDATE magic_links SET used_at = ? WHERE link_hash = ? AND used_at IS NULL AND expires_at > ?', now, hash, now)).changes === 1;
}

// ---------------------------------------------------------------------------------------------
// Claim-code lockout

export interface ClaimAttemptsRow {
  wallet_id: string;
  failures: bigint;
  locked_until: bigint | null;
}

export async function getClaimAttempts(db: Store, walletId: string): Promise<ClaimAttemptsRow | null> {
  return await db.get<ClaimAttemptsRow>('SELECT wallet_id, failures, locked_until FROM claim_attempts WHERE wallet_id = ?', walletId);
}

/**
 * Counts one wrong claim code. The `maxFailures`-th in a row locks the claim until
 * `now + lockMs` and starts the count again. Returns the failures counted and the lock, if any.
 */
export async function recordClaimFailure(db: Store, walletId: string, now: number, maxFailures: number, lockMs: number): Promise<{ failures: number; lockedUntil: number | null }> {
  const failures = Number((await getClaimAttempts(db, walletId))?.failures ?? 0n) + 1;
  const locked = failures >= maxFailures;
  await db.run(`INSERT INTO claim_attempts (wallet_id, failures, locked_until, updated_at) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (wallet_id) DO UPDATE SET failures = ?2, locked_until = coalesce(?3, claim_attempts.locked_until), updated_at = ?4`, walletId, locked ? 0 : failures, locked ? now + lockMs : null, now);
  return { failures, lockedUntil: locked ? now + lockMs : null };
}

export async function clearClaimAttempts(db: Store, walletId: string): Promise<void> {
  await db.run('DELETE FROM claim_attempts WHERE wallet_id = ?', walletId);
}

// ---------------------------------------------------------------------------------------------
// Approval links (approve / reject from the e-mail)

export interface ApprovalLinkRow {
  link_hash: Uint8Array;
  approval_id: string;
  decision: 'approved' | 'rejected';
  created_at: bigint;
  expires_at: bigint;
  used_at: bigint | null;
}

export async function insertApprovalLink(db: Store, l: { link_hash: Uint8Array; approval_id: string; decision: ApprovalLinkRow['decision']; now: number; expires_at: number }): Promise<void> {
  await db.run('INSERT INTO approval_links (link_hash, approval_id, decision, created_at, expires_at) VALUES (?, ?, ?, ?, ?)', l.link_hash,
    l.approval_id,
    l.decision,
    l.now,
    l.expires_at,
  );
}

export async function getApprovalLink(db: Store, hash: Uint8Array): Promise<ApprovalLinkRow | null> {
  return await db.get<ApprovalLinkRow>('SELECT * FROM approval_links WHERE link_hash = ?', hash);
}

/** Spends every link of an approval; false when the given link was already used or expired. */
export async function spendApprovalLinks(db: Store, hash: Uint8Array, approvalId: string, now: number): Promise<boolean> {
  const mine = (await db.run('UPDATE approval_links SET used_at = ? WHERE link_hash = ? AND used_at IS NULL AND expires_at > ?', now, hash, now)).changes === 1;
  if (mine) await db.run('UPDATE approval_links SET used_at = ? WHERE approval_id = ? AND used_at IS NULL', now, approvalId);
  return mine;
}

// ---------------------------------------------------------------------------------------------
// What an owner sees: only their own wallets, approvals, audit entries and history.

/** The owner's wallet, or null when it does not exist or is someone else's. */
export async function ownerWallet(db: Store, ownerId: string, walletId: string): Promise<WalletRow | null> {
  return await db.get<WalletRow>("SELECT * FROM wallets WHERE wallet_id = ? AND owner_id = ? AND status = 'claimed'", walletId, ownerId);
}

/** The owner's wallets, newest claim first, with the count of pending approvals of each. */
export async function ownerWallets(db: Store, ownerId: string, limit: number, offset: number): Promise<{ rows: (WalletRow & { pending_approvals: bigint })[]; total: number }> {
  const rows = await db
    .all<WalletRow & { pending_approvals: bigint }>(`SELECT w.*, (SELECT count(*) FROM approvals a WHERE a.wallet_id = w.wallet_id AND a.status = 'pending') AS pending_approvals
       FROM wallets w WHERE w.owner_id = ? AND w.status = 'claimed' ORDER BY w.claimed_at DESC, w.wallet_id LIMIT ? OFFSET ?`, ownerId, limit, offset);
  const total = await db.get<{ n: bigint }>("SELECT count(*) AS n FROM wallets WHERE owner_id = ? AND status = 'claimed'", ownerId);
  return { rows, total: Number(total?.n ?? 0n) };
}

/** The approval when it belongs to one of the owner's wallets, else null. */
export async function ownerApproval(db: Store, ownerId: string, approvalId: string): Promise<ApprovalRow | null> {
  return await db
    .get<ApprovalRow>("SELECT a.* FROM approvals a JOIN wallets w ON w.wallet_id = a.wallet_id WHERE a.approval_id = ? AND w.owner_id = ? AND w.status = 'claimed'", approvalId, ownerId);
}

/** Approvals of the owner's wallets, newest first, optionally of one wallet and one status. */
export async function ownerApprovals(
  db: Store,
  ownerId: string,
  filter: { walletId?: string; status?: ApprovalRow['status'] },
  limit: number,
  offset: number,
): Promise<{ rows: (ApprovalRow & { wallet_name: string; wallet_username: string })[]; total: number }> {
  // Cast: PostgreSQL cannot type a parameter that is only tested for NULL.
  const where = "w.owner_id = ?1 AND w.status = 'claimed' AND (CAST(?2 AS TEXT) IS NULL OR a.wallet_id = ?2) AND (CAST(?3 AS TEXT) IS NULL OR a.status = ?3)";
  const args = [ownerId, filter.walletId ?? null, filter.status ?? null] as const;
  const rows = await db
    .all<ApprovalRow & { wallet_name: string; wallet_username: string }>(`SELECT a.*, w.name AS wallet_name, w.username AS wallet_username FROM approvals a JOIN wallets w ON w.wallet_id = a.wallet_id
       WHERE ${where} ORDER BY a.created_at DESC, a.approval_id LIMIT ?4 OFFSET ?5`, ...args, limit, offset);
  const total = await db
    .get<{ n: bigint }>(`SELECT count(*) AS n FROM approvals a JOIN wallets w ON w.wallet_id = a.wallet_id WHERE ${where}`, ...args);
  return { rows, total: Number(total?.n ?? 0n) };
}

export interface AuditRow {
  seq: bigint;
  wallet_id: string;
  actor: string;
  kind: string;
  data: string;
  created_at: bigint;
}

/** The append-only audit log of a wallet, newest first. */
export async function auditEntries(db: Store, walletId: string, limit: number, offset: number): Promise<{ rows: AuditRow[]; total: number }> {
  const rows = await db.all<AuditRow>('SELECT * FROM audit_log WHERE wallet_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?', walletId, limit, offset);
  const total = await db.get<{ n: bigint }>('SELECT count(*) AS n FROM audit_log WHERE wallet_id = ?', walletId);
  return { rows, total: Number(total?.n ?? 0n) };
}

/** One line of a wallet's history as the dashboard shows it. */
export interface HistoryRow {
  transaction_id: string;
  type: string;
  direction: string;
  category: string | null;
  status: string;
  amount: bigint;
  fee: bigint;
  setup_fee: bigint;
  counterparty: string | null;
  to_address: string | null;
  note: string | null;
  reference: string | null;
  signature: string | null;
  created_at: bigint;
}

/** A wallet's transactions, newest first. */
export async function walletHistory(db: Store, walletId: string, limit: number, offset: number): Promise<{ rows: HistoryRow[]; total: number }> {
  const rows = await db
    .all<HistoryRow>(`SELECT transaction_id, type, direction, category, status, amount, fee, setup_fee, counterparty, to_address, note, reference, signature, created_at
       FROM transactions WHERE wallet_id = ? ORDER BY created_at DESC, transaction_id DESC LIMIT ? OFFSET ?`, walletId, limit, offset);
  const total = await db.get<{ n: bigint }>('SELECT count(*) AS n FROM transactions WHERE wallet_id = ?', walletId);
  return { rows, total: Number(total?.n ?? 0n) };
}

/** Status and subject of an approval for the agent's long poll (cheap: one indexed row). */
export async function approvalStatusOf(db: Store, approvalId: string): Promise<string | null> {
  return (await db.get<{ status: string }>('SELECT status FROM approvals WHERE approval_id = ?', approvalId))?.status ?? null;
}
