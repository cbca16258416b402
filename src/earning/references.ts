/**
 * A merchant reference names one order: a payment or a merchant paylink holding it refuses the
 * next one. Checked by pay (actions), by an agent paying a paylink (earning), by a new paylink, and
 * again when a payment is signed. A payment holds a reference only once signed (an unsigned intent
 * costs nothing, so it would let anyone squat an order id), and against another payer only for
 * payments no larger than itself and than what the order asks (a merchant paylink's amount):
 * whatever the merchant expects, an underpayment neither keeps out the payment that meets it nor
 * reads as paid. A payer's own payment holds the order against its next one of any amount (unless
 * below the paylink's): a payer does not pay an order twice.
 */
import type { Store } from '../db/store.ts';
import { AppError } from '../errors.ts';
import { referenceHolder } from '../db/merchants.ts';
import { merchantPaylinkHoldingReference } from '../db/paylinks.ts';

/** What an order asks: the amount of the merchant paylink that carries its reference, if any and fixed. */
export async function orderAmount(db: Store, now: number, merchantId: string, reference: string): Promise<bigint> {
  return (await merchantPaylinkHoldingReference(db, merchantId, reference, now))?.amount ?? 0n;
}

/** A payment of `amount` to `merchantId` with `reference`; `viaPaylinkId` is the paylink it pays, `exceptTxId` the payment itself once it exists. */
export interface ReferencedPayment {
  payerWalletId: string;
  merchantId: string;
  reference: string;
  amount: bigint;
  viaPaylinkId?: string;
  exceptTxId?: string;
}

/**
 * Refuses a payment to `merchantId` with a `reference` another payment already holds (see
 * referenceHolder), or that an open or paid paylink of the merchant holds, other than
 * `viaPaylinkId`. Call inside the transaction that creates the intent. The other payment's id is
 * named only to the wallet that made it.
 */
export async function assertReferenceFree(db: Store, now: number, q: ReferencedPayment): Promise<void> {
  const { payerWalletId, merchantId, reference, viaPaylinkId } = q;
  const paylink = await merchantPaylinkHoldingReference(db, merchantId, reference, now);
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
  // The order asks at least its paylink's amount. Another payer's smaller payment never keeps out a
  // larger one (it may be an underpayment); the payer's own holds unless below the paylink's amount.
  const asked = paylink?.amount ?? 0n;
  const holder = await referenceHolder(db, { merchantId, reference, payerWalletId, minAmount: q.amount > asked ? q.amount : asked, ownMinAmount: asked, exceptTxId: q.exceptTxId });
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
export async function assertNewPaylinkReference(db: Store, now: number, merchantId: string, reference: string, amount: bigint | null): Promise<void> {
  const paylink = await merchantPaylinkHoldingReference(db, merchantId, reference, now);
  if (paylink) {
    throw new AppError('INVALID_STATUS', `Reference "${reference}" already belongs to your ${paylink.status} payment request ${paylink.request_id}.`, {
      howToFix: 'Use a new reference for each order; read the existing request with get_payment_request {reference}.',
      details: { field: '/reference', payment_request_id: paylink.request_id },
    });
  }
  // Another payer's payment for less than this order asks does not hold it.
  const payment = await referenceHolder(db, { merchantId, reference, payerWalletId: '', minAmount: amount ?? 0n, ownMinAmount: amount ?? 0n });
  if (payment) {
    throw new AppError('INVALID_STATUS', `A payment with reference "${reference}" is already ${payment.status === 'completed' ? 'completed' : 'under way'}; an order is paid once.`, {
      howToFix: 'Use a new reference for each order; check this one with verify {reference}.',
      details: { field: '/reference', transaction_id: payment.transaction_id },
    });
  }
}

/**
 * At signing, inside the signing transaction: the reference this payment carries is held by
 * another signed or completed payment of the order (or a paylink now carries it), so it is not
 * signed — the order is paid once.
 */
export async function referenceTaken(
  db: Store,
  now: number,
  tx: { transaction_id: string; wallet_id: string; to_merchant_id: string | null; reference: string | null; payment_request_id: string | null; amount: bigint },
): Promise<AppError | null> {
  if (!tx.to_merchant_id || tx.reference === null) return null;
  try {
    await assertReferenceFree(db, now, {
      payerWalletId: tx.wallet_id,
      merchantId: tx.to_merchant_id,
      reference: tx.reference,
      amount: tx.amount,
      viaPaylinkId: tx.payment_request_id ?? undefined,
      exceptTxId: tx.transaction_id,
    });
    return null;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}
