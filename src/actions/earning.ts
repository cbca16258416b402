/**
 * Earning and funding actions (SPEC "Bot actions, earning", request_funds / list_fund_requests,
 * public pay / pay_status; DESIGN §8). The logic lives in src/earning; these handlers check the
 * caller and the params and shape the answers.
 */
import { invalid } from '../errors.ts';
import { EARNING } from '../contract/earning.ts';
import { listFundRequests } from '../db/fund-requests.ts';
import { getPayeePaylink, getPaylinkByReference, getPaylinkByShortCode, listPaylinks, type PaylinkRow, type PaylinkStatus } from '../db/paylinks.ts';
import { fundRequestView, requestFunds } from '../earning/funding.ts';
import { cancelOwnPaylink, createPaylink, paylinkNotFound, paylinkView, payStatusView, publicPaylinkView, sendInvitation, type CreatePaylinkInput } from '../earning/paylinks.ts';
import { walletPayee, type Payee } from '../earning/payee.ts';
import { normalizeShortCode } from '../earning/rules.ts';
import { nudgeScan } from '../earning/scan.ts';
import { AppError } from '../errors.ts';
import type { Services } from '../services.ts';
import { implement } from './registry.ts';
import { callerWallet } from './wallet.ts';

/** The payee's paylink; another payee's id is NOT_FOUND. */
function ownPaylink(services: Services, payee: Payee, requestId: string): PaylinkRow {
  const row = getPayeePaylink(services.db, payee.key, requestId);
  if (!row) throw paylinkNotFound();
  return row;
}

/**
 * The paylink actions for whichever payee calls them: a wallet on /bot, a merchant on /merchant
 * (src/actions/merchant.ts), so both get the same checks and answers.
 */
export const paylinkActions = {
  create: async (services: Services, payee: Payee, p: CreatePaylinkInput, inTransaction?: (reference: string | null, amount: bigint | null) => void) =>
    paylinkView(services, await createPaylink(services, payee, p, inTransaction)),

  get: (services: Services, payee: Payee, p: { request_id?: string; reference?: string }) => {
    if ((p.request_id === undefined) === (p.reference === undefined)) {
      throw invalid('/request_id', 'send exactly one of request_id and reference', 'Send request_id (req_…) or the reference you gave at creation.');
    }
    const row = p.request_id !== undefined ? getPayeePaylink(services.db, payee.key, p.request_id) : getPaylinkByReference(services.db, payee.key, p.reference!);
    if (!row) throw paylinkNotFound();
    return paylinkView(services, row);
  },

  list: (services: Services, payee: Payee, p: { status?: PaylinkStatus; limit?: number; offset?: number }) => {
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const { items, total } = listPaylinks(services.db, payee.key, p.status, limit, offset);
    return { items: items.map((r) => paylinkView(services, r)), total, limit, offset };
  },

  cancel: (services: Services, payee: Payee, p: { request_id: string }) => paylinkView(services, cancelOwnPaylink(services, ownPaylink(services, payee, p.request_id))),

  invite: (services: Services, payee: Payee, p: { request_id: string; to_email?: string; to_wallet?: string; message?: string }) =>
    sendInvitation(services, payee, ownPaylink(services, payee, p.request_id), p),
};

/** A paylink by the short code of its checkout URL (forgiving case and look-alike characters). */
export function paylinkByShortCode(services: Services, raw: string): PaylinkRow | null {
  const code = normalizeShortCode(raw);
  return code === null ? null : getPaylinkByShortCode(services.db, code);
}

function publicPaylink(services: Services, raw: string): PaylinkRow {
  const row = paylinkByShortCode(services, raw);
  if (!row) throw new AppError('NOT_FOUND', 'No payment request has this short code.', { howToFix: 'Check the code at the end of the checkout URL (/pay/<short_code>).' });
  return row;
}

export const earningActions = implement(EARNING, {
  create_payment_request: (ctx, p) => paylinkActions.create(ctx.services, walletPayee(callerWallet(ctx)), p),
  get_payment_request: (ctx, p) => paylinkActions.get(ctx.services, walletPayee(callerWallet(ctx)), p),
  list_payment_requests: (ctx, p) => paylinkActions.list(ctx.services, walletPayee(callerWallet(ctx)), p),
  cancel_payment_request: (ctx, p) => paylinkActions.cancel(ctx.services, walletPayee(callerWallet(ctx)), p),
  send_paylink_invitation: (ctx, p) => paylinkActions.invite(ctx.services, walletPayee(callerWallet(ctx)), p),

  request_funds: (ctx, p) => requestFunds(ctx, callerWallet(ctx), p),

  list_fund_requests: (ctx, p) => {
    const wallet = callerWallet(ctx);
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const { items, total } = listFundRequests(ctx.services.db, [wallet.wallet_id], p.status, limit, offset);
    return { items: items.map((r) => fundRequestView(ctx.services, r)), total, limit, offset };
  },

  pay: (ctx, p) => publicPaylinkView(ctx.services, publicPaylink(ctx.services, p.short_code)),

  pay_status: async (ctx, p) => {
    const row = publicPaylink(ctx.services, p.short_code);
    await nudgeScan(ctx.services, row);
    return payStatusView(ctx.services, paylinkByShortCode(ctx.services, p.short_code) ?? row);
  },
});
