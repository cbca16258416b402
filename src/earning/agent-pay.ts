/**
 * `pay {payment_request_id}` (SPEC "Bot actions, spending"): an ordinary payment to the paylink's
 * payee (a wallet, or a merchant's payout address, with the merchant's one-reference-per-order
 * rule), under the guard rails' paylink category, carrying the paylink's reference as the payment
 * reference and its Solana Pay reference key in the transfer (src/payments/message.ts), so the
 * chain shows the payment exactly as a Solana Pay wallet's would. The paylink is marked paid when
 * the payment completes (recordAgentPaylinkPayment, called from completeTx).
 */
import type { Address } from '@solana/kit';
import type { ActionContext } from '../action-context.ts';
import { AppError, invalid } from '../errors.ts';
import { getPaylink, type PaylinkRow } from '../db/paylinks.ts';
import { paylinkHolder } from '../db/transactions.ts';
import type { WalletRow } from '../db/wallets.ts';
import { formatUsdc } from '../domain/money.ts';
import { createIntent, quote } from '../payments/intent.ts';
import type { Recipient } from '../payments/recipient.ts';
import { txView } from '../payments/views.ts';
import type { Services } from '../services.ts';
import { effectiveStatus, paylinkNotFound, payeeOf } from './paylinks.ts';
import { assertReferenceFree } from './references.ts';
import { amountParam } from '../params.ts';

export interface PayPaylinkParams {
  payment_request_id: string;
  to?: string;
  amount?: number | string;
  note?: string;
  reference?: string;
}

/** INVALID_STATUS unless the paylink can be paid now. */
function assertPayable(services: Services, row: PaylinkRow): void {
  const status = effectiveStatus(row, services.now().getTime());
  if (status === 'open') return;
  throw new AppError('INVALID_STATUS', `The payment request is ${status} and cannot be paid.`, {
    howToFix: status === 'paid' ? 'Nothing to do: it is already paid.' : 'Ask the payee for a new payment request.',
    details: { status },
  });
}

/**
 * INVALID_STATUS while another payment holds the paylink: one signed and being sent, or this
 * payer's own still in flight. Another payer's unsigned intent does not (the request_id is public
 * and an intent costs nothing: it would let anyone hold a paylink for 48 h); two unsigned payers
 * race to sign, and the signing transaction lets only the first through (paylinkTaken). Checked
 * again inside the write transaction that creates the intent; cancelled, rejected, expired and
 * failed payments hold nothing.
 */
async function assertPaylinkFree(services: Services, payer: WalletRow, requestId: string): Promise<void> {
  const holder = await paylinkHolder(services.db, requestId, payer.wallet_id);
  if (!holder) return;
  const own = holder.wallet_id === payer.wallet_id;
  throw new AppError('INVALID_STATUS', `The payment request ${requestId} is being paid by ${own ? `your payment ${holder.transaction_id}` : "another payer's payment"} (${holder.status}); it is paid once.`, {
    howToFix: own
      ? `Finish (confirm_payment) or cancel (cancel_payment) transaction ${holder.transaction_id} instead of paying again.`
      : 'Do not pay it: wait for that payment to complete or lapse (get the paylink status from the payee), then pay only if it is still open.',
    details: { payment_request_id: requestId, in_flight: own ? { transaction_id: holder.transaction_id, status: holder.status } : { status: holder.status } },
  });
}

/** Creates the payment intent for a paylink; returns the transaction view as pay does. */
export async function payPaylink(ctx: ActionContext, payer: WalletRow, p: PayPaylinkParams) {
  const { services } = ctx;
  const row = await getPaylink(services.db, p.payment_request_id);
  if (!row) throw paylinkNotFound();
  assertPayable(services, row);
  const payee = await payeeOf(services, row);
  if (payee.key.kind === 'wallet' && payee.key.id === payer.wallet_id) throw new AppError('INVALID_RECIPIENT', 'A wallet cannot pay its own payment request.', { howToFix: 'Share the paylink with the payer instead.' });
  if (p.to !== undefined) {
    const to = p.to.trim().replace(/^@/, '');
    if (to.toLowerCase() !== payee.username && to !== payee.address) {
      throw invalid('/to', `names another recipient than the payment request's payee (@${payee.username})`, 'Leave to out when paying a payment_request_id.');
    }
  }
  let amount: bigint;
  if (row.amount !== null) {
    if (p.amount !== undefined && amountParam(services, '/amount', p.amount) !== row.amount) {
      throw invalid('/amount', `must be ${formatUsdc(row.amount)}, the amount of the payment request (or left out)`);
    }
    amount = row.amount;
  } else {
    if (p.amount === undefined) throw invalid('/amount', 'is required: this payment request lets the payer choose the amount', 'Send amount as a decimal USDC value, e.g. 12.5.');
    amount = amountParam(services, '/amount', p.amount);
  }
  if (p.reference !== undefined && row.reference !== null && p.reference !== row.reference) {
    throw invalid('/reference', `differs from the payment request's reference "${row.reference}"`, 'Leave reference out: the payment carries the payment request reference.');
  }
  const recipient: Recipient = {
    kind: payee.key.kind,
    label: payee.username,
    username: payee.username,
    name: payee.name,
    walletId: payee.key.kind === 'wallet' ? payee.key.id : undefined,
    merchantId: payee.key.kind === 'merchant' ? payee.key.id : undefined,
    address: payee.address as Address,
    category: 'paylink',
  };
  const reference = row.reference ?? p.reference;
  await assertPaylinkFree(services, payer, row.request_id);
  const q = await quote(services, payer.address as Address, recipient.address, amount, 'payment');
  const tx = await services.db
    .transaction(async () => {
      assertPayable(services, (await getPaylink(services.db, row.request_id))!);
      await assertPaylinkFree(services, payer, row.request_id);
      if (recipient.merchantId && reference !== undefined) {
        await assertReferenceFree(services.db, services.now().getTime(), { payerWalletId: payer.wallet_id, merchantId: recipient.merchantId, reference, amount, viaPaylinkId: row.request_id });
      }
      const created = await createIntent(services, {
        wallet: payer,
        type: 'payment',
        category: 'paylink',
        recipient,
        quote: q,
        note: p.note,
        reference,
        paymentRequestId: row.request_id,
        idempotencyKey: ctx.idempotency?.key,
      });
      await ctx.idempotency?.record(txView(created));
      return created;
    });
  return txView(tx);
}

/**
 * At signing, inside the signing transaction: the paylink this payment pays is already being
 * paid by another signed payment, so this one is not signed (the paylink is paid once). The
 * payment stays as it is: cancel it, or confirm it again once the other lapsed.
 */
export async function paylinkTaken(services: Services, tx: { transaction_id: string; wallet_id: string; payment_request_id: string | null }): Promise<AppError | null> {
  if (!tx.payment_request_id) return null;
  const holder = await paylinkHolder(services.db, tx.payment_request_id, '', tx.transaction_id);
  if (!holder) return null;
  return new AppError('INVALID_STATUS', `The paylink ${tx.payment_request_id} is being paid by another payment; this one is not signed.`, {
    howToFix: 'Cancel this payment (cancel_payment), or confirm it again if the other payment fails or lapses.',
    details: { payment_request_id: tx.payment_request_id },
  });
}
