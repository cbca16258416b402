/**
 * How paylinks get paid (DESIGN §8).
 *
 * Humans pay with any Solana Pay wallet: the transaction credits the payee's USDC token account
 * and carries the paylink's reference key as a read-only account. The deposit watch
 * (src/jobs/deposits.ts) sees the payee's account move and hands each transaction that carries a
 * watched reference key to `judgeReferencedTransfer`, so paylinks cost no calls of their own while
 * nothing happens. What the watch cannot see — a payment in another token, or to another account,
 * while the checkout page is open — is found by a scan of the reference key itself, which only an
 * open checkout page asks for (`nudgeScan`), rate-bounded. Each landed signature is judged once
 * (`judgePayment`: USDC, to the payee's token account, enough, in time) and the outcome is written
 * in one ledger transaction: the paylink marked paid, or a rejection row with its reason.
 *
 * Ledger, and why nothing is counted twice: USDC that reaches a wallet payee's token account
 * through a transaction carrying a watched reference key is recorded HERE as an incoming `payment`
 * (paid or not), with `payment_request_id`, never as a deposit; every writer checks `hasSignature`
 * inside its write transaction, backed by the unique index on (signature, wallet_id). A
 * transaction with an unwatched reference (a paylink closed for more than LATE_WINDOW_MS) is an
 * ordinary deposit. A merchant payee has no ledger: its paylink row is the record (merchant verify,
 * history and balance read it), and its events go to the merchant's feed.
 *
 * Agents pay with `pay {payment_request_id}`: their payment is our own outgoing transaction (the
 * scan skips it) and `recordAgentPaylinkPayment` marks the paylink paid when it completes, in the
 * completion's transaction.
 */
import type { Address } from '@solana/kit';
import { appendEvent } from '../db/events.ts';
import {
  expiredPaylinks,
  expirePaylink,
  getPaylink,
  hasRejection,
  incomingTxId,
  insertRejection,
  markPaylinkPaid,
  payeeKeyOf,
  setScanCursor,
  watchedPaylinkFor,
  type PaylinkRow,
  type RejectionReason,
} from '../db/paylinks.ts';
import { hasSignature, insertTx, isOwnOutgoing, moveTx, unsignedPaylinkPayments, type TxRow } from '../db/transactions.ts';
import { closeApproval } from '../db/approvals.ts';
import { closeOpenSessions } from '../db/sign-sessions.ts';
import { forgetBalance } from '../payments/balance-cache.ts';
import { signaturesSince } from '../solana/history.ts';
import { inBackground } from '../solana/rpc-priority.ts';
import { getWallet } from '../db/wallets.ts';
import { getMerchant } from '../db/merchants.ts';
import { paylinkClaims, signReceipt } from '../evidence/receipts.ts';
import { newId } from '../contract/ids.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { usdcAta } from '../solana/ata.ts';
import type { TokenTransfers } from '../solana/port.ts';
import type { Services } from '../services.ts';
import { appendPayeeEvent, payeeOfRow } from './payee.ts';
import { judgePayment, REJECTION_TEXT } from './rules.ts';

/** Closed paylinks stay watched this long, so late, duplicate and post-cancel payments are recorded against them. */
export const LATE_WINDOW_MS = 24 * 3_600_000;
/** pay_status scans one paylink's reference key at most this often... */
const NUDGE_MS = 5_000;
/** ...and all open checkout pages together at most this often: a page left open costs the provider little. */
const NUDGE_GLOBAL_MS = 500;

const scanning = new Set<string>();
const nudged = new Map<string, number>();
let lastNudge = 0;

/**
 * Called by the deposit watch for a landed transaction that credited `payee`'s token account:
 * when it carries the reference key of a watched paylink of that payee, the paylink judges it (in a
 * write transaction of its own) and true is returned; otherwise false, and it is the watch's.
 */
export async function judgeReferencedTransfer(services: Services, payee: { address: string; tokenAccount: string }, signature: string, transfers: TokenTransfers): Promise<boolean> {
  const requestId = await watchedPaylinkFor(services.db, payee.address, transfers.accountKeys, services.now().getTime() - LATE_WINDOW_MS);
  if (requestId === null) return false;
  if (transfers.err === null) await services.db.transaction(async () => await applyTransfer(services, requestId, signature, transfers, payee));
  return true;
}

/**
 * Records USDC credited to a wallet payee by a reference-carrying transaction, once; returns its
 * ledger id. A merchant has no ledger: what its paylinks received is read from the paylinks.
 */
