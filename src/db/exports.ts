/** Wallet export keys (.wlt files) and the calls that released them. */
import type { Database } from 'bun:sqlite';

export interface ExportRow {
  export_id: string;
  wallet_id: string;
  file_key: Uint8Array;
  import_token_hash: Uint8Array;
  created_at: bigint;
  revoked_at: bigint | null;
}

export function insertExport(db: Database, e: { export_id: string; wallet_id: string; file_key: Uint8Array; import_token_hash: Uint8Array; created_at: number }): void {
  db.query('INSERT INTO wallet_exports (export_id, wallet_id, file_key, import_token_hash, created_at) VALUES ($export_id, $wallet_id, $file_key, $import_token_hash, $created_at)').run(e);
}

export function getExport(db: Database, exportId: string): ExportRow | null {
  return db.query<ExportRow, [string]>('SELECT * FROM wallet_exports WHERE export_id = ?').get(exportId);
}

/** How many times the key of `exportId` was released since `since`. */
export function importCallsSince(db: Database, exportId: string, since: number): number {
  const row = db.query<{ n: bigint }, [string, number]>('SELECT count(*) AS n FROM wallet_import_calls WHERE export_id = ? AND at >= ?').get(exportId, since);
  return Number(row?.n ?? 0n);
}

export function recordImportCall(db: Database, exportId: string, at: number): void {
  db.query('INSERT INTO wallet_import_calls (export_id, at) VALUES (?, ?)').run(exportId, at);
}

/** An export as its wallet's owner sees it: with how often its key was released. */
export interface ExportListRow {
  export_id: string;
  created_at: bigint;
  revoked_at: bigint | null;
  imports: bigint;
  last_import_at: bigint | null;
}

/** Exports of a wallet, newest first, with their key releases. */
export function walletExports(db: Database, walletId: string, limit: number, offset: number): { rows: ExportListRow[]; total: number } {
  const rows = db
    .query<ExportListRow, [string, number, number]>(
      `SELECT e.export_id, e.created_at, e.revoked_at,
              (SELECT count(*) FROM wallet_import_calls c WHERE c.export_id = e.export_id) AS imports,
              (SELECT max(c.at) FROM wallet_import_calls c WHERE c.export_id = e.export_id) AS last_import_at
       FROM wallet_exports e WHERE e.wallet_id = ? ORDER BY e.created_at DESC, e.export_id LIMIT ? OFFSET ?`,
    )
    .all(walletId, limit, offset);
  const total = db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM wallet_exports WHERE wallet_id = ?').get(walletId);
  return { rows, total: Number(total?.n ?? 0n) };
}

/** Revokes one export of `walletId`; false when it is not that wallet's or already revoked. */
export function revokeExport(db: Database, walletId: string, exportId: string, now: number): boolean {
  return db.query('UPDATE wallet_exports SET revoked_at = ? WHERE export_id = ? AND wallet_id = ? AND revoked_at IS NULL').run(now, exportId, walletId).changes === 1;
}

/** Revokes every live export of `walletId`; returns their ids. */
export function revokeAllExports(db: Database, walletId: string, now: number): string[] {
  return db
    .query<{ export_id: string }, [number, string]>('UPDATE wallet_exports SET revoked_at = ? WHERE wallet_id = ? AND revoked_at IS NULL RETURNING export_id')
    .all(now, walletId)
    .map((r) => r.export_id);
}
