/** get_receipt for agents (their completed transactions) and merchants (their x402 sales). */
import type { ActionContext } from '../action-context.ts';
import { BOT_RECEIPTS, MERCHANT_RECEIPTS } from '../contract/receipts.ts';
import { getWalletTx } from '../db/transactions.ts';
import { getMerchant } from '../db/merchants.ts';
import { getSale } from '../db/x402-sales.ts';
import { AppError } from '../errors.ts';
import { saleClaims, signReceipt, slotOf, transactionClaims, type ReceiptClaims } from '../evidence/receipts.ts';
import { implement } from './registry.ts';
import { callerWallet } from './wallet.ts';

const notCompleted = (status: string) =>
  new AppError('INVALID_STATUS', `A receipt is given for a completed transaction; this one is ${status}.`, { howToFix: 'Ask again once the transaction has completed (its status says when).' });

const answer = (services: ActionContext['services'], claims: ReceiptClaims) => ({ receipt: signReceipt(services, claims), claims, key_url: `${services.publicUrl()}/.well-known/agent-wallet/log-key` });

export const botReceiptActions = implement(BOT_RECEIPTS, {
  get_receipt: async (ctx, p) => {
    const wallet = callerWallet(ctx);
    const tx = getWalletTx(ctx.services.db, wallet.wallet_id, p.transaction_id);
    if (!tx) throw new AppError('NOT_FOUND', 'Transaction not found.', { howToFix: 'Check the transaction_id with transactions.' });
    if (tx.status !== 'completed') throw notCompleted(tx.status);
    return answer(ctx.services, transactionClaims(ctx.services, tx, wallet, await slotOf(ctx.services, tx.signature)));
  },
});

export const merchantReceiptActions = implement(MERCHANT_RECEIPTS, {
  get_receipt: async (ctx, p) => {
    const merchantId = ctx.principal.kind === 'merchant' ? ctx.principal.merchantId : '';
    const merchant = getMerchant(ctx.services.db, merchantId);
    const sale = getSale(ctx.services.db, p.transaction_id);
    if (!merchant || !sale || sale.merchant_id !== merchant.merchant_id) throw new AppError('NOT_FOUND', 'No x402 sale of this merchant has this id.', { howToFix: 'Pass a transaction_id (sale_…) from history.' });
    if (sale.status !== 'completed') throw notCompleted(sale.status);
    return answer(ctx.services, saleClaims(ctx.services, sale, { merchant_id: merchant.merchant_id, username: merchant.username, address: sale.pay_to }, await slotOf(ctx.services, sale.signature)));
  },
});
