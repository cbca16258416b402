/** Signed receipts (DESIGN §9.1): a completed transaction as a JWS any JOSE library verifies. */
import { Type as T } from '@sinclair/typebox';
import { Id, Params } from './common.ts';
import { action } from './action.ts';

const SUMMARY =
  'A signed receipt of a completed transaction: a compact JWS (EdDSA, typ agent-wallet-receipt+jwt) over its amounts, parties, signature and slot, verifiable with any JOSE library against the JWKS at /.well-known/agent-wallet/log-key; also the decoded claims.';

export const BOT_RECEIPTS = {
  get_receipt: action({ endpoint: 'bot', auth: 'bot', readOnly: true, params: Params({ transaction_id: Id('transaction', 'a completed transaction of this wallet') }), summary: SUMMARY }),
};

export const MERCHANT_RECEIPTS = {
  get_receipt: action({
    endpoint: 'merchant',
    auth: 'merchant',
    readOnly: true,
    params: Params({ transaction_id: T.String({ minLength: 1, maxLength: 100, description: "an x402 sale (sale_…) or a paid paylink (req_…) from history" }) }),
    summary: SUMMARY,
  }),
};
