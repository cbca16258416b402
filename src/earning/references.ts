/**
 * A merchant reference names one order: a payment or a merchant paylink holding it refuses the
 * next one. Checked by pay (actions), by an agent paying a paylink (earning) and by a new paylink.
 */
import type { Database } from 'bun:sqlite';
import { AppError } from '../errors.ts';
import { paymentHoldingReference } from '../db/merchants.ts';
import { merchantPaylinkHoldingReference } from '../db/paylinks.ts';

/**
 * Refuses a payment to `merchantId` with a `reference` another payment already holds (completed,
 * or under way: not failed, cancelled, expired or rejected), or that an open or paid paylink of
 * the merchant holds, other than `viaPaylinkId` (the paylink this payment pays). Call inside the
 * transaction that creates the intent. The other payment's id is named only to the wallet that made it.
 */
export function assertReferenceFree(db: Database, now: number, payerWalletId: string, merchantId: string, reference: string, viaPaylinkId?: string): void {
  const paylink = merchantPaylinkHoldingReference(db, merchantId, reference, now);
  if (paylink && paylink.request_id !== viaPaylinkId) {
    if (paylink.status === 'paid') {
      throw new AppError('INVALID_STATUS', `This merchant was already paid with reference "${reference}" (payment request ${paylink.request_id}); an order is paid once.`, {
        howToFix: 'Do not pay again. If this is a different order, ask the merchant for its own reference.',
        details: { field: '/reference', payment_request_id: paylink.request_id },
      });
    }
    throw new AppError('INVALID_STATUS', `The merchant's payment request ${paylink.request_id} is waiting for the payment of reference "${reference}".`, {
      howToFix: `Pay that request: pay {payment_request_id: "${paylink.request_id}"}.`,
      details: { field: '/reference', payment_request_id: paylink.request_id },
    });
  }
  const holder = paymentHoldingReference(db, merchantId, reference);
  if (!holder) return;
  const own = holder.wallet_id === payerWalletId ? { transaction_id: holder.transaction_id, status: holder.status } : {};
  if (holder.status === 'completed') {
    throw new AppError('INVALID_STATUS', `This merchant was already paid with reference "${reference}"; an order is paid once.`, {
      howToFix: 'Do not pay again. If this is a different order, ask the merchant for its own reference; the merchant can check the payment with verify.',
      details: { field: '/reference', ...own },
    });
  }
  throw new AppError('INVALID_STATUS', `A payment to this merchant with reference "${reference}" is already under way (${own.status ?? 'not yet completed'}).`, {
    howToFix: own.transaction_id
      ? `Finish or cancel that payment (transaction_id ${own.transaction_id}) instead of creating a second one.`
      : 'Wait for that payment to complete or lapse; if this is a different order, ask the merchant for its own reference.',
    details: { field: '/reference', ...own },
  });
}

/**
 * Refuses a new merchant paylink whose reference an open or paid paylink or a payment of the
 * merchant already holds: one order, one reference, one answer from verify.
 */
export function assertNewPaylinkReference(db: Database, now: number, merchantId: string, reference: string): void {
  const paylink = merchantPaylinkHoldingReference(db, merchantId, reference, now);
  if (paylink) {
    throw new AppError('INVALID_STATUS', `Reference "${reference}" already belongs to your ${paylink.status} payment request ${paylink.request_id}.`, {
      howToFix: 'Use a new reference for each order; read the existing request with get_payment_request {reference}.',
      details: { field: '/reference', payment_request_id: paylink.request_id },
    });
  }
  const payment = paymentHoldingReference(db, merchantId, reference);
  if (payment) {
    throw new AppError('INVALID_STATUS', `A payment with reference "${reference}" is already ${payment.status === 'completed' ? 'completed' : 'under way'}; an order is paid once.`, {
      howToFix: 'Use a new reference for each order; check this one with verify {reference}.',
      details: { field: '/reference', transaction_id: payment.transaction_id },
    });
  }
}
