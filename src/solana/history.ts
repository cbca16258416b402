/** Paging through an account's transaction history, which the RPC serves newest first in pages. */
import type { Address } from '@solana/kit';
import { ChainUnavailableError } from './errors.ts';
import type { AddressSignature, ChainPort } from './port.ts';

const PAGE = 100;

/**
 * Every signature of `account` newer than `until` (all of them without it), newest first. The
 * whole backlog: a caller handles it oldest first and moves its cursor only past what it handled,
 * so a page limit here would let the cursor jump past everything older than the pages read. With
 * `notBefore` (unix seconds), paging stops at the first page reaching back before it; with
 * `minContextSlot`, only a view at or past that slot answers. A node whose pages do not move on
 * (it ignores `before`) fails the listing: with no page limit it would otherwise be read forever.
 */
export async function signaturesSince(chain: ChainPort, account: Address, until: string | undefined, opts: { minContextSlot?: bigint; notBefore?: number } = {}): Promise<AddressSignature[]> {
  const all: AddressSignature[] = [];
  let before: string | undefined;
  const pageEnds = new Set<string>();
  for (;;) {
    const sigs = await chain.getSignaturesForAddress(account, { until, before, limit: PAGE, ...(opts.minContextSlot !== undefined && { minContextSlot: opts.minContextSlot }) });
    all.push(...sigs);
    const last = sigs[sigs.length - 1];
    if (sigs.length < PAGE || last === undefined) break;
    if (opts.notBefore !== undefined && last.blockTime !== null && Number(last.blockTime) < opts.notBefore) break;
    if (pageEnds.has(last.signature)) throw new ChainUnavailableError(`the RPC served the history of ${account} before ${last.signature} again: it does not page`);
    pageEnds.add(last.signature);
    before = last.signature;
  }
  return all;
}
