/**
 * Where a person looks a transaction up: the public explorer of the cluster, or nowhere (simnet
 * and a custom cluster have no public explorer, and a link to mainnet's would show "not found").
 */
export function explorerTxUrl(network: string, signature: string): string | null {
  if (network === 'mainnet') return `https://explorer.solana.com/tx/${signature}`;
  if (network === 'devnet') return `https://explorer.solana.com/tx/${signature}?cluster=devnet`;
  return null;
}
