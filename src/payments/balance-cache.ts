/**
 * The payer's on-chain USDC balance, remembered briefly so a burst of intents does not read the
 * chain for each one. Sound because of custody: a wallet's USDC can only leave through a
 * transaction the server co-signed, and those are counted as outstanding until their completion
 * is recorded — which forgets the cached balance. So `cached − outstanding` never overstates what
 * the wallet can spend. Deposits only make the cache too low; recording one forgets it too, and
 * a cached value that looks too small is re-read before anything is refused.
 */
import type { Address } from '@solana/kit';
import { outstandingOut } from '../db/transactions.ts';
import { getWalletByAddress } from '../db/wallets.ts';
import type { Services } from '../services.ts';

const TTL_MS = 10_000;
const cache = new Map<string, { balance: bigint; at: number }>();

/** The payer's balance: cached when it is fresh and leaves `need` spendable, else read from the chain. */
export async function payerBalance(services: Services, payer: Address, mint: Address, need: bigint): Promise<bigint> {
  const key = `${mint}:${payer}`;
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < TTL_MS) {
    const wallet = getWalletByAddress(services.db, payer);
    if (wallet && hit.balance - outstandingOut(services.db, wallet.wallet_id) >= need) return hit.balance;
  }
  const balance = await services.chain.getTokenBalance(payer, mint);
  if (cache.size > 100_000) cache.clear();
  cache.set(key, { balance, at: Date.now() });
  return balance;
}

/** Forgets a wallet's cached balance: call when money into or out of it is recorded. */
export function forgetBalance(address: string | null | undefined): void {
  if (!address) return;
  for (const key of cache.keys()) if (key.endsWith(`:${address}`)) cache.delete(key);
}
