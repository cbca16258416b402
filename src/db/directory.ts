/** The username directory shared by wallets and merchants. */
import type { Database } from 'bun:sqlite';

export interface DirectoryEntry {
  kind: 'wallet' | 'merchant';
  id: string;
  username: string;
  name: string;
  address: string;
}

/** Finds a wallet or merchant by username. */
export function findByUsername(db: Database, username: string): DirectoryEntry | null {
  return db
    .query<DirectoryEntry, [string]>(
      `SELECT u.kind AS kind, u.ref_id AS id, u.username AS username,
              coalesce(w.name, m.name) AS name, coalesce(w.address, m.payout_address) AS address
       FROM usernames u LEFT JOIN wallets w ON u.kind = 'wallet' AND w.wallet_id = u.ref_id
                        LEFT JOIN merchants m ON u.kind = 'merchant' AND m.merchant_id = u.ref_id
       WHERE u.username = ?`,
    )
    .get(username);
}

/** The wallet whose address is `address`, if it is one of ours. */
export function findWalletByAddress(db: Database, address: string): DirectoryEntry | null {
  return db
    .query<DirectoryEntry, [string]>("SELECT 'wallet' AS kind, wallet_id AS id, username, name, address FROM wallets WHERE address = ?")
    .get(address);
}
