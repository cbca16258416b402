/**
 * Sending signed transactions and recording their outcome (DESIGN §5). The signed bytes were
 * stored before the first broadcast; they are re-sent, never re-signed, while their blockhash is
 * valid. Only when the chain's block height has passed lastValidBlockHeight AND the signature is
 * unknown may the transaction go back to confirmable for a new message and a new signing round.
 */
import { AppError } from '../api/errors.ts';
import { appendEvent } from '../db/events.ts';
import { getTx, hasSignature, insertTx, moveTx, resetExpiredSigning, type TxRow } from '../db/transactions.ts';
import { getWallet } from '../db/wallets.ts';
import { newId } from '../contract/ids.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { ChainRejectedError, ChainUnavailableError } from '../solana/errors.ts';
import type { Services } from '../services.ts';
import { crashPoint } from '../crash-points.ts';
import { forgetBalance } from './balance-cache.ts';
import { recordMerchantPayment } from '../webhooks/outbox.ts';
import { recordAgentPaylinkPayment } from '../earning/scan.ts';

const PREFIX: Record<string, string> = { payment: 'payment', withdrawal: 'withdrawal', x402: 'payment' };

/** Broadcasts the stored bytes. Rejections that prove the bytes can never land mark it failed. */
export async function broadcast(services: Services, tx: TxRow): Promise<void> {
  if (!tx.signed_tx) return;
  try {
    await services.chain.sendRawTransaction(tx.signed_tx);
    crashPoint('broadcast_sent');
  } catch (err) {
    if (err instanceof ChainRejectedError) {
      // Already processed: it landed; the status lookup records it. Blockhash not found: it may have
      // expired; expiry is decided by block height in settle(), never by this error alone.
      if (err.kind === 'already_processed' || err.kind === 'blockhash_not_found') return;
      if (err.kind === 'simulation_failed' || err.kind === 'signature_failure') {
        services.db.transaction(() => failTx(services, tx, `Solana refused the transaction: ${err.reason}`)).immediate();
        return;
      }
      return;
    }
    throw err;
  }
}

function failTx(services: Services, tx: TxRow, reason: string): void {
  const now = services.now().getTime();
  if (!moveTx(services.db, tx.transaction_id, ['pending'], 'failed', now, { error: reason })) return;
  appendEvent(services.db, { walletId: tx.wallet_id, type: `${PREFIX[tx.type] ?? 'payment'}.failed`, data: { transaction_id: tx.transaction_id, error: reason }, now });
}

/** Records a landed transfer for the sender and, when the recipient is one of our wallets, for the recipient. */
function completeTx(services: Services, tx: TxRow): void {
  const now = services.now().getTime();
  if (!moveTx(services.db, tx.transaction_id, ['pending'], 'completed', now, { completed_at: now })) return;
  forgetBalance(getWallet(services.db, tx.wallet_id)?.address);
  forgetBalance(tx.to_address);
  const prefix = PREFIX[tx.type] ?? 'payment';
  appendEvent(services.db, {
    walletId: tx.wallet_id,
    type: `${prefix}.completed`,
    data: { transaction_id: tx.transaction_id, amount: toUsdcNumber(tx.amount), fee: toUsdcNumber(tx.fee + tx.setup_fee), to: tx.counterparty, signature: tx.signature },
    now,
  });
  // A merchant's payment.received event and its webhook message, in this same transaction.
  if (tx.to_merchant_id) recordMerchantPayment(services, tx, now);
  // The recipient's row, unless another writer already recorded this signature for it (the unique
  // index would otherwise fail the whole completion and leave the payment pending forever).
  if (tx.to_wallet_id && !(tx.signature && hasSignature(services.db, tx.to_wallet_id, tx.signature))) {
    const sender = getWallet(services.db, tx.wallet_id);
    const inId = newId('transaction');
    insertTx(services.db, {
      transaction_id: inId,
      wallet_id: tx.to_wallet_id,
      type: 'payment',
      direction: 'in',
      status: 'completed',
      amount: tx.amount,
      counterparty: sender?.username ?? sender?.address ?? null,
      note: tx.note,
      reference: tx.reference,
      payment_request_id: tx.payment_request_id,
      signature: tx.signature,
      completed_at: now,
      now,
    });
    appendEvent(services.db, {
      walletId: tx.to_wallet_id,
      type: 'payment.received',
      data: { transaction_id: inId, amount: toUsdcNumber(tx.amount), from: sender?.username ?? null, note: tx.note, reference: tx.reference, signature: tx.signature },
      now,
    });
  }
  // A paylink paid by this payment is marked paid (once), in this same transaction.
  if (tx.payment_request_id) recordAgentPaylinkPayment(services, tx, now);
}

