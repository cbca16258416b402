/**
 * Wallets written straight into a ledger, without running a DKG for each: a chosen or random
 * address each, no usable key share (they can never sign, only be paid). For measuring what
 * watching many of them costs, and for a payee at an address a test needs.
 */
import type { Database } from 'bun:sqlite';
import { sha256 } from '@noble/hashes/sha2.js';
import { generateKeyPairSigner } from '@solana/kit';
import { insertWallet } from '../../src/db/wallets.ts';
import { newId } from '../../src/contract/ids.ts';
import { normalizeClaimCode } from '../../src/domain/identity.ts';

function insertAt(db: Database, p: { walletId: string; address: string; username: string; name: string; claimCodeHash: Uint8Array; now: number }): void {
  insertWallet(db, {
    wallet_id: p.walletId,
    username: p.username,
    name: p.name,
    address: p.address,
    api_key_hash: crypto.getRandomValues(new Uint8Array(32)),
    owner_email: null,
    agent_model: null,
    description: null,
    metadata: null,
    claim_code_hash: p.claimCodeHash,
    claim_code_sealed: new Uint8Array(1),
    server_key: new Uint8Array(1),
    public_package: '{}',
    created_at: p.now,
  });
}

export async function insertBulkWallets(db: Database, count: number, now = Date.now()): Promise<string[]> {
  const addresses = await Promise.all(Array.from({ length: count }, async () => (await generateKeyPairSigner()).address as string));
  db.transaction(() => {
    for (const [i, address] of addresses.entries()) {
      const walletId = newId('wallet');
      insertAt(db, { walletId, address, username: `bulk-${i}-${walletId.slice(-6).toLowerCase()}`, name: `Bulk ${i}`, claimCodeHash: crypto.getRandomValues(new Uint8Array(32)), now });
    }
  }).immediate();
  return addresses;
}

/** One unclaimed wallet at `address` that its owner claims with `claimCode`, as a registered one is. */
export function insertPayeeWallet(db: Database, address: string, claimCode: string, now = Date.now()): { walletId: string; username: string } {
  const walletId = newId('wallet');
  const username = `payee-${walletId.slice(-6).toLowerCase()}`;
  const claimCodeHash = sha256(new TextEncoder().encode(normalizeClaimCode(claimCode)));
  db.transaction(() => insertAt(db, { walletId, address, username, name: 'Payee', claimCodeHash, now })).immediate();
  return { walletId, username };
}
