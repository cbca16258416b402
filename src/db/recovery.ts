/** The owner's recovery enrollments (DESIGN §4.1): at most one in progress and one enrolled per wallet. */
import type { Database } from 'bun:sqlite';

export type EnrollmentStatus = 'open' | 'split' | 'delivered' | 'enrolled' | 'cancelled' | 'expired' | 'superseded';

export interface EnrollmentRow {
  enrollment_id: string;
  wallet_id: string;
  owner_id: string;
  status: EnrollmentStatus;
  daemon_report: Uint8Array | null;
  agent_box: Uint8Array | null;
  fingerprint: string | null;
  created_at: bigint;
  updated_at: bigint;
  expires_at: bigint;
  enrolled_at: bigint | null;
  /** Until when the owner lets a key refresh supersede this (enrolled) kit; NULL: never approved. */
  refresh_allowed_until: bigint | null;
}

/** Opens an enrollment; one still in progress for the wallet is cancelled (the newest code wins). */
export function insertEnrollment(db: Database, e: { enrollment_id: string; wallet_id: string; owner_id: string; now: number; expires_at: number }): void {
  db.query("UPDATE recovery_enrollments SET status = 'cancelled', daemon_report = NULL, agent_box = NULL, updated_at = ? WHERE wallet_id = ? AND status IN ('open', 'split', 'delivered')").run(e.now, e.wallet_id);
  db.query("INSERT INTO recovery_enrollments (enrollment_id, wallet_id, owner_id, status, created_at, updated_at, expires_at) VALUES (?, ?, ?, 'open', ?, ?, ?)").run(
    e.enrollment_id,
    e.wallet_id,
    e.owner_id,
    e.now,
    e.now,
    e.expires_at,
  );
}

export function getEnrollment(db: Database, enrollmentId: string): EnrollmentRow | null {
  return db.query<EnrollmentRow, [string]>('SELECT * FROM recovery_enrollments WHERE enrollment_id = ?').get(enrollmentId);
}

/** Moves an enrollment from `from` to `to` with the given fields; false when it was not in `from`. */
export function moveEnrollment(
  db: Database,
  enrollmentId: string,
  from: EnrollmentStatus[],
  to: EnrollmentStatus,
  now: number,
  set: { daemon_report?: Uint8Array | null; agent_box?: Uint8Array | null; fingerprint?: string; enrolled_at?: number } = {},
): boolean {
  const cols = Object.keys(set);
  const assignments = cols.map((c) => `${c} = $${c}`).join(', ');
  const params: Record<string, unknown> = { $id: enrollmentId, $to: to, $now: now };
  for (const c of cols) params[`$${c}`] = (set as Record<string, unknown>)[c];
  const placeholders = from.map((_, i) => `$f${i}`).join(', ');
  from.forEach((f, i) => (params[`$f${i}`] = f));
  return (
    db
      .query(`UPDATE recovery_enrollments SET status = $to, updated_at = $now${assignments ? `, ${assignments}` : ''} WHERE enrollment_id = $id AND status IN (${placeholders})`)
      .run(params as never).changes === 1
  );
}

/** The wallet's enrolled kit, if any: the newest enrollment that completed and was not superseded since. */
export function currentEnrollment(db: Database, walletId: string): EnrollmentRow | null {
  return db.query<EnrollmentRow, [string]>("SELECT * FROM recovery_enrollments WHERE wallet_id = ? AND status = 'enrolled' ORDER BY enrolled_at DESC LIMIT 1").get(walletId);
}

/** The owner lets a key refresh supersede enrolled kit `enrollmentId` until `until`; false unless it is enrolled. */
export function allowKitRefresh(db: Database, enrollmentId: string, until: number, now: number): boolean {
  return db.query("UPDATE recovery_enrollments SET refresh_allowed_until = ?, updated_at = ? WHERE enrollment_id = ? AND status = 'enrolled'").run(until, now, enrollmentId).changes === 1;
}

/** The wallet's enrollment in progress, if any. */
export function enrollmentInProgress(db: Database, walletId: string): EnrollmentRow | null {
  return db.query<EnrollmentRow, [string]>("SELECT * FROM recovery_enrollments WHERE wallet_id = ? AND status IN ('open', 'split', 'delivered') ORDER BY created_at DESC LIMIT 1").get(walletId);
}

/**
 * After a refresh: every enrolled kit of the wallet no longer signs, and an enrollment in progress
 * drops its reports (pieces of the old shares), as a cancelled one does. Returns how many were superseded.
 */
export function supersedeEnrollments(db: Database, walletId: string, now: number): number {
  return db
    .query("UPDATE recovery_enrollments SET status = 'superseded', daemon_report = NULL, agent_box = NULL, updated_at = ? WHERE wallet_id = ? AND status IN ('enrolled', 'open', 'split', 'delivered')")
    .run(now, walletId).changes;
}

export interface KeyRefreshRow {
  refresh_id: string;
  wallet_id: string;
  status: 'pending' | 'committed' | 'abandoned';
  server_key: Uint8Array | null;
  public_package: string;
  created_at: bigint;
  expires_at: bigint;
  committed_at: bigint | null;
  /** The hash of the bot API key the commit gives the wallet (NULL: a refresh begun before keys rotated with it). */
  api_key_hash: Uint8Array | null;
}

