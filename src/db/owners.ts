/**
 * Owner-side rows (DESIGN §7): owners, their sessions and API tokens, one-time e-mailed links
 * (claim / login, approve / reject), the claim-code lockout, and the read models the owner API
 * and the dashboard show. Secrets are looked up by their SHA-256; callers compare in constant time.
 */
import type { Database } from 'bun:sqlite';
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

export function getOwner(db: Database, ownerId: string): OwnerRow | null {
  return db.query<OwnerRow, [string]>('SELECT * FROM owners WHERE owner_id = ?').get(ownerId);
}

export function findOwnerByEmail(db: Database, email: string): OwnerRow | null {
  return db.query<OwnerRow, [string]>('SELECT * FROM owners WHERE email = ?').get(email);
}

/** The owner with `email`, created when missing. Call inside a write transaction. */
export function ensureOwner(db: Database, email: string, newOwnerId: string, now: number): { owner: OwnerRow; created: boolean } {
  const found = findOwnerByEmail(db, email);
  if (found) return { owner: found, created: false };
  db.query('INSERT INTO owners (owner_id, email, created_at) VALUES (?, ?, ?)').run(newOwnerId, email, now);
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
export function findOwnerByTokenHash(db: Database, hash: Uint8Array): KeyHolder | null {
  const row = db
    .query<{ token_id: string; owner_id: string; token_hash: Uint8Array }, [Uint8Array]>(
      'SELECT token_id, owner_id, token_hash FROM owner_tokens WHERE token_hash = ? AND revoked_at IS NULL',
    )
    .get(hash);
  return row ? { id: row.owner_id, keyHash: row.token_hash, claimed: true, tokenId: row.token_id } : null;
}

export function insertOwnerToken(db: Database, t: { token_id: string; owner_id: string; token_hash: Uint8Array; label: string; now: number }): void {
  db.query('INSERT INTO owner_tokens (token_id, owner_id, token_hash, label, created_at) VALUES (?, ?, ?, ?, ?)').run(t.token_id, t.owner_id, t.token_hash, t.label, t.now);
}

/** Every token of the owner, newest first (revoked ones included, for the record). */
export function listOwnerTokens(db: Database, ownerId: string): OwnerTokenRow[] {
  return db
    .query<OwnerTokenRow, [string]>('SELECT token_id, owner_id, label, created_at, revoked_at FROM owner_tokens WHERE owner_id = ? ORDER BY created_at DESC, token_id')
    .all(ownerId);
}

export function getOwnerToken(db: Database, ownerId: string, tokenId: string): OwnerTokenRow | null {
  return db
    .query<OwnerTokenRow, [string, string]>('SELECT token_id, owner_id, label, created_at, revoked_at FROM owner_tokens WHERE owner_id = ? AND token_id = ?')
    .get(ownerId, tokenId);
}

/** Revokes a live token of the owner; false when it is not theirs or already revoked. */
export function revokeOwnerToken(db: Database, ownerId: string, tokenId: string, now: number): boolean {
  return db.query('UPDATE owner_tokens SET revoked_at = ? WHERE owner_id = ? AND token_id = ? AND revoked_at IS NULL').run(now, ownerId, tokenId).changes === 1;
}

// ---------------------------------------------------------------------------------------------
// Browser sessions

export function insertSession(db: Database, s: { session_hash: Uint8Array; owner_id: string; now: number; expires_at: number }): void {
  db.query('INSERT INTO owner_sessions (session_hash, owner_id, created_at, expires_at) VALUES (?, ?, ?, ?)').run(s.session_hash, s.owner_id, s.now, s.expires_at);
}

/** The live session with this hash, or null. */
export function findSession(db: Database, hash: Uint8Array, now: number): { session_hash: Uint8Array; owner_id: string; expires_at: bigint } | null {
  return db
    .query<{ session_hash: Uint8Array; owner_id: string; expires_at: bigint }, [Uint8Array, number]>(
      'SELECT session_hash, owner_id, expires_at FROM owner_sessions WHERE session_hash = ? AND expires_at > ?',
    )
    .get(hash, now);
}

export function deleteSession(db: Database, hash: Uint8Array): void {
  db.query('DELETE FROM owner_sessions WHERE session_hash = ?').run(hash);
}

/** Housekeeping: drops expired sessions and links older than a day past their expiry. */
export function deleteExpiredOwnerRows(db: Database, now: number): number {
  const day = 24 * 60 * 60 * 1000;
  return (
    db.query('DELETE FROM owner_sessions WHERE expires_at <= ?').run(now).changes +
    db.query('DELETE FROM magic_links WHERE expires_at <= ?').run(now - day).changes
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

export function insertMagicLink(db: Database, l: { link_hash: Uint8Array; purpose: MagicLinkRow['purpose']; email: string; wallet_id: string | null; now: number; expires_at: number }): void {
  db.query('INSERT INTO magic_links (link_hash, purpose, email, wallet_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)').run(
    l.link_hash,
    l.purpose,
    l.email,
    l.wallet_id,
    l.now,
    l.expires_at,
  );
}

export function getMagicLink(db: Database, hash: Uint8Array): MagicLinkRow | null {
  return db.query<MagicLinkRow, [Uint8Array]>('SELECT * FROM magic_links WHERE link_hash = ?').get(hash);
}

/** How many links of `purpose` were made for `email` since `since` (a mail-bomb brake). */
export function countMagicLinksSince(db: Database, email: string, purpose: MagicLinkRow['purpose'], since: number): number {
  const row = db.query<{ n: bigint }, [string, string, number]>('SELECT count(*) AS n FROM magic_links WHERE email = ? AND purpose = ? AND created_at >= ?').get(email, purpose, since);
  return Number(row?.n ?? 0n);
}

/** Spends a live link; false when it was used already or has expired (a concurrent use won). */
export function useMagicLink(db: Database, hash: Uint8Array, now: number): boolean {
  return db.query('UPDATE magic_links SET used_at = ? WHERE link_hash = ? AND used_at IS NULL AND expires_at > ?').run(now, hash, now).changes === 1;
}

// ---------------------------------------------------------------------------------------------
// Claim-code lockout

export interface ClaimAttemptsRow {
  wallet_id: string;
  failures: bigint;
  locked_until: bigint | null;
}

export function getClaimAttempts(db: Database, walletId: string): ClaimAttemptsRow | null {
  return db.query<ClaimAttemptsRow, [string]>('SELECT wallet_id, failures, locked_until FROM claim_attempts WHERE wallet_id = ?').get(walletId);
}

/**
 * Counts one wrong claim code. The `maxFailures`-th in a row locks the claim until
 * `now + lockMs` and starts the count again. Returns the failures counted and the lock, if any.
 */
export function recordClaimFailure(db: Database, walletId: string, now: number, maxFailures: number, lockMs: number): { failures: number; lockedUntil: number | null } {
  const failures = Number(getClaimAttempts(db, walletId)?.failures ?? 0n) + 1;
  const locked = failures >= maxFailures;
  db.query(
    `INSERT INTO claim_attempts (wallet_id, failures, locked_until, updated_at) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (wallet_id) DO UPDATE SET failures = ?2, locked_until = coalesce(?3, locked_until), updated_at = ?4`,
  ).run(walletId, locked ? 0 : failures, locked ? now + lockMs : null, now);
  return { failures, lockedUntil: locked ? now + lockMs : null };
}

export function clearClaimAttempts(db: Database, walletId: string): void {
  db.query('DELETE FROM claim_attempts WHERE wallet_id = ?').run(walletId);
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

export function insertApprovalLink(db: Database, l: { link_hash: Uint8Array; approval_id: string; decision: ApprovalLinkRow['decision']; now: number; expires_at: number }): void {
  db.query('INSERT INTO approval_links (link_hash, approval_id, decision, created_at, expires_at) VALUES (?, ?, ?, ?, ?)').run(
    l.link_hash,
    l.approval_id,
    l.decision,
    l.now,
    l.expires_at,
  );
}

export function getApprovalLink(db: Database, hash: Uint8Array): ApprovalLinkRow | null {
  return db.query<ApprovalLinkRow, [Uint8Array]>('SELECT * FROM approval_links WHERE link_hash = ?').get(hash);
}

/** Spends every link of an approval; false when the given link was already used or expired. */
export function spendApprovalLinks(db: Database, hash: Uint8Array, approvalId: string, now: number): boolean {
  const mine = db.query('UPDATE approval_links SET used_at = ? WHERE link_hash = ? AND used_at IS NULL AND expires_at > ?').run(now, hash, now).changes === 1;
  if (mine) db.query('UPDATE approval_links SET used_at = ? WHERE approval_id = ? AND used_at IS NULL').run(now, approvalId);
  return mine;
}

// ---------------------------------------------------------------------------------------------
// What an owner sees: only their own wallets, approvals, audit entries and history.

/** The owner's wallet, or null when it does not exist or is someone else's. */
export function ownerWallet(db: Database, ownerId: string, walletId: string): WalletRow | null {
  return db.query<WalletRow, [string, string]>("SELECT * FROM wallets WHERE wallet_id = ? AND owner_id = ? AND status = 'claimed'").get(walletId, ownerId);
}

/** The owner's wallets, newest claim first, with the count of pending approvals of each. */
export function ownerWallets(db: Database, ownerId: string, limit: number, offset: number): { rows: (WalletRow & { pending_approvals: bigint })[]; total: number } {
  const rows = db
    .query<WalletRow & { pending_approvals: bigint }, [string, number, number]>(
      `SELECT w.*, (SELECT count(*) FROM approvals a WHERE a.wallet_id = w.wallet_id AND a.status = 'pending') AS pending_approvals
       FROM wallets w WHERE w.owner_id = ? AND w.status = 'claimed' ORDER BY w.claimed_at DESC, w.wallet_id LIMIT ? OFFSET ?`,
    )
    .all(ownerId, limit, offset);
  const total = db.query<{ n: bigint }, [string]>("SELECT count(*) AS n FROM wallets WHERE owner_id = ? AND status = 'claimed'").get(ownerId);
  return { rows, total: Number(total?.n ?? 0n) };
}

/** The approval when it belongs to one of the owner's wallets, else null. */
export function ownerApproval(db: Database, ownerId: string, approvalId: string): ApprovalRow | null {
  return db
    .query<ApprovalRow, [string, string]>(
      "SELECT a.* FROM approvals a JOIN wallets w ON w.wallet_id = a.wallet_id WHERE a.approval_id = ? AND w.owner_id = ? AND w.status = 'claimed'",
    )
    .get(approvalId, ownerId);
}

/** Approvals of the owner's wallets, newest first, optionally of one wallet and one status. */
export function ownerApprovals(
  db: Database,
  ownerId: string,
  filter: { walletId?: string; status?: ApprovalRow['status'] },
  limit: number,
  offset: number,
): { rows: (ApprovalRow & { wallet_name: string; wallet_username: string })[]; total: number } {
  const where = "w.owner_id = ?1 AND w.status = 'claimed' AND (?2 IS NULL OR a.wallet_id = ?2) AND (?3 IS NULL OR a.status = ?3)";
  const args = [ownerId, filter.walletId ?? null, filter.status ?? null] as const;
  const rows = db
    .query<ApprovalRow & { wallet_name: string; wallet_username: string }, [string, string | null, string | null, number, number]>(
      `SELECT a.*, w.name AS wallet_name, w.username AS wallet_username FROM approvals a JOIN wallets w ON w.wallet_id = a.wallet_id
       WHERE ${where} ORDER BY a.created_at DESC, a.approval_id LIMIT ?4 OFFSET ?5`,
    )
    .all(...args, limit, offset);
  const total = db
    .query<{ n: bigint }, [string, string | null, string | null]>(`SELECT count(*) AS n FROM approvals a JOIN wallets w ON w.wallet_id = a.wallet_id WHERE ${where}`)
    .get(...args);
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
export function auditEntries(db: Database, walletId: string, limit: number, offset: number): { rows: AuditRow[]; total: number } {
  const rows = db.query<AuditRow, [string, number, number]>('SELECT * FROM audit_log WHERE wallet_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?').all(walletId, limit, offset);
  const total = db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM audit_log WHERE wallet_id = ?').get(walletId);
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
export function walletHistory(db: Database, walletId: string, limit: number, offset: number): { rows: HistoryRow[]; total: number } {
  const rows = db
    .query<HistoryRow, [string, number, number]>(
      `SELECT transaction_id, type, direction, category, status, amount, fee, setup_fee, counterparty, to_address, note, reference, signature, created_at
       FROM transactions WHERE wallet_id = ? ORDER BY created_at DESC, transaction_id DESC LIMIT ? OFFSET ?`,
    )
    .all(walletId, limit, offset);
  const total = db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM transactions WHERE wallet_id = ?').get(walletId);
  return { rows, total: Number(total?.n ?? 0n) };
}

/** Status and subject of an approval for the agent's long poll (cheap: one indexed row). */
export function approvalStatusOf(db: Database, approvalId: string): string | null {
  return db.query<{ status: string }, [string]>('SELECT status FROM approvals WHERE approval_id = ?').get(approvalId)?.status ?? null;
}
