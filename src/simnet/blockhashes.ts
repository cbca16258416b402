/**
 * The window of recent blockhashes a transaction may reference. A real cluster accepts a
 * blockhash for 150 blocks after the one that produced it (`lastValidBlockHeight = height +
 * 150`); LiteSVM alone accepts only its latest one, which would break any transaction signed
 * across a tick (a FROST round, an x402 challenge, an owner approval).
 */

/** How many blocks a blockhash stays valid after the block that produced it. */
export const BLOCKHASH_VALIDITY = 150n;

/** Recent blockhashes with the block height each was produced at. */
export class BlockhashWindow {
  private readonly heights = new Map<string, bigint>();

  /** Restores a window from `entries()` output. */
  constructor(entries: Iterable<readonly [string, bigint]> = []) {
    for (const [hash, height] of entries) this.heights.set(hash, height);
  }

  /** Records `hash` as produced at `height` and forgets hashes that expired before `height`. */
  record(hash: string, height: bigint): void {
    this.heights.set(hash, height);
    for (const [h, at] of this.heights) {
      if (at + BLOCKHASH_VALIDITY < height) this.heights.delete(h);
    }
  }

  /** The last block height at which `hash` is still accepted, or null for an unknown hash. */
  lastValidBlockHeight(hash: string): bigint | null {
    const at = this.heights.get(hash);
    return at === undefined ? null : at + BLOCKHASH_VALIDITY;
  }

  /** True while `hash` is accepted at `currentHeight` (inclusive of its last valid height). */
  isValid(hash: string, currentHeight: bigint): boolean {
    const last = this.lastValidBlockHeight(hash);
    return last !== null && currentHeight <= last;
  }

  /** Snapshot for persistence, oldest first. */
  entries(): [string, bigint][] {
    return [...this.heights];
  }
}
