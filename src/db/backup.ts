/**
 * The ledger's side of backup and restore: an online snapshot, the "restored" marker in meta,
 * and the statements the first start after a restore runs so that nothing from backup time can
 * sign again (DESIGN §4: a nonce signs one message, once).
 */
import { Database } from 'bun:sqlite';
import type { TxRow } from './transactions.ts';
import type { ApprovalRow } from './approvals.ts';
import type { Store } from './store.ts';

/** The meta key set by `admin restore`; its value is JSON {backup_created_at, restored_at}. */
const RESTORED_KEY = 'restored_from_backup';

/**
 * A consistent copy of the database at `srcPath` while other connections write to it: VACUUM INTO
 * reads inside one read transaction (WAL lets writers go on) and writes a compact new file.
 */
export function snapshotDatabase(srcPath: string, destPath: string): number {
  const db = new Database(srcPath, { readonly: true });
  try {
    db.run('PRAGMA busy_timeout = 5000');
    db.query('VACUUM INTO ?').run(destPath);
  } finally {
    db.close();
  }
  const copy = new Database(destPath, { readonly: true });
  try {
    return Number(copy.query<{ user_version: number }, []>('PRAGMA user_version').get()?.user_version ?? 0);
  } finally {
    copy.close();
  }
}

/** Opens a restored file, runs integrity_check and records the marker; returns the check's answer ("ok" when sound). */
export function checkAndMarkRestored(path: string, marker: { backup_created_at: string; restored_at: string }): string {
  const db = new Database(path, { strict: true });
  try {
    const answer = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').get()?.integrity_check ?? 'no answer';
    if (answer !== 'ok') return answer;
    db.query('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(RESTORED_KEY, JSON.stringify(marker));
    return answer;
  } finally {
    db.close();
  }
}

/** Marks a ledger that came back by the database's own means (a PostgreSQL point-in-time restore) as restored. */
export async function markRestored(db: Store, marker: { backup_created_at: string; restored_at: string }): Promise<void> {
  await db.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', RESTORED_KEY, JSON.stringify(marker));
}

/** The marker of a restored ledger not yet reconciled, or null. */
export async function restoredMarker(db: Store): Promise<{ backup_created_at: string; restored_at: string } | null> {
  const row = await db.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', RESTORED_KEY);
  return row ? (JSON.parse(row.value) as { backup_created_at: string; restored_at: string }) : null;
}

export async function clearRestoredMarker(db: Store): Promise<void> {
  await db.run('DELETE FROM meta WHERE key = ?', RESTORED_KEY);
}

/**
 * Closes every open signing session and unfinished DKG run the backup carried: their sealed nonces
 * and DKG secret state may already have been used after the backup was taken (a completed DKG run
 * holds a key package, not a secret that must be used once). Returns how many of each were closed.
 */
export async function invalidateRestoredSigning(db: Store): Promise<{ signSessions: number; dkgSessions: number }> {
  const signSessions = (await db.run("UPDATE sign_sessions SET nonces = NULL, status = 'failed' WHERE status = 'open'")).changes;
  const dkgSessions = (await db.run("UPDATE dkg_sessions SET status = 'used' WHERE status = 'started'")).changes;
  return { signSessions, dkgSessions };
}

/** Approvals still pending in the restored ledger: a decision taken after the backup is lost. */
export async function allPendingApprovals(db: Store): Promise<ApprovalRow[]> {
  return await db.all<ApprovalRow>("SELECT * FROM approvals WHERE status = 'pending' ORDER BY created_at");
}

/** Outgoing rows a landed transfer may belong to: not settled in the restored ledger. */
export async function unsettledOutgoing(db: Store, transactionId: string): Promise<TxRow | null> {
  return await db
    .get<TxRow>("SELECT * FROM transactions WHERE transaction_id = ? AND direction = 'out' AND status NOT IN ('completed', 'failed')", transactionId);
}

/**
 * Attaches transfer bytes found on chain to a restored outgoing row and makes it pending, so the
 * confirmation path records its completion (recipient row, merchant event, paylink) exactly once.
 * Signed-but-expired rows may be 'expired' or 'cancelled' in the restored copy: landed is landed.
 */
export async function attachLandedTransfer(db: Store, transactionId: string, wire: Uint8Array, signature: string, now: number): Promise<boolean> {
  return (
    (await db
      .run("UPDATE transactions SET signed_tx = ?, signature = ?, status = 'pending', error = NULL, updated_at = ? WHERE transaction_id = ? AND direction = 'out' AND status NOT IN ('completed', 'failed')", wire, signature, now, transactionId)).changes === 1
  );
}

/** x402 purchases of a wallet not completed in the restored ledger, with the partially signed bytes each was given to a seller in. */
export async function unsettledPurchasesOf(db: Store, walletId: string): Promise<{ fetch_id: string; transaction_id: string; signed_tx: Uint8Array }[]> {
  return await db
    .all<{ fetch_id: string; transaction_id: string; signed_tx: Uint8Array }>("SELECT p.fetch_id, p.transaction_id, t.signed_tx FROM x402_purchases p JOIN transactions t ON t.transaction_id = p.transaction_id WHERE p.wallet_id = ? AND p.status != 'completed' AND t.signed_tx IS NOT NULL", walletId);
}

/** Wallet owning a Solana address, merchant paid at a payout address: how a recovered transfer's recipient is named. */
export async function recipientOf(db: Store, address: string): Promise<{ wallet_id: string; username: string } | { merchant_id: string; username: string } | null> {
  const wallet = await db.get<{ wallet_id: string; username: string }>('SELECT wallet_id, username FROM wallets WHERE address = ?', address);
  if (wallet) return wallet;
  return await db.get<{ merchant_id: string; username: string }>('SELECT merchant_id, username FROM merchants WHERE payout_address = ? ORDER BY created_at LIMIT 1', address);
}
