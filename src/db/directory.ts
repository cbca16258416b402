/** The username directory shared by wallets and merchants. */
import type { Store } from './store.ts';

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
export async function findByUsername(db: Store, username: string): Promise<DirectoryEntry | null> {
  const entry = await db.get<{ kind: 'wallet' | 'merchant'; ref_id: string }>('SELECT kind, ref_id FROM usernames WHERE username = ?', username);
  if (!entry) return null;
  const row =
    entry.kind === 'wallet'
      ? await db.get<{ name: string; address: string }>('SELECT name, address FROM wallets WHERE wallet_id = ?', entry.ref_id)
      : await db.get<{ name: string; address: string }>('SELECT name, payout_address AS address FROM merchants WHERE merchant_id = ?', entry.ref_id);
  return row ? { kind: entry.kind, id: entry.ref_id, username, name: row.name, address: row.address } : null;
}

/** The merchant whose payout address is `address` (the oldest, if several share it). */
export async function findMerchantByPayoutAddress(db: Store, address: string): Promise<DirectoryEntry | null> {
  return await db
    .get<DirectoryEntry>("SELECT 'merchant' AS kind, merchant_id AS id, username, name, payout_address AS address FROM merchants WHERE payout_address = ? ORDER BY created_at LIMIT 1", address);
}

/** The wallet whose address is `address`, if it is one of ours. */
export async function findWalletByAddress(db: Store, address: string): Promise<DirectoryEntry | null> {
  return await db
    .get<DirectoryEntry>("SELECT 'wallet' AS kind, wallet_id AS id, username, name, address FROM wallets WHERE address = ?", address);
}

/** The wallet or merchant payout registered here at `address` (a wallet first), if any. */
export async function findPayeeByAddress(db: Store, address: string): Promise<DirectoryEntry | null> {
  return (await findWalletByAddress(db, address)) ?? (await findMerchantByPayoutAddress(db, address));
}
