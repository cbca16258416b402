/** Lookups of API-key holders by the SHA-256 of their key. */
import type { Database } from 'bun:sqlite';

export interface KeyHolder {
  id: string;
  keyHash: Uint8Array;
  claimed: boolean;
  /** Owner tokens: the token's own id, so it can be listed and revoked. */
  tokenId?: string;
}

export function findWalletByKeyHash(db: Database, hash: Uint8Array): KeyHolder | null {
  const row = db
    .query<{ wallet_id: string; api_key_hash: Uint8Array; status: string }, [Uint8Array]>(
      'SELECT wallet_id, api_key_hash, status FROM wallets WHERE api_key_hash = ?',
    )
    .get(hash);
  return row ? { id: row.wallet_id, keyHash: row.api_key_hash, claimed: row.status === 'claimed' } : null;
}

export function findMerchantByKeyHash(db: Database, hash: Uint8Array): KeyHolder | null {
  const row = db
    .query<{ merchant_id: string; api_key_hash: Uint8Array }, [Uint8Array]>('SELECT merchant_id, api_key_hash FROM merchants WHERE api_key_hash = ?')
    .get(hash);
  return row ? { id: row.merchant_id, keyHash: row.api_key_hash, claimed: true } : null;
}

/** Replaces a wallet's bot API key hash: the old key stops authenticating at once. */
export function setWalletKeyHash(db: Database, walletId: string, hash: Uint8Array): boolean {
  return db.query('UPDATE wallets SET api_key_hash = ? WHERE wallet_id = ?').run(hash, walletId).changes === 1;
}
