/** Paging through an account's transaction history, which the RPC serves newest first in pages. */
import type { Address } from '@solana/kit';
import type { AddressSignature, ChainPort } from './port.ts';

const PAGE = 100;

/**
 * Every signature of `account` newer than `until` (all of them without it), newest first, up to
 * `maxPages` pages; with `minContextSlot`, from a view at or past that slot only.
 */
export async function signaturesSince(chain: ChainPort, account: Address, until: string | undefined, maxPages = 20, minContextSlot?: bigint): Promise<AddressSignature[]> {
  const all: AddressSignature[] = [];
  let before: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const sigs = await chain.getSignaturesForAddress(account, { until, before, limit: PAGE, ...(minContextSlot !== undefined && { minContextSlot }) });
    all.push(...sigs);
    if (sigs.length < PAGE) break;
    before = sigs[sigs.length - 1]!.signature;
  }
  return all;
}
