/** The owner's recovery enrollments (DESIGN §4.1): at most one in progress and one enrolled per wallet. */
import type { Store } from './store.ts';

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
export async function insertEnrollment(db: Store, e: { enrollment_id: string; wallet_id: string; owner_id: string; now: number; expires_at: number }): Promise<void> {
  await db.run("UPDATE recovery_enrollments SET status = 'cancelled', daemon_report = NULL, agent_box = NULL, updated_at = ? WHERE wallet_id = ? AND status IN ('open', 'split', 'delivered')", e.now, e.wallet_id);
  await db.run("INSERT INTO recovery_enrollments (enrollment_id, wallet_id, owner_id, status, created_at, updated_at, expires_at) VALUES (?, ?, ?, 'open', ?, ?, ?)", e.enrollment_id,
    e.wallet_id,
    e.owner_id,
    e.now,
    e.now,
    e.expires_at,
  );
}

export async function getEnrollment(db: Store, enrollmentId: string): Promise<EnrollmentRow | null> {
  return await db.get<EnrollmentRow>('SELECT * FROM recovery_enrollments WHERE enrollment_id = ?', enrollmentId);
}

/** Moves an enrollment from `from` to `to` with the given fields; false when it was not in `from`. */
export async function moveEnrollment(
  db: Store,
  enrollmentId: string,
  from: EnrollmentStatus[],
  to: EnrollmentStatus,
  now: number,
  set: { daemon_report?: Uint8Array | null; agent_box?: Uint8Array | null; fingerprint?: string; enrolled_at?: number } = {},
): Promise<boolean> {
  const cols = Object.keys(set);
  const assignments = cols.map((c) => `${c} = $${c}`).join(', ');
  // Keys without the `$`: PgStore looks the names up bare (bun:sqlite in strict mode takes either).
  const params: Record<string, unknown> = { id: enrollmentId, to, now };
  for (const c of cols) params[c] = (set as Record<string, unknown>)[c];
  const placeholders = from.map((_, i) => `$f${i}`).join(', ');
  from.forEach((f, i) => (params[`f${i}`] = f));
  return (
    (await db
      .run(`UPDATE recovery_enrollments SET status = $to, updated_at = $now${assignments ? `, ${assignments}` : ''} WHERE enrollment_id = $id AND status IN (${placeholders})`, params as never)).changes === 1
  );
}

/** The wallet's enrolled kit, if any: the newest enrollment that completed and was not superseded since. */
export async function currentEnrollment(db: Store, walletId: string): Promise<EnrollmentRow | null> {
  return await db.get<EnrollmentRow>("SELECT * FROM recovery_enrollments WHERE wallet_id = ? AND status = 'enrolled' ORDER BY enrolled_at DESC LIMIT 1", walletId);
}

/** The owner lets a key refresh supersede enrolled kit `enrollmentId` until `until`; false unless it is enrolled. */
export async function allowKitRefresh(db: Store, enrollmentId: string, until: number, now: number): Promise<boolean> {
  return (await db.run("UPDATE recovery_enrollments SET refresh_allowed_until = ?, updated_at = ? WHERE enrollment_id = ? AND status = 'enrolled'", until, now, enrollmentId)).changes === 1;
}

/** The wallet's enrollment in progress, if any. */
export async function enrollmentInProgress(db: Store, walletId: string): Promise<EnrollmentRow | null> {
  return await db.get<EnrollmentRow>("SELECT * FROM recovery_enrollments WHERE wallet_id = ? AND status IN ('open', 'split', 'delivered') ORDER BY created_at DESC LIMIT 1", walletId);
}

/**
 * After a refresh: every enrolled kit of the wallet no longer signs, and an enrollment in progress
 * drops its reports (pieces of the old shares), as a cancelled one does. Returns how many were superseded.
 */