async function recordIncoming(services: Services, row: PaylinkRow, signature: string, amount: bigint, payer: string | null, now: number): Promise<string | null> {
  const walletId = row.wallet_id;
  if (walletId === null) return null;
  const existing = await incomingTxId(services.db, walletId, signature);
  if (existing !== null || (await hasSignature(services.db, walletId, signature))) return existing;
  forgetBalance((await getWallet(services.db, walletId))?.address);
  const id = newId('transaction');
  await insertTx(services.db, {
    transaction_id: id,
    wallet_id: walletId,
    type: 'payment',
    direction: 'in',
    status: 'completed',
    amount,
    counterparty: payer,
    reference: row.reference,
    payment_request_id: row.request_id,
    signature,
    completed_at: now,
    now,
  });
  await appendEvent(services.db, {
    walletId,
    type: 'payment.received',
    data: { transaction_id: id, amount: toUsdcNumber(amount), from: payer, signature, payment_request_id: row.request_id, reference: row.reference, kind: 'paylink' },
    now,
  });
  return id;
}

async function recordRejection(services: Services, row: PaylinkRow, r: { signature: string; reason: RejectionReason; amount: bigint | null; mint: string | null; payer: string | null }, now: number): Promise<void> {
  if (!(await insertRejection(services.db, { request_id: row.request_id, ...r, now }))) return;
  await appendPayeeEvent(
    services.db,
    payeeKeyOf(row),
    'payment_request.rejected_payment',
    {
      request_id: row.request_id,
      signature: r.signature,
      reason: r.reason,
      explanation: REJECTION_TEXT[r.reason],
      amount: r.amount !== null && r.mint === services.config.usdcMint ? toUsdcNumber(r.amount) : null,
      raw_amount: r.amount?.toString() ?? null,
      mint: r.mint,
      payer: r.payer,
    },
    now,
  );
}

/** Judges one landed transaction for the paylink and writes the outcome; call inside the write transaction. */
async function applyTransfer(services: Services, requestId: string, signature: string, transfers: TokenTransfers, payee: { address: string; tokenAccount: string }): Promise<void> {
  const now = services.now().getTime();
  const row = await getPaylink(services.db, requestId);
  if (!row || row.signature === signature || (await hasRejection(services.db, requestId, signature))) return;
  const mint = services.config.usdcMint;
  const verdict = judgePayment(
    { status: row.status, amount: row.amount, expiresAt: Number(row.expires_at) },
    transfers,
    { usdcMint: mint, payee: payee.address, payeeTokenAccount: payee.tokenAccount, nowMs: now },
  );
  const credited = transfers.deltas.find((d) => d.account === payee.tokenAccount && d.mint === mint && d.delta > 0n);
  const payer = verdict.payer;
  const txId = credited ? await recordIncoming(services, row, signature, credited.delta, payer, now) : null;
  if (verdict.kind === 'paid') {
    if (await markPaylinkPaid(services.db, requestId, [verdict.from], { amount: verdict.amount, payer, via: 'solana_pay', signature, transactionId: txId, now })) {
      await releaseOtherPayers(services, requestId, now);
      await appendPayeeEvent(
        services.db,
        payeeKeyOf(row),
        'payment_request.paid',
        { request_id: requestId, short_code: row.short_code, amount: toUsdcNumber(verdict.amount), payer, signature, transaction_id: txId, via: 'solana_pay', reference: row.reference, ...(await merchantReceipt(services, requestId)) },
        now,
      );
      return;
    }
    await recordRejection(services, row, { signature, reason: 'already_paid', amount: verdict.amount, mint, payer }, now);
    return;
  }
  await recordRejection(services, row, { signature, reason: verdict.reason, amount: verdict.amount, mint: verdict.mint, payer }, now);
}

/** A merchant payee's signed receipt of its paylink just paid (its webhook carries it); nothing for a wallet payee. */
async function merchantReceipt(services: Services, requestId: string): Promise<{ receipt?: string }> {
  const link = await getPaylink(services.db, requestId);
  const merchant = link?.merchant_id ? await getMerchant(services.db, link.merchant_id) : null;
  if (!link || !merchant) return {};
  return { receipt: signReceipt(services, paylinkClaims(services, link, { merchant_id: merchant.merchant_id, username: merchant.username, address: merchant.payout_address }, null)) };
}

/**
 * Looks for new transactions carrying the paylink's reference key and judges each once, oldest
 * first; the cursor only moves past what was judged. Concurrent calls for one paylink do nothing.
 * Runs in the background: the checkout page's poll must not take an agent's place in the RPC budget.
 */
export function scanPaylink(services: Services, requestId: string): Promise<void> {
  return inBackground(() => scanReference(services, requestId));
}

async function scanReference(services: Services, requestId: string): Promise<void> {
  if (scanning.has(requestId)) return;
  scanning.add(requestId);
  try {
    const row = await getPaylink(services.db, requestId);
    const payeeRow = row ? await payeeOfRow(services.db, row) : null;
    if (!row || !payeeRow) return;
    const payee = { address: payeeRow.address, tokenAccount: await usdcAta(payeeRow.address as Address, services.config.usdcMint as Address) };
    const sigs = await signaturesSince(services.chain, row.reference_key as Address, row.scan_cursor ?? undefined);
    for (const s of [...sigs].reverse()) {
      // Failed transactions moved nothing; our own agent payments are recorded when they complete.
      if (s.err === null && s.signature !== row.signature && !(await isOwnOutgoing(services.db, s.signature))) {
        const transfers = await services.chain.getTokenTransfersOf(s.signature);
        if (!transfers) break; // not visible yet: judged on a later pass
        if (transfers.err === null) await services.db.transaction(async () => await applyTransfer(services, requestId, s.signature, transfers, payee));
      }
      await services.db.transaction(async () => await setScanCursor(services.db, requestId, s.signature));
    }
  } finally {
    scanning.delete(requestId);
  }
}

