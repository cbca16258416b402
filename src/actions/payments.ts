/** Spending, signing, history and event actions (SPEC "Bot actions, spending" and "history, events"). */
import type { Address } from '@solana/kit';
import { AppError, invalid } from '../errors.ts';
import { PAYMENTS } from '../contract/payments.ts';
import { closeApproval } from '../db/approvals.ts';
import { effectiveStatus } from '../earning/paylinks.ts';
import { appendEvent } from '../db/events.ts';
import { findByUsername } from '../db/directory.ts';
import { markFeedRead, readFeed } from './feed.ts';
import { getTx, getWalletTx, listTxs, moveTx, type TxRow, type TxType } from '../db/transactions.ts';
import { closeOpenSessions } from '../db/sign-sessions.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { completeSigning, prepareRound, recordRound, startSigning, type PreparedRound, type SignInitResult } from '../frost/coordinator-sign.ts';
import { ChainUnavailableError } from '../solana/errors.ts';
import { assertAffordable, createIntent, decideIntent, quote, setupHeldQuote, type Quote } from '../payments/intent.ts';
import { buildMessage, ensureMessage, storeMessage, treasuryOf } from '../payments/message.ts';
import { recipientAccountExists } from '../payments/recipient-account.ts';
import { newId } from '../contract/ids.ts';
import { applyRecheck, refuseUnlessRailsAllow } from '../payments/recheck.ts';
import { isSolanaAddress, resolveRecipient } from '../payments/recipient.ts';
import { accountCreatedElsewhere } from '../payments/recipient-account.ts';
import { submit } from '../payments/settle.ts';
import { txView } from '../payments/views.ts';
import type { Services } from '../services.ts';
import { callerWallet } from './wallet.ts';
import { assertReferenceFree, referenceTaken } from '../earning/references.ts';
import { paylinkTaken } from '../earning/agent-pay.ts';
import { implement } from './registry.ts';
import { amountParam } from '../params.ts';
import { crashPoint } from '../crash-points.ts';
import { payPaylink } from '../earning/agent-pay.ts';
import { getPaylink, referenceKeysOf } from '../db/paylinks.ts';
import { batchedWrite } from '../db/write-batch.ts';

/** The caller's transaction; another wallet's id is NOT_FOUND. */
export async function ownTx(services: Services, walletId: string, txId: string, types: readonly TxType[] = ['payment']): Promise<TxRow> {
  const tx = await getWalletTx(services.db, walletId, txId);
  if (!tx || !types.includes(tx.type) || tx.direction !== 'out') throw new AppError('NOT_FOUND', 'Transaction not found.', { howToFix: 'Check the transaction_id with list_payments.' });
  return tx;
}

/** Why a transaction cannot be confirmed now, as the SPEC's error codes. */
export function assertConfirmable(tx: TxRow): void {
  const noun = tx.type === 'withdrawal' ? 'withdrawal' : 'payment';
  switch (tx.status) {
    case 'pre_approved':
    case 'approved':
    case 'pending':
      return;
    case 'awaiting_approval':
      throw new AppError('AWAITING_APPROVAL', `The owner has not approved this ${noun} yet.`, {
        howToFix: `Wait for the owner: poll approval_status with approval_id ${tx.approval_id} and wait_seconds.`,
        details: { approval_id: tx.approval_id },
      });
    case 'completed':
      throw new AppError('ALREADY_COMPLETED', `This ${noun} already completed.`, { details: { signature: tx.signature } });
    case 'expired':
      throw new AppError('TRANSACTION_EXPIRED', `This ${noun} was not confirmed within 48 hours and expired.`);
    default:
      throw new AppError('INVALID_STATUS', `The ${noun} is ${tx.status} and cannot be confirmed.`, { howToFix: `Create a new ${noun}.` });
  }
}

/**
 * What a pay's write transaction decides about (TxOptions.locks): the payer's budget, balance and
 * decision log, the recipient's account setup fee, and a merchant reference.
 */
function payLocks(walletId: string, to: string, reference: string | undefined): string[] {
  return [`wallet:${walletId}`, `address:${to}`, ...(reference !== undefined ? [`reference:${reference}`] : [])];
}

