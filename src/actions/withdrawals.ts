/** Withdrawals: external addresses, always approved by the owner, signed like payments. */
import type { Address } from '@solana/kit';
import { AppError, invalid } from '../errors.ts';
import { WITHDRAWALS } from '../contract/withdrawals.ts';
import { newId } from '../contract/ids.ts';
import { getWalletTx } from '../db/transactions.ts';
import { getWithdrawal, insertWithdrawal, type WithdrawalRow } from '../db/withdrawals.ts';
import { createIntent, quote } from '../payments/intent.ts';
import { isSolanaAddress } from '../payments/recipient.ts';
import { txView } from '../payments/views.ts';
import type { Services } from '../services.ts';
import { confirmAndOpenRound, confirmTx, ownTx } from './payments.ts';
import { prepareRound } from '../frost/coordinator-sign.ts';
import { amountParam } from '../params.ts';
import { callerWallet } from './wallet.ts';
import { implement } from './registry.ts';
import { crashPoint } from '../crash-points.ts';

async function withdrawalView(services: Services, w: WithdrawalRow) {
  const tx = await getWalletTx(services.db, w.wallet_id, w.transaction_id);
  if (!tx) throw new AppError('NOT_FOUND', 'Withdrawal not found.');
  return { withdrawal_id: w.withdrawal_id, reason: w.reason, ...txView(tx) };
}

export const withdrawalActions = implement(WITHDRAWALS, {
  withdraw: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    if (!isSolanaAddress(p.to_address)) throw invalid('/to_address', 'is not a valid Solana address (base58, 32 bytes)');
    if (p.to_address === wallet.address) throw invalid('/to_address', 'is this wallet itself', 'Withdraw to another address.');
    const amount = amountParam(ctx.services, '/amount', p.amount);
    const q = await quote(ctx.services, wallet.address as Address, p.to_address as Address, amount, 'withdrawal');
    const view = await ctx.services.db
      .transaction(async () => {
        const tx = await createIntent(ctx.services, {
          wallet,
          type: 'withdrawal',
          category: 'withdrawal',
          recipient: { label: p.to_address, address: p.to_address as Address },
          quote: q,
          note: p.reason,
          idempotencyKey: ctx.idempotency?.key,
        });
        const w = { withdrawal_id: newId('withdrawal'), transaction_id: tx.transaction_id, wallet_id: wallet.wallet_id, to_address: p.to_address, reason: p.reason, now: ctx.services.now().getTime() };
        await insertWithdrawal(ctx.services.db, w);
        const view = await withdrawalView(ctx.services, { ...w, created_at: BigInt(w.now) });
        await ctx.idempotency?.record(view);
        return view;
      });
    crashPoint('intent_committed');
    return view;
  },

  confirm_withdrawal: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const tx = await ownTx(ctx.services, wallet.wallet_id, p.transaction_id, ['withdrawal']);
    const agent = p.commitments === undefined ? null : await prepareRound(ctx.services, wallet.wallet_id, wallet.server_key, p.commitments);
    return agent ? await confirmAndOpenRound(ctx.services, wallet, tx, agent) : confirmTx(ctx.services, wallet.address, tx);
  },

  get_withdrawal: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const w = await getWithdrawal(ctx.services.db, wallet.wallet_id, p.withdrawal_id);
    if (!w) throw new AppError('NOT_FOUND', 'Withdrawal not found.', { howToFix: 'Check the withdrawal_id returned by withdraw.' });
    return await withdrawalView(ctx.services, w);
  },
});
