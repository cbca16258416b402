/** Contract of the service-level actions. */
import { NoParams } from './common.ts';
import { action } from './action.ts';

export const SYSTEM = {
  ping: action({ endpoint: 'bot', auth: 'none', params: NoParams, readOnly: true, summary: 'API status, version, network, USDC mint, treasury, fee payer and fee schedule (payment_bps, payment_min, account_setup_fee, withdrawal_fee).' }),
};
