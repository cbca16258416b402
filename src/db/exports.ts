/** Wallet export keys (.wlt files) and the calls that released them. */
import type { Store } from './store.ts';

export interface ExportRow {
  export_id: string;
  wallet_id: string;
  file_key: Uint8Array;
  import_token_hash: Uint8Array;
  created_at: bigint;
  revoked_at: bigint | null;
}

export async function insertExport(db: Store, e: { export_id: string; wallet_id: string; file_key: Uint8Array; import_token_hash: Uint8Array; created_at: number }): Promise<void> {
  await db.run('INSERT INTO wallet_exports (export_id, wallet_id, file_key, import_token_hash, created_at) VALUES ($export_id, $wallet_id, $file_key, $import_token_hash, $created_at)', e);
}

export async function getExport(db: Store, exportId: string): Promise<ExportRow | null> {
  return await db.get<ExportRow>('SELECT * FROM wallet_exports WHERE export_id = ?', exportId);
}

/** How many times the key of `exportId` was released since `since`. */
export async function importCallsSince(db: Store, exportId: string, since: number): Promise<number> {
  const row = await db.get<{ n: bigint }>('SELECT count(*) AS n FROM wallet_import_calls WHERE export_id = ? AND at >= ?', exportId, since);
  return Number(row?.n ?? 0n);
}

export async function recordImportCall(db: Store, exportId: string, at: number): Promise<void> {
  await db.run('INSERT INTO wallet_import_calls (export_id, at) VALUES (?, ?)', exportId, at);
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
export async function walletExports(db: Store, walletId: string, limit: number, offset: number): Promise<{ rows: ExportListRow[]; total: number }> {
  const rows = await db
    .all<ExportListRow>(`SELECT e.export_id, e.created_at, e.revoked_at,
              (SELECT count(*) FROM wallet_import_calls c WHERE c.export_id = e.export_id) AS imports,
              (SELECT max(c.at) FROM wallet_import_calls c WHERE c.export_id = e.export_id) AS last_import_at
       FROM wallet_exports e WHERE e.wallet_id = ? ORDER BY e.created_at DESC, e.export_id LIMIT ? OFFSET ?`, walletId, limit, offset);
  const total = await db.get<{ n: bigint }>('SELECT count(*) AS n FROM wallet_exports WHERE wallet_id = ?', walletId);
  return { rows, total: Number(total?.n ?? 0n) };
}

/** Revokes one export of `walletId`; false when it is not that wallet's or already revoked. */
export async function revokeExport(db: Store, walletId: string, exportId: string, now: number): Promise<boolean> {
  return (await db.run('UPDATE wallet_exports SET revoked_at = ? WHERE export_id = ? AND wallet_id = ? AND revoked_at IS NULL', now, exportId, walletId)).changes === 1;
}

/** Revokes every live export of `walletId`; returns their ids. */
export async function revokeAllExports(db: Store, walletId: string, now: number): Promise<string[]> {
  return (await db
    .all<{ export_id: string }>('UPDATE wallet_exports SET revoked_at = ? WHERE wallet_id = ? AND revoked_at IS NULL RETURNING export_id', now, walletId))
    .map((r) => r.export_id);
}
