/** Service-level actions. */
import { SYSTEM } from '../contract/system.ts';
import { implement } from './registry.ts';

export const systemActions = implement(SYSTEM, {
  ping: ({ services }) => ({
    status: 'ok',
    version: services.version,
    network: services.config.solana.network,
    usdc_mint: services.config.usdcMint,
    ...(services.simnetRpcUrl ? { rpc_url: services.simnetRpcUrl } : {}),
  }),
});
