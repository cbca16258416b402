/**
 * Wallets written straight into a ledger, for measuring what watching many of them costs without
 * running a DKG for each: a random address each, no usable key share (they can never sign).
 */
import type { Database } from 'bun:sqlite';
import { generateKeyPairSigner } from '@solana/kit';
import { insertWallet } from '../../src/db/wallets.ts';
import { newId } from '../../src/contract/ids.ts';

export async function insertBulkWallets(db: Database, count: number, now = Date.now()): Promise<string[]> {
  const addresses = await Promise.all(Array.from({ length: count }, async () => (await generateKeyPairSigner()).address as string));
  db.transaction(() => {
    for (const [i, address] of addresses.entries()) {
      const id = newId('wallet');
      insertWallet(db, {
        wallet_id: id,
        username: `bulk-${i}-${id.slice(-6).toLowerCase()}`,
        name: `Bulk ${i}`,
        address,
        api_key_hash: crypto.getRandomValues(new Uint8Array(32)),
        owner_email: null,
        agent_model: null,
        description: null,
        metadata: null,
        claim_code_hash: crypto.getRandomValues(new Uint8Array(32)),
        claim_code_sealed: new Uint8Array(1),
        server_key: new Uint8Array(1),
        public_package: '{}',
        created_at: now,
      });
    }
  }).immediate();
  return addresses;
}