/** A refresh the daemon has computed its side of; any earlier pending one of the wallet is abandoned. */
export function insertKeyRefresh(
  db: Database,
  r: { refresh_id: string; wallet_id: string; server_key: Uint8Array; public_package: string; api_key_hash: Uint8Array; now: number; expires_at: number },
): void {
  db.query("UPDATE key_refreshes SET status = 'abandoned', server_key = NULL, api_key_hash = NULL WHERE wallet_id = ? AND status = 'pending'").run(r.wallet_id);
  db.query("INSERT INTO key_refreshes (refresh_id, wallet_id, status, server_key, public_package, api_key_hash, created_at, expires_at) VALUES (?, ?, 'pending', ?, ?, ?, ?, ?)").run(
    r.refresh_id,
    r.wallet_id,
    r.server_key,
    r.public_package,
    r.api_key_hash,
    r.now,
    r.expires_at,
  );
}

export function getKeyRefresh(db: Database, refreshId: string): KeyRefreshRow | null {
  return db.query<KeyRefreshRow, [string]>('SELECT * FROM key_refreshes WHERE refresh_id = ?').get(refreshId);
}

/**
 * Makes a pending refresh the wallet's key: its sealed server key, public package and bot API key
 * replace the wallet's (the old API key is refused from this commit on).
 */
export function commitKeyRefresh(db: Database, refreshId: string, now: number): boolean {
  const row = db.query<KeyRefreshRow, [string]>("SELECT * FROM key_refreshes WHERE refresh_id = ? AND status = 'pending'").get(refreshId);
  if (!row || !row.server_key) return false;
  db.query('UPDATE wallets SET server_key = ?, public_package = ?, api_key_hash = COALESCE(?, api_key_hash) WHERE wallet_id = ?').run(row.server_key, row.public_package, row.api_key_hash, row.wallet_id);
  db.query("UPDATE key_refreshes SET status = 'committed', server_key = NULL, committed_at = ? WHERE refresh_id = ?").run(now, refreshId);
  return true;
}

/** Every open signing session of the wallet's transactions: their nonces were committed under the old shares. */
export function closeWalletSigningSessions(db: Database, walletId: string): number {
  return db
    .query("UPDATE sign_sessions SET nonces = NULL, status = 'failed' WHERE status = 'open' AND transaction_id IN (SELECT transaction_id FROM transactions WHERE wallet_id = ?)")
    .run(walletId).changes;
}

export interface SweepRow {
  sweep_id: string;
  wallet_id: string;
  owner_id: string;
  to_address: string;
  status: 'waiting' | 'cancelled' | 'signing';
  executes_at: bigint;
  transaction_id: string | null;
  created_at: bigint;
  updated_at: bigint;
}

export function insertSweep(db: Database, s: { sweep_id: string; wallet_id: string; owner_id: string; to_address: string; executes_at: number; now: number }): void {
  db.query("INSERT INTO recovery_sweeps (sweep_id, wallet_id, owner_id, to_address, status, executes_at, created_at, updated_at) VALUES (?, ?, ?, ?, 'waiting', ?, ?, ?)").run(
    s.sweep_id,
    s.wallet_id,
    s.owner_id,
    s.to_address,
    s.executes_at,
    s.now,
    s.now,
  );
}

export function getSweep(db: Database, sweepId: string): SweepRow | null {
  return db.query<SweepRow, [string]>('SELECT * FROM recovery_sweeps WHERE sweep_id = ?').get(sweepId);
}

/**
 * The wallet's sweep still under way: not cancelled and its transaction not landed. A completed
 * sweep is over, so a deposit that arrives after it can be swept by a new announcement.
 */
export function liveSweep(db: Database, walletId: string): SweepRow | null {
  return db
    .query<SweepRow, [string]>(
      `SELECT s.* FROM recovery_sweeps s LEFT JOIN transactions t ON t.transaction_id = s.transaction_id
       WHERE s.wallet_id = ? AND s.status != 'cancelled' AND (t.status IS NULL OR t.status != 'completed') ORDER BY s.created_at DESC LIMIT 1`,
    )
    .get(walletId);
}

export function walletSweeps(db: Database, walletId: string): SweepRow[] {
  return db.query<SweepRow, [string]>('SELECT * FROM recovery_sweeps WHERE wallet_id = ? ORDER BY created_at DESC LIMIT 20').all(walletId);
}

export function moveSweep(db: Database, sweepId: string, from: SweepRow['status'][], to: SweepRow['status'], now: number, transactionId?: string): boolean {
  const placeholders = from.map(() => '?').join(', ');
  return (
    db
      .query(`UPDATE recovery_sweeps SET status = ?, transaction_id = COALESCE(?, transaction_id), updated_at = ? WHERE sweep_id = ? AND status IN (${placeholders})`)
      .run(to, transactionId ?? null, now, sweepId, ...from).changes === 1
  );
}
