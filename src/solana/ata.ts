/**
 * Associated token account derivation for the classic SPL Token program (USDC on Solana lives
 * there, not in Token-2022). Derivation hashes with WebCrypto, so it is async; results are
 * memoized because the same few (wallet, mint) pairs are derived on every payment and check.
 */
import type { Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS, findAssociatedTokenPda } from '@solana-program/token';

const MAX_ENTRIES = 10_000;
const cache = new Map<string, Promise<readonly [Address, number]>>();

function derive(owner: Address, mint: Address): Promise<readonly [Address, number]> {
  const key = `${owner}:${mint}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const derived = findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  if (cache.size >= MAX_ENTRIES) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(key, derived);
  derived.catch(() => cache.delete(key));
  return derived;
}

/** The associated token account of `owner` for `mint` under the classic Token program. */
export async function usdcAta(owner: Address, mint: Address): Promise<Address> {
  return (await derive(owner, mint))[0];
}

/**
 * The bump seed of that account (255 down to 0): the Associated Token program finds it again on
 * chain when it creates the account, paying for every candidate above it (instructions.ts createAtaUnits).
 */
export async function usdcAtaBump(owner: Address, mint: Address): Promise<number> {
  return (await derive(owner, mint))[1];
}
