/**
 * Owners whose USDC token account has a low bump seed: creating it makes the Associated Token
 * program try every candidate from 255 down on chain, 1,500 CU each (19 and 18 more than at bump
 * 255 here). On-curve keys, like a FROST group key; found by drawing random keys, about one in
 * 2^19 each. Tests check the bump before relying on it.
 */
import type { Address } from '@solana/kit';

export const DEEP_BUMP_OWNERS = [
  { owner: 'oMT8CUErmqfmTh9Na78JLfUDPwVzLaWyAccmaSjBf7d' as Address, bump: 236 },
  { owner: '2CuoSRTVFgrZXVMTbUj5zRkH1CQT8U3AJzgHSzUmJmpB' as Address, bump: 237 },
] as const;
