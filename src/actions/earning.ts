/**
 * Earning and funding actions (SPEC "Bot actions, earning", request_funds / list_fund_requests,
 * public pay / pay_status; DESIGN §8). The logic lives in src/earning; these handlers check the
 * caller and the params and shape the answers.
 */
import { invalid } from '../api/errors.ts';
import { EARNING } from '../contract/earning.ts';
import { listFundRequests } from '../db/fund-requests.ts';
import { getPaylinkByReference, getPaylinkByShortCode, getWalletPaylink, listPaylinks, type PaylinkRow } from '../db/paylinks.ts';
import { fundRequestView, requestFunds } from '../earning/funding.ts';
import { cancelOwnPaylink, createPaylink, paylinkNotFound, paylinkView, payStatusView, publicPaylinkView, sendInvitation } from '../earning/paylinks.ts';
import { normalizeShortCode } from '../earning/rules.ts';
import { nudgeScan } from '../earning/scan.ts';
import { AppError } from '../api/errors.ts';
import type { Services } from '../services.ts';
import { implement, type ActionContext } from './registry.ts';
import { callerWallet } from './wallet.ts';

/** The caller's paylink; another wallet's id is NOT_FOUND. */
function ownPaylink(ctx: ActionContext, requestId: string): PaylinkRow {
  const row = getWalletPaylink(ctx.services.db, callerWallet(ctx).wallet_id, requestId);
  if (!row) throw paylinkNotFound();
  return row;
}

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
  create_payment_request: async (ctx, p) => {
    const wallet = callerWallet(ctx);
    const row = await createPaylink(ctx.services, wallet, p);
    return paylinkView(ctx.services, row);
  },

  get_payment_request: (ctx, p) => {
    const wallet = callerWallet(ctx);
    if ((p.request_id === undefined) === (p.reference === undefined)) {
      throw invalid('/request_id', 'send exactly one of request_id and reference', 'Send request_id (req_…) or the reference you gave at creation.');
    }
    const row = p.request_id !== undefined ? getWalletPaylink(ctx.services.db, wallet.wallet_id, p.request_id) : getPaylinkByReference(ctx.services.db, wallet.wallet_id, p.reference!);
    if (!row) throw paylinkNotFound();
    return paylinkView(ctx.services, row);
  },

  list_payment_requests: (ctx, p) => {
    const wallet = callerWallet(ctx);
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const { items, total } = listPaylinks(ctx.services.db, wallet.wallet_id, p.status, limit, offset);
    return { items: items.map((r) => paylinkView(ctx.services, r)), total, limit, offset };
  },

  cancel_payment_request: (ctx, p) => paylinkView(ctx.services, cancelOwnPaylink(ctx.services, ownPaylink(ctx, p.request_id))),

  send_paylink_invitation: (ctx, p) => sendInvitation(ctx.services, callerWallet(ctx), ownPaylink(ctx, p.request_id), p),

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
