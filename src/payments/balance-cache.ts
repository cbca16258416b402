/**
 * The payer's on-chain USDC balance, remembered briefly so that neither a burst of intents nor a
 * wallet paying in a loop reads the chain for each payment. Sound because of custody: a wallet's
 * USDC can only leave through a transaction the server co-signed, and each is counted as
 * outstanding (its amount and fees) until its completion is recorded, which takes that same
 * reservation off the cached balance (at least what the chain debited; more if the cache was read
 * after the transfer landed). So `cached − outstanding` never overstates what the wallet can
 * spend. Money coming in only makes the cache too low, and a cached value that looks too small is
 * re-read before anything is refused.
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
    const wallet = await getWalletByAddress(services.db, payer);
    if (wallet && hit.balance - (await outstandingOut(services.db, wallet.wallet_id)) >= need) return hit.balance;
  }
  const balance = await services.chain.getTokenBalance(payer, mint);
  if (cache.size > 100_000) cache.clear();
  cache.set(key, { balance, at: Date.now() });
  return balance;
}

/**
 * A completed outgoing transfer: takes what it had reserved (amount and fees) off the payer's
 * cached balance, in the transaction that moves the reservation out of outstanding.
 */
export function debitBalance(payer: string, mint: string, reserved: bigint): void {
  const hit = cache.get(`${mint}:${payer}`);
  if (hit) hit.balance -= reserved;
}

/** Forgets a wallet's cached balance: call when money whose amount is not known here moves. */
export function forgetBalance(address: string | null | undefined): void {
  if (!address) return;
  for (const key of cache.keys()) if (key.endsWith(`:${address}`)) cache.delete(key);
}
