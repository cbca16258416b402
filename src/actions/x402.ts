/** x402 purchases and the public catalog (SPEC "Bot actions, x402"; logic in src/x402). */
import { AppError } from '../errors.ts';
import { X402 } from '../contract/x402.ts';
import { getPurchase, type PurchaseRow } from '../db/x402.ts';
import type { WalletRow } from '../db/wallets.ts';
import type { Services } from '../services.ts';
import { searchCatalog } from '../x402/catalog.ts';
import { confirm, payableTarget, prepare, prepareTool, purchaseStatus, settle, signComplete, toolPayment, toolReceipt } from '../x402/purchase.ts';
import { signInComplete, signInRound } from '../x402/sign-in.ts';
import type { ActionContext } from '../action-context.ts';
import { amountParam } from '../params.ts';
import { callerWallet } from './wallet.ts';
import { implement } from './registry.ts';

/** The caller's purchase; another wallet's fetch_id is NOT_FOUND. */
async function ownPurchase(services: Services, wallet: WalletRow, fetchId: string): Promise<PurchaseRow> {
  const p = await getPurchase(services.db, wallet.wallet_id, fetchId);
  if (!p) throw new AppError('NOT_FOUND', 'Purchase not found.', { howToFix: 'Check the fetch_id returned by x402_prepare.' });
  return p;
}

/** This network's CAIP-2 id, the chain a sign-in names; none on a custom network. */
function caip2Of(ctx: ActionContext): string {
  const caip2 = payableTarget(ctx.services.config).caip2;
  if (!caip2) throw new AppError('VALIDATION_ERROR', 'This network has no CAIP-2 id, so no sign-in names it.', { howToFix: 'Sign-ins work on mainnet, devnet and simnet.' });
  return caip2;
}

export const x402Actions = implement(X402, {
  x402_prepare: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const maxAmount = p.max_amount === undefined ? undefined : amountParam(ctx.services, '/max_amount', p.max_amount);
    return prepare(ctx, wallet, { url: p.url, method: p.method, headers: p.headers, body: p.body, maxAmount, signIn: p.sign_in });
  },

  x402_prepare_tool: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const maxAmount = p.max_amount === undefined ? undefined : amountParam(ctx.services, '/max_amount', p.max_amount);
    return prepareTool(ctx, wallet, { server: p.server, tool: p.tool, paymentRequired: p.payment_required, maxAmount });
  },

  x402_payment: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    return await toolPayment(ctx.services, wallet, await ownPurchase(ctx.services, wallet, p.fetch_id));
  },

  x402_receipt: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    return toolReceipt(ctx.services, wallet, await ownPurchase(ctx.services, wallet, p.fetch_id), p.payment_response, p.result);
  },

  x402_sign_in: async (ctx, p) => signInRound(ctx.services, await callerWallet(ctx), p.sign_in_id, caip2Of(ctx), p.commitments),

  x402_sign_in_complete: async (ctx, p) => signInComplete(ctx.services, await callerWallet(ctx), p.sign_in_id, caip2Of(ctx), p.signature_share),

  x402_confirm: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    return confirm(ctx.services, wallet, await ownPurchase(ctx.services, wallet, p.fetch_id), p.commitments);
  },

  x402_sign_complete: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    return await signComplete(ctx.services, wallet, await ownPurchase(ctx.services, wallet, p.fetch_id), p.signature_share, p.sign_session_id);
  },

  x402_settle: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    return settle(ctx.services, wallet, (await ownPurchase(ctx.services, wallet, p.fetch_id)).fetch_id);
  },

  x402_status: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    return await purchaseStatus(ctx.services, await ownPurchase(ctx.services, wallet, p.fetch_id));
  },

  x402_catalog: async (ctx, p) => await searchCatalog(ctx.services.db, { query: p.query, tag: p.tag }),
});
