/** get_receipt for agents (their completed transactions) and merchants (their x402 sales). */
import type { ActionContext } from '../action-context.ts';
import { BOT_RECEIPTS, MERCHANT_RECEIPTS } from '../contract/receipts.ts';
import { getWalletTx } from '../db/transactions.ts';
import { getMerchant } from '../db/merchants.ts';
import { getSale } from '../db/x402-sales.ts';
import { AppError } from '../errors.ts';
import { paylinkClaims, saleClaims, signReceipt, slotOf, transactionClaims, type ReceiptClaims } from '../evidence/receipts.ts';
import { getPayeePaylink } from '../db/paylinks.ts';
import { implement } from './registry.ts';
import { callerWallet } from './wallet.ts';

const notCompleted = (status: string) =>
  new AppError('INVALID_STATUS', `A receipt is given for a completed transaction; this one is ${status}.`, { howToFix: 'Ask again once the transaction has completed (its status says when).' });

const answer = (services: ActionContext['services'], claims: ReceiptClaims) => ({ receipt: signReceipt(services, claims), claims, key_url: `${services.publicUrl()}/.well-known/agent-wallet/log-key` });

export const botReceiptActions = implement(BOT_RECEIPTS, {
  get_receipt: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const tx = await getWalletTx(ctx.services.db, wallet.wallet_id, p.transaction_id);
    if (!tx) throw new AppError('NOT_FOUND', 'Transaction not found.', { howToFix: 'Check the transaction_id with transactions.' });
    if (tx.status !== 'completed') throw notCompleted(tx.status);
    return answer(ctx.services, transactionClaims(ctx.services, tx, wallet, await slotOf(ctx.services, tx.signature)));
  },
});

export const merchantReceiptActions = implement(MERCHANT_RECEIPTS, {
  get_receipt: async (ctx, p) => {
    const merchantId = ctx.principal.kind === 'merchant' ? ctx.principal.merchantId : '';
    const merchant = await getMerchant(ctx.services.db, merchantId);
    const payee = merchant ? { merchant_id: merchant.merchant_id, username: merchant.username, address: merchant.payout_address } : null;
    // A paylink paid from a Solana Pay wallet: the merchant's record of it is the paylink itself.
    const link = merchant && p.transaction_id.startsWith('req_') ? await getPayeePaylink(ctx.services.db, { kind: 'merchant', id: merchant.merchant_id }, p.transaction_id) : null;
    if (link) {
      if (link.status !== 'paid') throw notCompleted(link.status);
      return answer(ctx.services, paylinkClaims(ctx.services, link, payee!, await slotOf(ctx.services, link.signature)));
    }
    const sale = await getSale(ctx.services.db, p.transaction_id);
    if (!merchant || !sale || sale.merchant_id !== merchant.merchant_id) throw new AppError('NOT_FOUND', 'No x402 sale or paid paylink of this merchant has this id.', { howToFix: 'Pass an x402 sale (sale_…) or a paylink (req_…) from history.' });
    if (sale.status !== 'completed') throw notCompleted(sale.status);
    return answer(ctx.services, saleClaims(ctx.services, sale, { ...payee!, address: sale.pay_to }, await slotOf(ctx.services, sale.signature)));
  },
});
