/** Wallet rows and the shared username namespace. */
import type { Store } from './store.ts';

export interface WalletRow {
  wallet_id: string;
  username: string;
  name: string;
  address: string;
  status: 'unclaimed' | 'claimed';
  owner_email: string | null;
  agent_model: string | null;
  description: string | null;
  metadata: string | null;
  claim_code_hash: Uint8Array;
  claim_code_sealed: Uint8Array;
  owner_id: string | null;
  server_key: Uint8Array;
  public_package: string;
  created_at: bigint;
  claimed_at: bigint | null;
}

export interface NewWallet extends Record<string, string | number | null | Uint8Array> {
  wallet_id: string;
  username: string;
  name: string;
  address: string;
  api_key_hash: Uint8Array;
  owner_email: string | null;
  agent_model: string | null;
  description: string | null;
  metadata: string | null;
  claim_code_hash: Uint8Array;
  claim_code_sealed: Uint8Array;
  server_key: Uint8Array;
  public_package: string;
  created_at: number;
}

/** True when `username` is taken by a wallet or a merchant. */
export async function usernameTaken(db: Store, username: string): Promise<boolean> {
  return (await db.get('SELECT 1 FROM usernames WHERE username = ?', username)) !== null;
}

/** Inserts a wallet and claims its username; call inside a write transaction. */
export async function insertWallet(db: Store, w: NewWallet): Promise<void> {
  await db.run("INSERT INTO usernames (username, kind, ref_id) VALUES (?, 'wallet', ?)", w.username, w.wallet_id);
  await db.run(`INSERT INTO wallets (wallet_id, username, name, address, api_key_hash, status, owner_email, agent_model, description, metadata,
       claim_code_hash, claim_code_sealed, server_key, public_package, created_at)
     VALUES ($wallet_id, $username, $name, $address, $api_key_hash, 'unclaimed', $owner_email, $agent_model, $description, $metadata,
       $claim_code_hash, $claim_code_sealed, $server_key, $public_package, $created_at)`, { ...w });
  // A fresh group key has no token account and no history: the deposit watch starts from "absent"
  // instead of looking up the new address's signatures.
  await db.run('INSERT INTO token_watch (owner, amount, checked_at, last_signature, updated_at) VALUES (?, NULL, ?, NULL, ?)', w.address, w.created_at, w.created_at);
}

export async function getWallet(db: Store, walletId: string): Promise<WalletRow | null> {
  return await db.get<WalletRow>('SELECT * FROM wallets WHERE wallet_id = ?', walletId);
}

export async function getWalletByUsername(db: Store, username: string): Promise<WalletRow | null> {
  return await db.get<WalletRow>('SELECT * FROM wallets WHERE username = ?', username);
}

export async function getWalletByAddress(db: Store, address: string): Promise<WalletRow | null> {
  return await db.get<WalletRow>('SELECT * FROM wallets WHERE address = ?', address);
}

export async function setWalletName(db: Store, walletId: string, name: string): Promise<void> {
  await db.run('UPDATE wallets SET name = ? WHERE wallet_id = ?', name, walletId);
}

/** Sets the pledged owner e-mail; only while unclaimed. Returns false when the wallet is claimed. */
export async function setPledgedOwner(db: Store, walletId: string, email: string): Promise<boolean> {
  return (await db.run("UPDATE wallets SET owner_email = ? WHERE wallet_id = ? AND status = 'unclaimed'", email, walletId)).changes === 1;
}

/** Marks an unclaimed wallet claimed by `ownerId`. False when it was already claimed. */
export async function markClaimed(db: Store, walletId: string, ownerId: string, now: number): Promise<boolean> {
  return (await db.run("UPDATE wallets SET status = 'claimed', owner_id = ?, claimed_at = ? WHERE wallet_id = ? AND status = 'unclaimed'", ownerId, now, walletId)).changes === 1;
}

export async function allWalletAddresses(db: Store): Promise<{ wallet_id: string; address: string }[]> {
  return await db.all<{ wallet_id: string; address: string }>('SELECT wallet_id, address FROM wallets ORDER BY created_at');
}