/** Why a payment of a paylink can no longer be signed (the paylink is paid, cancelled or expired); null while it is open. */
async function paylinkClosed(services: Services, tx: TxRow): Promise<AppError | null> {
  if (!tx.payment_request_id) return null;
  const paylink = await getPaylink(services.db, tx.payment_request_id);
  const status = paylink ? effectiveStatus(paylink, services.now().getTime()) : 'cancelled';
  if (status === 'open') return null;
  return new AppError('INVALID_STATUS', `The paylink ${tx.payment_request_id} is ${status}; this payment is no longer signed.`, {
    howToFix: status === 'paid' ? 'Nothing to pay: the paylink was paid by another payment.' : 'Cancel this payment with cancel_payment; ask the payee for a new paylink if you still owe it.',
    details: { payment_request_id: tx.payment_request_id, paylink_status: status },
  });
}

/**
 * A payment of a paylink is signed only while the paylink is open. One that lost the paylink to
 * another payment (a Solana Pay payment landed first) is recorded as rejected (`already_paid`),
 * releasing its money, and is never signed.
 */
async function assertPaylinkStillOpen(services: Services, tx: TxRow): Promise<void> {
  const closed = await paylinkClosed(services, tx);
  if (!closed) return;
  if (closed.details.paylink_status === 'paid') {
    const now = services.now().getTime();
    await services.db
      .transaction(async () => {
        if (!(await moveTx(services.db, tx.transaction_id, ['pre_approved', 'approved'], 'rejected', now, { error: 'already_paid' }))) return;
        await appendEvent(services.db, { walletId: tx.wallet_id, type: 'payment.rejected', data: { transaction_id: tx.transaction_id, rule: 'paylink', reason: 'already_paid', payment_request_id: tx.payment_request_id }, now });
      });
  }
  throw closed;
}

/** The confirm step shared by payments and withdrawals: the message to sign and what it does. */
export async function confirmTx(services: Services, walletAddress: string, tx: TxRow, withNewMessage?: (stored: TxRow) => Promise<void>) {
  assertConfirmable(tx);
  if (tx.status !== 'pending') {
    await assertPaylinkStillOpen(services, tx);
    await applyRecheck(services, tx);
  }
  return await confirmAnswer(services, await ensureMessage(services, walletAddress, tx, withNewMessage));
}

/** The confirm answer for a transaction with a current message. */
async function confirmAnswer(services: Services, ready: TxRow) {
  if (!ready.message) throw new AppError('INTERNAL_ERROR', 'No message was built.');
  return {
    transaction_id: ready.transaction_id,
    status: ready.status,
    message: Buffer.from(ready.message).toString('base64'),
    signed: ready.signed_tx !== null,
    summary: {
      to: ready.counterparty,
      to_address: ready.to_address,
      amount: toUsdcNumber(ready.amount),
      fee: toUsdcNumber(ready.fee + ready.setup_fee),
      fee_breakdown: { platform_fee: toUsdcNumber(ready.fee), account_setup_fee: toUsdcNumber(ready.setup_fee) },
      total: toUsdcNumber(ready.amount + ready.fee + ready.setup_fee),
      usdc_mint: services.config.usdcMint,
      treasury: treasuryOf(services),
      fee_payer: services.feePayer.address,
      network: services.config.solana.network,
      reference: ready.reference,
      // Solana Pay reference keys appended to the transfer (a paylink's); the client checks them too.
      references: await referenceKeysOf(services.db, ready.payment_request_id),
      last_valid_block_height: ready.last_valid_block_height,
    },
    next_step: ready.signed_tx ? 'already signed: call submit_signed_tx' : 'check the message, then frost_sign_init with your commitments',
  };
}

/**
 * The fast path (DESIGN §6.2): the confirm answer plus the signing round frost_sign_init would open
 * for the agent's commitments — same nonce sealing, single use and expiry. A transaction already
 * signed opens no round (its bytes are re-sent, never signed again).
 */
export async function confirmAndOpenRound(services: Services, wallet: { wallet_id: string; address: string; server_key: Uint8Array }, tx: TxRow, prepared: PreparedRound) {
  // A message built now is stored with the round in one transaction (one commit less).
  let round: SignInitResult | null = null;
  const confirmed = await confirmTx(services, wallet.address, tx, async (stored) => {
    round = await recordRound(services, prepared, stored);
  });
  if (confirmed.signed) return confirmed;
  round ??= (await services.db.transaction(async () => await recordRound(services, prepared, await ownTx(services, wallet.wallet_id, tx.transaction_id, SIGNABLE_TYPES))));
  return withOpenRound(confirmed, round);
}

