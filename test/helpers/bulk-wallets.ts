/**
 * Wallets written straight into a ledger, without running a DKG for each: a chosen or random
 * address each, no usable key share (they can never sign, only be paid). For measuring what
 * watching many of them costs, and for a payee at an address a test needs.
 */
import type { Store } from '../../src/db/store.ts';
import { sha256 } from '@noble/hashes/sha2.js';
import { generateKeyPairSigner } from '@solana/kit';
import { insertWallet } from '../../src/db/wallets.ts';
import { newId } from '../../src/contract/ids.ts';
import { normalizeClaimCode } from '../../src/domain/identity.ts';

async function insertAt(db: Store, p: { walletId: string; address: string; username: string; name: string; claimCodeHash: Uint8Array; now: number }): Promise<void> {
  await insertWallet(db, {
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

export async function insertBulkWallets(db: Store, count: number, now = Date.now()): Promise<string[]> {
  const addresses = await Promise.all(Array.from({ length: count }, async () => (await generateKeyPairSigner()).address as string));
  await db.transaction(async () => {
    for (const [i, address] of addresses.entries()) {
      const walletId = newId('wallet');
      await insertAt(db, { walletId, address, username: `bulk-${i}-${walletId.slice(-6).toLowerCase()}`, name: `Bulk ${i}`, claimCodeHash: crypto.getRandomValues(new Uint8Array(32)), now });
    }
  });
  return addresses;
}

/** One unclaimed wallet at `address` that its owner claims with `claimCode`, as a registered one is. */
export async function insertPayeeWallet(db: Store, address: string, claimCode: string, now = Date.now()): Promise<{ walletId: string; username: string }> {
  const walletId = newId('wallet');
  const username = `payee-${walletId.slice(-6).toLowerCase()}`;
  const claimCodeHash = sha256(new TextEncoder().encode(normalizeClaimCode(claimCode)));
  await db.transaction(async () => await insertAt(db, { walletId, address, username, name: 'Payee', claimCodeHash, now }));
  return { walletId, username };
}
