/** Wallet rows and the shared username namespace. */
import type { Database } from 'bun:sqlite';

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
export function usernameTaken(db: Database, username: string): boolean {
  return db.query('SELECT 1 FROM usernames WHERE username = ?').get(username) !== null;
}

/** Inserts a wallet and claims its username; call inside a write transaction. */
export function insertWallet(db: Database, w: NewWallet): void {
  db.query("INSERT INTO usernames (username, kind, ref_id) VALUES (?, 'wallet', ?)").run(w.username, w.wallet_id);
  db.query(
    `INSERT INTO wallets (wallet_id, username, name, address, api_key_hash, status, owner_email, agent_model, description, metadata,
       claim_code_hash, claim_code_sealed, server_key, public_package, created_at)
     VALUES ($wallet_id, $username, $name, $address, $api_key_hash, 'unclaimed', $owner_email, $agent_model, $description, $metadata,
       $claim_code_hash, $claim_code_sealed, $server_key, $public_package, $created_at)`,
  ).run({ ...w });
  // A fresh group key has no token account and no history: the deposit watch starts from "absent"
  // instead of looking up the new address's signatures.
  db.query('INSERT INTO token_watch (owner, amount, checked_at, last_signature, updated_at) VALUES (?, NULL, ?, NULL, ?)').run(w.address, w.created_at, w.created_at);
}

export function getWallet(db: Database, walletId: string): WalletRow | null {
  return db.query<WalletRow, [string]>('SELECT * FROM wallets WHERE wallet_id = ?').get(walletId);
}

export function getWalletByUsername(db: Database, username: string): WalletRow | null {
  return db.query<WalletRow, [string]>('SELECT * FROM wallets WHERE username = ?').get(username);
}

export function getWalletByAddress(db: Database, address: string): WalletRow | null {
  return db.query<WalletRow, [string]>('SELECT * FROM wallets WHERE address = ?').get(address);
}

export function setWalletName(db: Database, walletId: string, name: string): void {
  db.query('UPDATE wallets SET name = ? WHERE wallet_id = ?').run(name, walletId);
}

/** Sets the pledged owner e-mail; only while unclaimed. Returns false when the wallet is claimed. */
export function setPledgedOwner(db: Database, walletId: string, email: string): boolean {
  return db.query("UPDATE wallets SET owner_email = ? WHERE wallet_id = ? AND status = 'unclaimed'").run(email, walletId).changes === 1;
}

/** Marks an unclaimed wallet claimed by `ownerId`. False when it was already claimed. */
export function markClaimed(db: Database, walletId: string, ownerId: string, now: number): boolean {
  return db.query("UPDATE wallets SET status = 'claimed', owner_id = ?, claimed_at = ? WHERE wallet_id = ? AND status = 'unclaimed'").run(ownerId, now, walletId).changes === 1;
}

export function allWalletAddresses(db: Database): { wallet_id: string; address: string }[] {
  return db.query<{ wallet_id: string; address: string }, []>('SELECT wallet_id, address FROM wallets ORDER BY created_at').all();
}
