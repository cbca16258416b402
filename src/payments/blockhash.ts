/**
 * One recent blockhash shared by the messages the daemon builds at about the same time, so
 * concurrent payments cost one getLatestBlockhash between them. A blockhash stays valid for 150
 * blocks (about a minute on a cluster); reusing it for BLOCKHASH_TTL_MS, one slot, costs a message
 * at most one block of its life. Messages stay distinct: each carries its transaction id in the memo.
 */
import type { ChainPort } from '../solana/port.ts';
import type { RecentBlockhash } from '../solana/transfer.ts';

export const BLOCKHASH_TTL_MS = 400;

const shared = new WeakMap<ChainPort, { last: { value: RecentBlockhash; at: number } | null; inFlight: Promise<RecentBlockhash> | null }>();

/** A blockhash at most BLOCKHASH_TTL_MS old, fetched once for all concurrent callers. */
export function recentBlockhash(chain: ChainPort): Promise<RecentBlockhash> {
  let state = shared.get(chain);
  if (!state) {
    state = { last: null, inFlight: null };
    shared.set(chain, state);
  }
  if (state.last && Date.now() - state.last.at < BLOCKHASH_TTL_MS) return Promise.resolve(state.last.value);
  if (state.inFlight) return state.inFlight;
  const entry = state;
  entry.inFlight = chain
    .getLatestBlockhash()
    .then((value) => {
      entry.last = { value, at: Date.now() };
      return value;
    })
    .finally(() => {
      entry.inFlight = null;
    });
  return entry.inFlight;
}
