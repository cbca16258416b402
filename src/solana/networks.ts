/**
 * The Solana networks the daemon can run on. Simnet presents itself as devnet (same genesis
 * hash, same USDC mint address, same CAIP-2 id) because the official x402 packages accept only
 * mainnet/devnet/testnet ids.
 */
import type { Address } from '@solana/kit';

export type NetworkName = 'simnet' | 'devnet' | 'mainnet' | 'custom';

export interface NetworkInfo {
  /** RPC URL used when the config gives none; null where the operator must choose. */
  defaultRpcUrl: string | null;
  /** USDC mint used when the config gives none. */
  defaultUsdcMint: Address | null;
  /** CAIP-2 chain id (x402 v2). */
  caip2: string | null;
  /** x402 v1 network name. */
  x402V1: string | null;
  /** solana.rpc_max_rps when the config leaves it at -1; 0 = unlimited. */
  defaultRpcMaxRps: number;
}

export const MAINNET_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' as Address;
export const DEVNET_USDC = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' as Address;
export const DEVNET_GENESIS_HASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
export const USDC_DECIMALS = 6;

export const NETWORKS: Record<NetworkName, NetworkInfo> = {
  simnet: { defaultRpcUrl: null, defaultUsdcMint: DEVNET_USDC, caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', x402V1: 'solana-devnet', defaultRpcMaxRps: 0 },
  devnet: { defaultRpcUrl: 'https://api.devnet.solana.com', defaultUsdcMint: DEVNET_USDC, caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', x402V1: 'solana-devnet', defaultRpcMaxRps: 8 },
  mainnet: { defaultRpcUrl: 'https://api.mainnet-beta.solana.com', defaultUsdcMint: MAINNET_USDC, caip2: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', x402V1: 'solana', defaultRpcMaxRps: 8 },
  custom: { defaultRpcUrl: null, defaultUsdcMint: null, caip2: null, x402V1: null, defaultRpcMaxRps: 10 },
};