/** Looks the signature up once and records what the chain says. Returns the fresh row. */
export async function settle(services: Services, txId: string, opts: { rebroadcast: boolean }): Promise<TxRow | null> {
  const tx = getTx(services.db, txId);
  if (!tx || tx.status !== 'pending' || !tx.signature || !tx.signed_tx) return tx;
  const [status] = await services.chain.getSignatureStatuses([tx.signature]);
  if (status) {
    crashPoint('confirmation_seen');
    services.db
      .transaction(() => {
        if (status.err !== null) failTx(services, tx, `the transaction failed on chain: ${JSON.stringify(status.err)}`);
        else completeTx(services, tx);
      })
      .immediate();
    crashPoint('completion_recorded');
    return getTx(services.db, txId);
  }
  const height = await services.chain.getBlockHeight();
  if (tx.last_valid_block_height !== null && height > tx.last_valid_block_height) {
    // Expired AND absent: these bytes can never land. Back to confirmable for a new message.
    const backTo = tx.approval_id ? 'approved' : 'pre_approved';
    const signature = tx.signature;
    services.db
      .transaction(() => {
        if (!resetExpiredSigning(services.db, tx.transaction_id, signature, backTo, services.now().getTime())) return;
        appendEvent(services.db, {
          walletId: tx.wallet_id,
          type: `${PREFIX[tx.type] ?? 'payment'}.resign_required`,
          data: { transaction_id: tx.transaction_id, expired_signature: signature, status: backTo },
          now: services.now().getTime(),
        });
      })
      .immediate();
    return getTx(services.db, txId);
  }
  if (opts.rebroadcast) await broadcast(services, tx);
  return getTx(services.db, txId);
}

/** submit_signed_tx: broadcast the stored bytes (idempotent) and optionally wait for the outcome. */
export async function submit(services: Services, tx: TxRow, waitMs: number): Promise<TxRow> {
  if (tx.status === 'completed' || tx.status === 'failed') return tx;
  if (tx.status !== 'pending' || !tx.signed_tx) {
    throw new AppError('INVALID_STATUS', `The transaction is ${tx.status} and has no signed bytes to send.`, { howToFix: 'Sign it first: confirm, then frost_sign_init and frost_sign_complete.' });
  }
  try {
    await broadcast(services, tx);
  } catch (err) {
    if (err instanceof ChainUnavailableError) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Solana is unreachable; the signed transaction is kept and will be re-sent.', {
        headers: { 'Retry-After': '5' },
        howToFix: 'Call submit_signed_tx again later; never sign this payment again — the same bytes are re-sent.',
      });
    }
    throw err;
  }
  const deadline = Date.now() + waitMs;
  let current = getTx(services.db, tx.transaction_id) ?? tx;
  for (;;) {
    try {
      current = (await settle(services, tx.transaction_id, { rebroadcast: false })) ?? current;
    } catch (err) {
      if (!(err instanceof ChainUnavailableError)) throw err;
    }
    if (current.status !== 'pending' || Date.now() >= deadline) return current;
    await Bun.sleep(Math.min(250, Math.max(0, deadline - Date.now())));
  }
}
