/** Service-level actions. */
import { SYSTEM } from '../contract/system.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { treasuryOf } from '../payments/message.ts';
import type { Services } from '../services.ts';
import { implement } from './registry.ts';

/**
 * The fee schedule the daemon charges by (src/payments/intent.ts): the client pins it at
 * registration and refuses a fee above what it gives, so it is published as configured.
 */
export function feeSchedule(services: Services) {
  const { money, fees } = services.config;
  return {
    payment_bps: fees.payment_bps,
    payment_min: toUsdcNumber(money.paymentMin),
    account_setup_fee: toUsdcNumber(money.accountSetupFee),
    withdrawal_fee: toUsdcNumber(money.withdrawalFee),
  };
}

export const systemActions = implement(SYSTEM, {
  ping: ({ services }) => ({
    status: 'ok',
    version: services.version,
    network: services.config.solana.network,
    usdc_mint: services.config.usdcMint,
    // The accounts every payment message names besides the payer's: the client pins them at registration.
    treasury: treasuryOf(services),
    fee_payer: services.feePayer.address,
    fees: feeSchedule(services),
    ...(services.simnetRpcUrl ? { rpc_url: services.simnetRpcUrl } : {}),
  }),
});
