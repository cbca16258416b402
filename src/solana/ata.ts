/**
 * Associated token account derivation for the classic SPL Token program (USDC on Solana lives
 * there, not in Token-2022). Derivation hashes with WebCrypto, so it is async; results are
 * memoized because the same few (wallet, mint) pairs are derived on every payment and check.
 */
import type { Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS, findAssociatedTokenPda } from '@solana-program/token';

const MAX_ENTRIES = 10_000;
const cache = new Map<string, Promise<Address>>();

/** The associated token account of `owner` for `mint` under the classic Token program. */
export function usdcAta(owner: Address, mint: Address): Promise<Address> {
  const key = `${owner}:${mint}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const derived = findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }).then(([ata]) => ata);
  if (cache.size >= MAX_ENTRIES) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(key, derived);
  derived.catch(() => cache.delete(key));
  return derived;
}
