/** Lookups of API-key holders by the SHA-256 of their key. */
import type { Store } from './store.ts';

export interface KeyHolder {
  id: string;
  keyHash: Uint8Array;
  claimed: boolean;
  /** Owner tokens: the token's own id, so it can be listed and revoked. */
  tokenId?: string;
}

export async function findWalletByKeyHash(db: Store, hash: Uint8Array): Promise<KeyHolder | null> {
  const row = await db
    .get<{ wallet_id: string; api_key_hash: Uint8Array; status: string }>('SELECT wallet_id, api_key_hash, status FROM wallets WHERE api_key_hash = ?', hash);
  return row ? { id: row.wallet_id, keyHash: row.api_key_hash, claimed: row.status === 'claimed' } : null;
}

export async function findMerchantByKeyHash(db: Store, hash: Uint8Array): Promise<KeyHolder | null> {
  const row = await db
    .get<{ merchant_id: string; api_key_hash: Uint8Array }>('SELECT merchant_id, api_key_hash FROM merchants WHERE api_key_hash = ?', hash);
  return row ? { id: row.merchant_id, keyHash: row.api_key_hash, claimed: true } : null;
}

/** Replaces a wallet's bot API key hash: the old key stops authenticating at once. */
export async function setWalletKeyHash(db: Store, walletId: string, hash: Uint8Array): Promise<boolean> {
  return (await db.run('UPDATE wallets SET api_key_hash = ? WHERE wallet_id = ?', hash, walletId)).changes === 1;
}
