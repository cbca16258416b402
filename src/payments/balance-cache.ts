/**
 * The payer's on-chain USDC balance, remembered briefly so that neither a burst of intents nor a
 * wallet paying in a loop reads the chain for each payment. Sound because of custody: a wallet's
 * USDC can only leave through a transaction the server co-signed, and each is counted as
 * outstanding (its amount and fees) until its completion is recorded, which adds the same amount
 * to the wallet's settled_out total in the same commit (schema 19, kept by triggers). A read
 * notes the total it was made at; later, the read less what is outstanding less what settled
 * since never overstates what the wallet can spend — whichever node recorded the completion, and
 * even for a read that raced with it (the total is noted before the chain is asked). Money coming
 * in only makes the cache too low, and a cached value that looks too small is re-read before
 * anything is refused.
 */
import type { Address } from '@solana/kit';
import { walletOutflow } from '../db/transactions.ts';
import { getWalletByAddress } from '../db/wallets.ts';
import type { Services } from '../services.ts';

const TTL_MS = 10_000;
const cache = new Map<string, { balance: bigint; settledOut: bigint; at: number }>();

/** A balance and the wallet's settled_out total it is valid at (see walletOutflow). */
export interface BalanceRead {
  balance: bigint;
  settledOut: bigint;
}

/**
 * The payer's balance as of its wallet's current settled_out: from the cache when it is fresh and
 * leaves `need` spendable, else read from the chain.
 */
export async function payerBalance(services: Services, payer: Address, mint: Address, need: bigint): Promise<BalanceRead> {
  const key = `${mint}:${payer}`;
  const wallet = await getWalletByAddress(services.db, payer);
  const flow = wallet ? await walletOutflow(services.db, wallet.wallet_id) : { outstanding: 0n, settledOut: 0n };
  const hit = cache.get(key);
  if (wallet && hit && Date.now() - hit.at < TTL_MS) {
    const balance = hit.balance - (flow.settledOut - hit.settledOut);
    if (balance - flow.outstanding >= need) return { balance, settledOut: flow.settledOut };
  }
  // Noted before the chain is asked: a completion recorded meanwhile counts against this read.
  const balance = await services.chain.getTokenBalance(payer, mint);
  if (wallet) {
    if (cache.size > 100_000) cache.clear();
    cache.set(key, { balance, settledOut: flow.settledOut, at: Date.now() });
  }
  return { balance, settledOut: flow.settledOut };
}

/** Forgets a wallet's cached balance: call when money whose amount is not known here moves. */
export function forgetBalance(address: string | null | undefined): void {
  if (!address) return;
  for (const key of cache.keys()) if (key.endsWith(`:${address}`)) cache.delete(key);
}
