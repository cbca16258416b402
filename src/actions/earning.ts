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
async function ownPaylink(services: Services, payee: Payee, requestId: string): Promise<PaylinkRow> {
  const row = await getPayeePaylink(services.db, payee.key, requestId);
  if (!row) throw paylinkNotFound();
  return row;
}

/**
 * The paylink actions for whichever payee calls them: a wallet on /bot, a merchant on /merchant
 * (src/actions/merchant.ts), so both get the same checks and answers.
 */
export const paylinkActions = {
  create: async (services: Services, payee: Payee, p: CreatePaylinkInput, inTransaction?: (reference: string | null, amount: bigint | null) => Promise<void>) =>
    await paylinkView(services, await createPaylink(services, payee, p, inTransaction)),

  get: async (services: Services, payee: Payee, p: { request_id?: string; reference?: string }) => {
    if ((p.request_id === undefined) === (p.reference === undefined)) {
      throw invalid('/request_id', 'send exactly one of request_id and reference', 'Send request_id (req_…) or the reference you gave at creation.');
    }
    const row = p.request_id !== undefined ? await getPayeePaylink(services.db, payee.key, p.request_id) : await getPaylinkByReference(services.db, payee.key, p.reference!);
    if (!row) throw paylinkNotFound();
    return await paylinkView(services, row);
  },

  list: async (services: Services, payee: Payee, p: { status?: PaylinkStatus; limit?: number; offset?: number }) => {
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const { items, total } = await listPaylinks(services.db, payee.key, p.status, limit, offset);
    return { items: await Promise.all(items.map((r) => paylinkView(services, r))), total, limit, offset };
  },

  cancel: async (services: Services, payee: Payee, p: { request_id: string }) => await paylinkView(services, await cancelOwnPaylink(services, await ownPaylink(services, payee, p.request_id))),

  invite: async (services: Services, payee: Payee, p: { request_id: string; to_email?: string; to_wallet?: string; message?: string }) =>
    await sendInvitation(services, payee, await ownPaylink(services, payee, p.request_id), p),
};

/** A paylink by the short code of its checkout URL (forgiving case and look-alike characters). */
export async function paylinkByShortCode(services: Services, raw: string): Promise<PaylinkRow | null> {
  const code = normalizeShortCode(raw);
  return code === null ? null : await getPaylinkByShortCode(services.db, code);
}

async function publicPaylink(services: Services, raw: string): Promise<PaylinkRow> {
  const row = await paylinkByShortCode(services, raw);
  if (!row) throw new AppError('NOT_FOUND', 'No payment request has this short code.', { howToFix: 'Check the code at the end of the checkout URL (/pay/<short_code>).' });
  return row;
}

export const earningActions = implement(EARNING, {
  create_payment_request: async (ctx, p) => paylinkActions.create(ctx.services, walletPayee(await callerWallet(ctx)), p),
  get_payment_request: async (ctx, p) => await paylinkActions.get(ctx.services, walletPayee(await callerWallet(ctx)), p),
  list_payment_requests: async (ctx, p) => await paylinkActions.list(ctx.services, walletPayee(await callerWallet(ctx)), p),
  cancel_payment_request: async (ctx, p) => await paylinkActions.cancel(ctx.services, walletPayee(await callerWallet(ctx)), p),
  send_paylink_invitation: async (ctx, p) => await paylinkActions.invite(ctx.services, walletPayee(await callerWallet(ctx)), p),

  request_funds: async (ctx, p) => requestFunds(ctx, await callerWallet(ctx), p),

  list_fund_requests: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const { items, total } = await listFundRequests(ctx.services.db, [wallet.wallet_id], p.status, limit, offset);
    return { items: await Promise.all(items.map((r) => fundRequestView(ctx.services, r))), total, limit, offset };
  },

  pay: async (ctx, p) => await publicPaylinkView(ctx.services, await publicPaylink(ctx.services, p.short_code)),

  pay_status: async (ctx, p) => {
    const row = await publicPaylink(ctx.services, p.short_code);
    await nudgeScan(ctx.services, row);
    return payStatusView(ctx.services, (await paylinkByShortCode(ctx.services, p.short_code)) ?? row);
  },
});