/** A confirm answer with the round opened for it. */
function withOpenRound<T extends object>(confirmed: T, round: SignInitResult) {
  return {
    ...confirmed,
    // The bytes the session is bound to (a concurrent confirm may have rebuilt an expired message).
    message: round.message,
    sign_session_id: round.sign_session_id,
    server_commitments: round.server_commitments,
    sign_expires_at: round.expires_at,
    next_step: 'check the message, then frost_sign_complete with your share for these commitments (submit: true sends it)',
  };
}

/**
 * The message of a pay with commitments, built before its intent so that intent, message and
 * round commit together: only to a token account that exists (nothing to create, no setup fee),
 * under the id the intent will take. Null when the message must wait for confirm.
 */
async function earlyMessage(services: Services, wallet: { address: string }, to: Address, amount: bigint, q: Quote, reference: string | undefined) {
  if (q.setupFee !== 0n || !(await recipientAccountExists(services, to, services.config.usdcMint as Address))) return null;
  const transactionId = newId('transaction');
  const built = await buildMessage(services, wallet.address, { transactionId, toAddress: to, amount, fee: q.fee, createAccount: false, references: [], reference: reference ?? null, price: (estimate) => estimate });
  return { transactionId, fee: q.fee, built };
}

/**
 * pay with commitments: a pre_approved intent answers with its signing round too. The intent and
 * its idempotent answer (the intent alone: a replay opens no second round) are committed first,
 * so a round that cannot open now leaves the payment to confirm_payment, with the reason.
 */
async function withRound(services: Services, wallet: { wallet_id: string; address: string; server_key: Uint8Array }, view: Awaited<ReturnType<typeof txView>>, agent: PreparedRound | null) {
  // A payment that waits for the owner (or was refused) opens no session.
  if (!agent || view.status !== 'pre_approved') return view;
  try {
    return { ...view, ...(await confirmAndOpenRound(services, wallet, await ownTx(services, wallet.wallet_id, view.transaction_id), agent)) };
  } catch (err) {
    const reason = err instanceof AppError ? err : err instanceof ChainUnavailableError ? new AppError('SERVICE_UNAVAILABLE', 'The Solana RPC is unreachable; the message was not built.') : null;
    if (!reason) throw err;
    return { ...view, signing_error: reason.toEnvelope().error, next_step: 'the intent exists: finish it with confirm_payment (with commitments) once the signing_error is resolved' };
  }
}

const TYPE_FILTERS: Record<string, { types?: TxType[]; direction?: 'in' | 'out'; withFee?: boolean }> = {
  payment_out: { types: ['payment'], direction: 'out' },
  payment_in: { types: ['payment'], direction: 'in' },
  deposit: { types: ['deposit'] },
  withdrawal: { types: ['withdrawal'] },
  x402: { types: ['x402'] },
  fee: { direction: 'out', withFee: true },
  in: { direction: 'in' },
  out: { direction: 'out' },
};

// x402 purchases sign through x402_confirm / x402_sign_complete and settle through the seller, never here.
const SIGNABLE_TYPES: readonly TxType[] = ['payment', 'withdrawal'];
const CANCELLABLE_TYPES: readonly TxType[] = ['payment', 'withdrawal', 'x402'];