/**
 * What pay_status calls: a scan of this paylink's reference key, at most every NUDGE_MS per paylink
 * and NUDGE_GLOBAL_MS over all, so an open checkout page also learns of a payment the deposit watch
 * cannot see (another token, another account) and tells the payer. Never throws.
 */
export async function nudgeScan(services: Services, row: PaylinkRow): Promise<void> {
  const now = Date.now();
  if (row.status !== 'open' || (nudged.get(row.request_id) ?? 0) > now - NUDGE_MS || lastNudge > now - NUDGE_GLOBAL_MS) return;
  nudged.set(row.request_id, now);
  lastNudge = now;
  if (nudged.size > 10_000) for (const [k, at] of nudged) if (at < now - NUDGE_MS) nudged.delete(k);
  try {
    await scanPaylink(services, row.request_id);
  } catch (err) {
    services.log.debug('paylink nudge failed', { request_id: row.request_id, error: (err as Error).message });
  }
}

/** One pass of the expiry: open paylinks past expires_at become expired, each with one event. */
export async function expirePaylinks(services: Services): Promise<number> {
  const now = services.now().getTime();
  let expired = 0;
  for (const row of (await expiredPaylinks(services.db, now))) {
    await services.db
      .transaction(async () => {
        if (!(await expirePaylink(services.db, row.request_id, now))) return;
        await appendPayeeEvent(services.db, payeeKeyOf(row), 'payment_request.expired', { request_id: row.request_id }, now);
        expired++;
      });
  }
  return expired;
}

/**
 * Called by completeTx (src/payments/settle.ts) inside its write transaction when an agent's
 * payment with a payment_request_id landed: marks the paylink paid by that payment, once. A
 * payment created before the expiry still pays an expired paylink; one that reaches a cancelled
 * or already paid paylink (or pays too little) is recorded as a rejection the payee sees.
 */
export async function recordAgentPaylinkPayment(services: Services, tx: TxRow, now: number): Promise<void> {
  if (tx.payment_request_id === null || tx.signature === null || tx.direction !== 'out') return;
  const row = await getPaylink(services.db, tx.payment_request_id);
  if (!row) return;
  const payer = (await getWallet(services.db, tx.wallet_id))?.username ?? null;
  // A wallet payee's incoming ledger row; a merchant has none, so the agent's payment names it.
  const inTx = row.wallet_id !== null ? await incomingTxId(services.db, row.wallet_id, tx.signature) : tx.transaction_id;
  let reason: RejectionReason | null = null;
  if (row.status === 'cancelled') reason = 'cancelled';
  else if (row.status === 'paid') reason = 'already_paid';
  else if (Number(tx.created_at) > Number(row.expires_at)) reason = 'expired';
  else if (row.amount !== null && tx.amount < row.amount) reason = 'underpaid';
  if (reason === null && (await markPaylinkPaid(services.db, row.request_id, ['open', 'expired'], { amount: tx.amount, payer, via: 'wallet', signature: tx.signature, transactionId: inTx, now }))) {
    await releaseOtherPayers(services, row.request_id, now);
    await appendPayeeEvent(
      services.db,
      payeeKeyOf(row),
      'payment_request.paid',
      { request_id: row.request_id, short_code: row.short_code, amount: toUsdcNumber(tx.amount), payer, signature: tx.signature, transaction_id: inTx, via: 'wallet', reference: row.reference },
      now,
    );
    return;
  }
  await recordRejection(services, row, { signature: tx.signature, reason: reason ?? 'already_paid', amount: tx.amount, mint: services.config.usdcMint, payer }, now);
}

/**
 * Once a paylink is paid, every other payment of it not signed yet is rejected (already_paid), in
 * the same transaction: its payer's money and budget are no longer held for a paylink it cannot pay.
 */
async function releaseOtherPayers(services: Services, requestId: string, now: number): Promise<void> {
  for (const t of (await unsignedPaylinkPayments(services.db, requestId))) {
    if (!(await moveTx(services.db, t.transaction_id, ['pre_approved', 'approved', 'awaiting_approval'], 'rejected', now, { error: 'already_paid' }))) continue;
    if (t.approval_id) await closeApproval(services.db, t.approval_id, 'cancelled', now);
    await closeOpenSessions(services.db, t.transaction_id);
    await appendEvent(services.db, { walletId: t.wallet_id, type: 'payment.rejected', data: { transaction_id: t.transaction_id, rule: 'paylink', reason: 'already_paid', payment_request_id: requestId }, now });
  }
}
