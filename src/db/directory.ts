/** The username directory shared by wallets and merchants. */
import type { Database } from 'bun:sqlite';

export interface DirectoryEntry {
  kind: 'wallet' | 'merchant';
  id: string;
  username: string;
  name: string;
  address: string;
}

/**
 * Finds a wallet or merchant by username. Two primary-key lookups: on every pay intent, and
 * SQLite answers them several times faster than one LEFT JOIN over both tables.
 */
export function findByUsername(db: Database, username: string): DirectoryEntry | null {
  const entry = db.query<{ kind: 'wallet' | 'merchant'; ref_id: string }, [string]>('SELECT kind, ref_id FROM usernames WHERE username = ?').get(username);
  if (!entry) return null;
  const row =
    entry.kind === 'wallet'
      ? db.query<{ name: string; address: string }, [string]>('SELECT name, address FROM wallets WHERE wallet_id = ?').get(entry.ref_id)
      : db.query<{ name: string; address: string }, [string]>('SELECT name, payout_address AS address FROM merchants WHERE merchant_id = ?').get(entry.ref_id);
  return row ? { kind: entry.kind, id: entry.ref_id, username, name: row.name, address: row.address } : null;
}

/** The merchant whose payout address is `address` (the oldest, if several share it). */
export function findMerchantByPayoutAddress(db: Database, address: string): DirectoryEntry | null {
  return db
    .query<DirectoryEntry, [string]>("SELECT 'merchant' AS kind, merchant_id AS id, username, name, payout_address AS address FROM merchants WHERE payout_address = ? ORDER BY created_at LIMIT 1")
    .get(address);
}

/** The wallet whose address is `address`, if it is one of ours. */
export function findWalletByAddress(db: Database, address: string): DirectoryEntry | null {
  return db
    .query<DirectoryEntry, [string]>("SELECT 'wallet' AS kind, wallet_id AS id, username, name, address FROM wallets WHERE address = ?")
    .get(address);
}

/** The wallet or merchant payout registered here at `address` (a wallet first), if any. */
export function findPayeeByAddress(db: Database, address: string): DirectoryEntry | null {
  return findWalletByAddress(db, address) ?? findMerchantByPayoutAddress(db, address);
}