export const paymentActions = implement(PAYMENTS, {
  lookup: async (ctx, p) => {
    const me = await callerWallet(ctx);
    const raw = p.username.trim();
    const entry = await findByUsername(ctx.services.db, raw.toLowerCase());
    if (entry) return { found: true, type: entry.kind, username: entry.username, name: entry.name, address: entry.address, is_self: entry.address === me.address };
    if (isSolanaAddress(raw)) return { found: true, type: 'address', username: null, name: null, address: raw, is_self: raw === me.address };
    return { found: false, type: null, username: raw, name: null, address: null, is_self: false };
  },

  can_i_afford: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const recipient = await resolveRecipient(ctx.services.db, wallet, p.to);
    const amount = amountParam(ctx.services, '/amount', p.amount);
    const q = await setupHeldQuote(ctx.services, wallet.wallet_id, recipient.address, await quote(ctx.services, wallet.address as Address, recipient.address, amount, 'payment'));
    let funds: { ok: true } | { ok: false; reason: string; details: Record<string, unknown> } = { ok: true };
    try {
      await assertAffordable(ctx.services, wallet, q);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      funds = { ok: false, reason: err.message, details: err.details };
    }
    const decision = await decideIntent(ctx.services, { wallet, category: recipient.category, recipient, quote: q }, ctx.services.now());
    return {
      can_pay: funds.ok && decision.outcome !== 'rejected',
      will_auto_approve: funds.ok && decision.outcome === 'pre_approved',
      outcome: funds.ok ? decision.outcome : 'insufficient_funds',
      reason: funds.ok ? decision.reason : funds.reason,
      rule: funds.ok ? decision.rule : 'balance',
      balance: toUsdcNumber(q.balance),
      amount: toUsdcNumber(amount),
      fee: toUsdcNumber(q.fee + q.setupFee),
      fee_breakdown: { platform_fee: toUsdcNumber(q.fee), account_setup_fee: toUsdcNumber(q.setupFee) },
      total: toUsdcNumber(q.total),
      to: recipient.label,
      to_address: recipient.address,
      ...(funds.ok ? {} : funds.details),
    };
  },

  pay: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    // Malformed commitments are refused before anything is created; the server's round is ready with them.
    const agent = p.commitments === undefined ? null : await prepareRound(ctx.services, wallet.wallet_id, wallet.server_key, p.commitments);
    // A paylink names the payee, the amount (unless open) and the reference (src/earning/agent-pay.ts).
    if (p.payment_request_id !== undefined) return withRound(ctx.services, wallet, await payPaylink(ctx, wallet, { ...p, payment_request_id: p.payment_request_id }), agent);
    if (p.to === undefined) throw invalid('/to', 'is required (or payment_request_id)', 'Send to (a username or Solana address) and amount.');
    if (p.amount === undefined) throw invalid('/amount', 'is required', 'Send amount as a decimal USDC value, e.g. 12.5.');
    const recipient = await resolveRecipient(ctx.services.db, wallet, p.to);
    const amount = amountParam(ctx.services, '/amount', p.amount);
    // A merchant reference names one order: refused while another payment holds it (checked again
    // inside the write transaction, so two concurrent pays cannot both pass).
    const checkReference = async () => {
      if (recipient.merchantId && p.reference !== undefined) {
        await assertReferenceFree(ctx.services.db, ctx.services.now().getTime(), { payerWalletId: wallet.wallet_id, merchantId: recipient.merchantId, reference: p.reference, amount });
      }
    };
    await checkReference();
    const q = await quote(ctx.services, wallet.address as Address, recipient.address, amount, 'payment');
    const early = agent ? await earlyMessage(ctx.services, wallet, recipient.address, amount, q, p.reference) : null;
    let round: SignInitResult | null = null;
    // The quote and the message were awaited: the write transaction takes a later turn, in one
    // commit with the other writes due then (src/db/write-batch.ts).
    const tx = await batchedWrite(ctx.services.db, async () => {
      await checkReference();
      const row = await createIntent(ctx.services, { wallet, type: 'payment', category: recipient.category, recipient, quote: q, note: p.note, reference: p.reference, idempotencyKey: ctx.idempotency?.key, transactionId: early?.transactionId });
      // A body run again (PostgreSQL retries a transaction whole) must not answer a round its rolled-back attempt opened.
      round = null;
      // The idempotent answer is the intent alone: a replay opens no second round.
      await ctx.idempotency?.record(txView(row));
      // The fast path in one commit: the intent, its message and the round (guard rails were decided just now, in this transaction).
      if (!early || !agent || row.status !== 'pre_approved' || row.fee !== early.fee || row.setup_fee !== 0n) return row;
      await storeMessage(ctx.services, row.transaction_id, early.built);
      const stored = (await getTx(ctx.services.db, row.transaction_id))!;
      round = await recordRound(ctx.services, agent, stored);
      return stored;
    }, payLocks(wallet.wallet_id, recipient.address, recipient.merchantId ? p.reference : undefined));
    crashPoint('intent_committed');
    if (round) return withOpenRound({ ...txView(tx), ...(await confirmAnswer(ctx.services, tx)) }, round);
    return withRound(ctx.services, wallet, txView(tx), agent);
  },

  confirm_payment: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const tx = await ownTx(ctx.services, wallet.wallet_id, p.transaction_id);
    const agent = p.commitments === undefined ? null : await prepareRound(ctx.services, wallet.wallet_id, wallet.server_key, p.commitments);
    return agent ? await confirmAndOpenRound(ctx.services, wallet, tx, agent) : confirmTx(ctx.services, wallet.address, tx);
  },

  frost_sign_init: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const tx = await ownTx(ctx.services, wallet.wallet_id, p.transaction_id, SIGNABLE_TYPES);
    if (tx.status === 'awaiting_approval' || tx.status === 'completed' || tx.status === 'expired') assertConfirmable(tx);
    await applyRecheck(ctx.services, tx);
    return { transaction_id: tx.transaction_id, ...(await startSigning(ctx.services, tx, wallet.server_key, p.commitments)) };
  },

  frost_sign_complete: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const tx = await ownTx(ctx.services, wallet.wallet_id, p.transaction_id, SIGNABLE_TYPES);
    const { fresh, ...result } = await completeSigning(ctx.services, tx.transaction_id, wallet.address, wallet.server_key, p.signature_share, {
      sessionId: p.sign_session_id,
      recheck: async (current) => {
        // Inside the signing transaction: a paylink paid meanwhile (by Solana Pay) is never paid again.
        const closed = await paylinkClosed(ctx.services, current);
        if (closed) return closed;
        // A paylink or an order is held from signing on: the first of two payers to sign it pays it.
        const taken = (await paylinkTaken(ctx.services, current)) ?? (await referenceTaken(ctx.services.db, ctx.services.now().getTime(), current));
        if (taken) return taken;
        const created = await accountCreatedElsewhere(ctx.services, current);
        if (created) return created;
        return await refuseUnlessRailsAllow(ctx.services, current);
      },
    });
    crashPoint('signed_stored');
    if (!p.submit) return { ...result, next_step: 'send it with submit_signed_tx (wait=true to wait for the chain)' };
    // The fast path: the stored signed bytes are sent exactly as submit_signed_tx sends them; a first
    // send only when this call signed them (a retry of this call may follow an earlier send).
    return txView(await submit(ctx.services, await ownTx(ctx.services, wallet.wallet_id, tx.transaction_id, SIGNABLE_TYPES), p.wait ? 30_000 : 0, { firstSend: fresh }));
  },

  submit_signed_tx: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const tx = await ownTx(ctx.services, wallet.wallet_id, p.transaction_id, SIGNABLE_TYPES);
    const done = await submit(ctx.services, tx, p.wait ? 30_000 : 0);
    return txView(done);
  },

  list_payments: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const { items, total } = await listTxs(ctx.services.db, { walletId: wallet.wallet_id, types: ['payment'], direction: 'out', statuses: p.status ? [p.status] : undefined, limit, offset });
    return { items: items.map(txView), total, limit, offset };
  },

  cancel_payment: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const tx = await ownTx(ctx.services, wallet.wallet_id, p.transaction_id, CANCELLABLE_TYPES);
    const now = ctx.services.now().getTime();
    const cancelled = await ctx.services.db
      .transaction(async () => {
        if (!(await moveTx(ctx.services.db, tx.transaction_id, ['pre_approved', 'approved', 'awaiting_approval'], 'cancelled', now))) return false;
        if (tx.approval_id) await closeApproval(ctx.services.db, tx.approval_id, 'cancelled', now);
        await closeOpenSessions(ctx.services.db, tx.transaction_id);
        await appendEvent(ctx.services.db, { walletId: wallet.wallet_id, type: `${tx.type === 'withdrawal' ? 'withdrawal' : 'payment'}.cancelled`, data: { transaction_id: tx.transaction_id }, now });
        return true;
      });
    if (!cancelled) {
      if (tx.status === 'completed') throw new AppError('ALREADY_COMPLETED', 'This payment already completed and cannot be cancelled.');
      throw new AppError('INVALID_STATUS', `The payment is ${tx.status}; only pre_approved, approved or awaiting_approval payments can be cancelled.`, {
        howToFix: tx.status === 'pending' ? 'It is being sent to Solana; wait for its outcome.' : 'Nothing to cancel.',
      });
    }
    return txView(await ownTx(ctx.services, wallet.wallet_id, tx.transaction_id, CANCELLABLE_TYPES));
  },

  transactions: async (ctx, p) => {
    const wallet = await callerWallet(ctx);
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const filter = p.type ? TYPE_FILTERS[p.type]! : {};
    const { items, total } = await listTxs(ctx.services.db, { walletId: wallet.wallet_id, ...filter, limit, offset });
    return { items: items.map(txView), total, limit, offset };
  },

  events: async (ctx, p) => readFeed(ctx.services, { kind: 'wallet', id: (await callerWallet(ctx)).wallet_id }, p),

  mark_read: async (ctx, p) => await markFeedRead(ctx.services, { kind: 'wallet', id: (await callerWallet(ctx)).wallet_id }, p),
});
