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