export async function supersedeEnrollments(db: Store, walletId: string, now: number): Promise<number> {
  return (await db
    .run("UPDATE recovery_enrollments SET status = 'superseded', daemon_report = NULL, agent_box = NULL, updated_at = ? WHERE wallet_id = ? AND status IN ('enrolled', 'open', 'split', 'delivered')", now, walletId)).changes;
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
export async function insertKeyRefresh(
  db: Store,
  r: { refresh_id: string; wallet_id: string; server_key: Uint8Array; public_package: string; api_key_hash: Uint8Array; now: number; expires_at: number },
): Promise<void> {
  await db.run("UPDATE key_refreshes SET status = 'abandoned', server_key = NULL, api_key_hash = NULL WHERE wallet_id = ? AND status = 'pending'", r.wallet_id);
  await db.run("INSERT INTO key_refreshes (refresh_id, wallet_id, status, server_key, public_package, api_key_hash, created_at, expires_at) VALUES (?, ?, 'pending', ?, ?, ?, ?, ?)", r.refresh_id,
    r.wallet_id,
    r.server_key,
    r.public_package,
    r.api_key_hash,
    r.now,
    r.expires_at,
  );
}

export async function getKeyRefresh(db: Store, refreshId: string): Promise<KeyRefreshRow | null> {
  return await db.get<KeyRefreshRow>('SELECT * FROM key_refreshes WHERE refresh_id = ?', refreshId);
}

/**
 * Makes a pending refresh the wallet's key: its sealed server key, public package and bot API key
 * replace the wallet's (the old API key is refused from this commit on).
 */
export async function commitKeyRefresh(db: Store, refreshId: string, now: number): Promise<boolean> {
  const row = await db.get<KeyRefreshRow>("SELECT * FROM key_refreshes WHERE refresh_id = ? AND status = 'pending'", refreshId);
  if (!row || !row.server_key) return false;
  await db.run('UPDATE wallets SET server_key = ?, public_package = ?, api_key_hash = COALESCE(?, api_key_hash) WHERE wallet_id = ?', row.server_key, row.public_package, row.api_key_hash, row.wallet_id);
  await db.run("UPDATE key_refreshes SET status = 'committed', server_key = NULL, committed_at = ? WHERE refresh_id = ?", now, refreshId);
  return true;
}

/** Every open signing session of the wallet's transactions: their nonces were committed under the old shares. */
export async function closeWalletSigningSessions(db: Store, walletId: string): Promise<number> {
  return (await db
    .run("UPDATE sign_sessions SET nonces = NULL, status = 'failed' WHERE status = 'open' AND transaction_id IN (SELECT transaction_id FROM transactions WHERE wallet_id = ?)", walletId)).changes;
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

export async function insertSweep(db: Store, s: { sweep_id: string; wallet_id: string; owner_id: string; to_address: string; executes_at: number; now: number }): Promise<void> {
  await db.run("INSERT INTO recovery_sweeps (sweep_id, wallet_id, owner_id, to_address, status, executes_at, created_at, updated_at) VALUES (?, ?, ?, ?, 'waiting', ?, ?, ?)", s.sweep_id,
    s.wallet_id,
    s.owner_id,
    s.to_address,
    s.executes_at,
    s.now,
    s.now,
  );
}

export async function getSweep(db: Store, sweepId: string): Promise<SweepRow | null> {
  return await db.get<SweepRow>('SELECT * FROM recovery_sweeps WHERE sweep_id = ?', sweepId);
}

/**
 * The wallet's sweep still under way: not cancelled and its transaction not landed. A completed
 * sweep is over, so a deposit that arrives after it can be swept by a new announcement.
 */
export async function liveSweep(db: Store, walletId: string): Promise<SweepRow | null> {
  return await db
    .get<SweepRow>(`SELECT s.* FROM recovery_sweeps s LEFT JOIN transactions t ON t.transaction_id = s.transaction_id
       WHERE s.wallet_id = ? AND s.status != 'cancelled' AND (t.status IS NULL OR t.status != 'completed') ORDER BY s.created_at DESC LIMIT 1`, walletId);
}

export async function walletSweeps(db: Store, walletId: string): Promise<SweepRow[]> {
  return await db.all<SweepRow>('SELECT * FROM recovery_sweeps WHERE wallet_id = ? ORDER BY created_at DESC LIMIT 20', walletId);
}

export async function moveSweep(db: Store, sweepId: string, from: SweepRow['status'][], to: SweepRow['status'], now: number, transactionId?: string): Promise<boolean> {
  const placeholders = from.map(() => '?').join(', ');
  return (
    (await db
      .run(`UPDATE recovery_sweeps SET status = ?, transaction_id = COALESCE(?, transaction_id), updated_at = ? WHERE sweep_id = ? AND status IN (${placeholders})`, to, transactionId ?? null, now, sweepId, ...from)).changes === 1
  );
}
