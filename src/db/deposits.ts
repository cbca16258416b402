/** Deposit watcher state: per-wallet cursors. */
import type { Database } from 'bun:sqlite';

export function depositCursor(db: Database, walletId: string): string | null {
  return db.query<{ last_signature: string }, [string]>('SELECT last_signature FROM deposit_cursors WHERE wallet_id = ?').get(walletId)?.last_signature ?? null;
}

export function setDepositCursor(db: Database, walletId: string, signature: string, now: number): void {
  db.query('INSERT INTO deposit_cursors (wallet_id, last_signature, updated_at) VALUES (?, ?, ?) ON CONFLICT (wallet_id) DO UPDATE SET last_signature = excluded.last_signature, updated_at = excluded.updated_at').run(
    walletId,
    signature,
    now,
  );
}

export function allWalletAddresses(db: Database): { wallet_id: string; address: string }[] {
  return db.query<{ wallet_id: string; address: string }, []>('SELECT wallet_id, address FROM wallets ORDER BY created_at').all();
}
