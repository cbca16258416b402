/**
 * Sending signed transactions and recording their outcome (DESIGN §5). The signed bytes were
 * stored before the first broadcast; they are re-sent, never re-signed, while their blockhash is
 * valid. Only when the chain's block height has passed lastValidBlockHeight AND the signature is
 * unknown to a node view past that height may the transaction go back to confirmable for a new
 * message and a new signing round. Only a status at the configured commitment is an outcome.
 *
 * One look covers every pending transaction: the block height once, then all signatures in one
 * getSignatureStatuses call per 256. The confirmation job looks every ~2 s; agents waiting in
 * submit_signed_tx share a faster look (one per WAIT_TICK_MS however many wait), never a poll each.
 */
import { isSolanaError, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR } from '@solana/kit';
import { AppError } from '../errors.ts';
import { appendEvent } from '../db/events.ts';
import { getTx, hasSignature, insertTx, moveTx, pendingSignatures, pendingTxs, resetExpiredSigning, type TxRow } from '../db/transactions.ts';
import { getWallet, getWalletByAddress } from '../db/wallets.ts';
import { newId } from '../contract/ids.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { ChainRejectedError, ChainUnavailableError } from '../solana/errors.ts';
import type { SignatureStatus } from '../solana/port.ts';
import type { Services } from '../services.ts';
import { crashPoint } from '../crash-points.ts';
import { markWatchedMoved } from '../db/watch.ts';
import { recordMerchantPayment } from '../webhooks/outbox.ts';
import { recordAgentPaylinkPayment } from '../earning/scan.ts';
import { fulfilFromDeposit } from '../earning/funding.ts';
import { OUTCOME_COMMITS } from '../db/commit-count.ts';
import { nextTurn } from '../loop-turns.ts';
import { savepointSlice } from '../db/write-batch.ts';

const PREFIX: Record<string, string> = { payment: 'payment', withdrawal: 'withdrawal', x402: 'payment' };

/** The same signed bytes go out again at most this often while they wait to land. */
export const REBROADCAST_MS = 2_000;
/** How often the shared look runs while any agent waits in submit_signed_tx. */
export const WAIT_TICK_MS = 400;
/**
 * The shared look while agents wait: every WAIT_TICK_MS, or less often when solana.rpc_max_rps is
 * small, so that its two calls take at most half of the request budget.
 */
export function waitTickMs(maxRps: number): number {
  return maxRps > 0 ? Math.max(WAIT_TICK_MS, Math.ceil(2_000 / (maxRps * 0.5))) : WAIT_TICK_MS;
}

/** The first look for submitted bytes comes this soon, so concurrent submits still share it. */
export const FIRST_LOOK_MS = 20;
/** Signatures per getSignatureStatuses call (the RPC's cap). */
const STATUS_BATCH = 256;
/** Pending transactions looked at per pass, oldest first. */
const PASS_LIMIT = 2_560;

/** Per daemon: when each pending transaction's bytes last went out, the look in flight, the waiters. */
interface Watch {
  lastSent: Map<string, number>;
  /** The slot at which this process first saw the block height past a pending transaction's lastValidBlockHeight. */
  expiredAt: Map<string, bigint>;
  inFlight: Promise<void> | null;
  lastLookAt: number;
  waiters: number;
  wake: (() => void)[];
  looping: boolean;
  /** The outcomes-only look due FIRST_LOOK_MS after a submit, shared by the submits of that moment. */
  firstLook: Promise<void> | null;
}
const watches = new WeakMap<Services, Watch>();

function watchOf(services: Services): Watch {
  let w = watches.get(services);
  if (!w) {
    w = { lastSent: new Map(), expiredAt: new Map(), inFlight: null, lastLookAt: 0, waiters: 0, wake: [], looping: false, firstLook: null };
    watches.set(services, w);
  }
  return w;
}

/**
 * Broadcasts the stored bytes. Rejections that prove the bytes can never land mark it failed — on
 * the first send only: a re-send's failed preflight (the fee payer briefly short of SOL, say) does
 * not prove that an earlier send of the same bytes cannot still land, so expiry and absence decide.
 * Only the send made by the call that signed the bytes is a first send (`resend: false`).
 */
export async function broadcast(services: Services, tx: TxRow, opts: { resend: boolean }): Promise<void> {
  if (!tx.signed_tx) return;
  watchOf(services).lastSent.set(tx.transaction_id, Date.now());
  try {
    await services.chain.sendRawTransaction(tx.signed_tx);
    crashPoint('broadcast_sent');
  } catch (err) {
    if (err instanceof ChainRejectedError) {
      // Already processed: it landed; the status lookup records it. Blockhash not found: it may have
      // expired; expiry is decided by block height in confirmPending(), never by this error alone.
      if (err.kind === 'already_processed' || err.kind === 'blockhash_not_found') return;
      if (opts.resend && err.kind === 'simulation_failed') {
        services.log.warn('a re-send failed its preflight; the transaction stays pending until it lands or expires', { transaction_id: tx.transaction_id, reason: err.reason });
        return;
      }
      if (err.kind === 'simulation_failed' || err.kind === 'signature_failure') {
        await services.db.transaction(async () => await failTx(services, tx, `Solana refused the transaction: ${err.reason}`));
        return;
      }
      return;
    }
    throw err;
  }
}

async function failTx(services: Services, tx: TxRow, reason: string): Promise<void> {
  const now = services.now().getTime();
  if (!(await moveTx(services.db, tx.transaction_id, ['pending'], 'failed', now, { error: reason }))) return;
  await appendEvent(services.db, { walletId: tx.wallet_id, type: `${PREFIX[tx.type] ?? 'payment'}.failed`, data: { transaction_id: tx.transaction_id, error: reason }, now });
}

/** Records a landed transfer for the sender and, when the recipient is one of our wallets, for the recipient. */
async function completeTx(services: Services, tx: TxRow, slot: bigint): Promise<void> {
  const now = services.now().getTime();
  if (!(await moveTx(services.db, tx.transaction_id, ['pending'], 'completed', now, { completed_at: now }))) return;
  const from = (await getWallet(services.db, tx.wallet_id))?.address;
  if (from) await markWatchedMoved(services.db, from, now);
  const prefix = PREFIX[tx.type] ?? 'payment';
  await appendEvent(services.db, {
    walletId: tx.wallet_id,
    type: `${prefix}.completed`,
    // The slot puts the outcome on the chain for the decision log and its offline check.
    data: { transaction_id: tx.transaction_id, amount: toUsdcNumber(tx.amount), fee: toUsdcNumber(tx.fee + tx.setup_fee), to: tx.counterparty, signature: tx.signature, slot: Number(slot) },
    now,
  });
  // A merchant's payment.received event and its webhook message, in this same transaction.
  if (tx.to_merchant_id) await recordMerchantPayment(services, tx, now);
  await recordIncoming(services, tx, tx.signature, now);
  // A paylink paid by this payment is marked paid (once), in this same transaction.
  if (tx.payment_request_id) await recordAgentPaylinkPayment(services, tx, now);
}

/**
 * The recipient's side of a landed transfer to one of our wallets, however it was addressed
 * (a username, the wallet's address, a withdrawal, an x402 payTo, a merchant payout that is a
 * wallet): its incoming row, payment.received and the fund requests it covers. The deposit watch
 * skips our own outgoing signatures, so this is the only writer for them; a signature another
 * writer already recorded for the recipient is not recorded again (the unique index would
 * otherwise fail the whole completion). Call inside the completing transaction.
 */
export async function recordIncoming(services: Services, tx: TxRow, signature: string | null, now: number): Promise<void> {
  const toWalletId = tx.to_wallet_id ?? (tx.to_address ? ((await getWalletByAddress(services.db, tx.to_address))?.wallet_id ?? null) : null);
  if (!toWalletId || toWalletId === tx.wallet_id || (signature && (await hasSignature(services.db, toWalletId, signature)))) return;
  const sender = await getWallet(services.db, tx.wallet_id);
  const inId = newId('transaction');
  await insertTx(services.db, {
    transaction_id: inId,
    wallet_id: toWalletId,
    type: 'payment',
    direction: 'in',
    status: 'completed',
    amount: tx.amount,
    counterparty: sender?.username ?? sender?.address ?? null,
    note: tx.note,
    reference: tx.reference,
    payment_request_id: tx.payment_request_id,
    signature,
    completed_at: now,
    now,
  });
  await appendEvent(services.db, {
    walletId: toWalletId,
    type: 'payment.received',
    data: { transaction_id: inId, amount: toUsdcNumber(tx.amount), from: sender?.username ?? null, note: tx.note, reference: tx.reference, signature },
    now,
  });
  await fulfilFromDeposit(services, toWalletId, tx.amount, inId, now);
}

/** Whether `status` has reached the configured commitment. A null level is how older nodes report a rooted (finalized) status. */
function reached(status: SignatureStatus, commitment: 'confirmed' | 'finalized'): boolean {
  const level = status.confirmationStatus;
  if (level === null || level === 'finalized') return true;
  return commitment === 'confirmed' && level === 'confirmed';
}

type Seen = { status: SignatureStatus | null; contextSlot: bigint };

/** The statuses of `sigs`, 256 a call; a batch the provider refuses as too large is split in two. */
async function lookUp(services: Services, sigs: string[]): Promise<Seen[]> {
  const out: Seen[] = [];
  for (let i = 0; i < sigs.length; i += STATUS_BATCH) out.push(...(await lookUpBatch(services, sigs.slice(i, i + STATUS_BATCH))));
  return out;
}

async function lookUpBatch(services: Services, sigs: string[]): Promise<Seen[]> {
  try {
    const { contextSlot, statuses } = await services.chain.getSignatureStatusesAt(sigs);
    return statuses.map((status) => ({ status, contextSlot }));
  } catch (err) {
    if (sigs.length < 2 || !tooLarge(err)) throw err;
    const half = Math.ceil(sigs.length / 2);
    return [...(await lookUpBatch(services, sigs.slice(0, half))), ...(await lookUpBatch(services, sigs.slice(half)))];
  }
}

/** A provider's answer to a list longer than it takes: invalid params ("too many inputs") or HTTP 413. */
function tooLarge(err: unknown): boolean {
  const cause = err instanceof ChainUnavailableError ? err.cause : undefined;
  if (isSolanaError(cause, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS)) return true;
  return isSolanaError(cause, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR) && cause.context.statusCode === 413;
}

/**
 * One look at every pending transaction. The height is read FIRST, with the slot of the view that
 * reported it: a transaction that lands after that read shows in the statuses read after it, so it
 * can never be taken for expired. An absence counts only from a status answer whose context slot
 * is at or after the slot where this process first saw the height past the transaction's
 * lastValidBlockHeight: a lagging node (a load-balanced RPC answering from behind) may not know a
 * landed signature yet, and a view that old proves nothing. Once the lagging view catches up to
 * that slot, the absence counts, so a lasting lag delays a re-sign but never stalls it. A status below the configured commitment (`processed`) is
 * not an outcome: it is waited on, and re-sent like any other if it disappears. Bytes still valid
 * are re-sent when their last send is REBROADCAST_MS old; a transaction first seen by this process
 * (after a restart) waits one interval, so a restart does not re-send everything at once.
 */
export async function confirmPending(services: Services): Promise<void> {
  const w = watchOf(services);
  const txs = (await pendingTxs(services.db, PASS_LIMIT)).filter((t) => t.signature !== null && t.signed_tx !== null);
  const pendingIds = new Set(txs.map((t) => t.transaction_id));
  for (const map of [w.lastSent, w.expiredAt]) for (const id of map.keys()) if (!pendingIds.has(id)) map.delete(id);
  if (txs.length === 0) return;
  const tip = await services.chain.getBlockHeightAndSlot();
  const seen = await lookUp(services, txs.map((t) => t.signature!));
  w.lastLookAt = Date.now();
  // What landed or failed is recorded together first; the rest (expiry, re-sends) one by one.
  const recorded = await recordOutcomes(
    services,
    txs.flatMap((tx, i) => {
      const status = seen[i]!.status;
      return isOutcome(services, status) ? [{ tx, status }] : [];
    }),
  );
  for (const [i, tx] of txs.entries()) {
    if (recorded.has(tx.transaction_id)) continue;
    try {
      await record(services, tx, seen[i]!, tip);
    } catch (err) {
      if (err instanceof ChainUnavailableError) throw err;
      services.log.warn('confirmation check failed', { transaction_id: tx.transaction_id, error: (err as Error).message });
    }
  }
}

/** A status at the configured commitment: the transaction's outcome. */
function isOutcome(services: Services, status: SignatureStatus | null): status is SignatureStatus {
  return status !== null && reached(status, services.config.solana.commitment);
}

/** Records one outcome (failed or completed) in the caller's transaction. */
async function applyOutcome(services: Services, tx: TxRow, status: SignatureStatus): Promise<void> {
  if (status.err !== null) await failTx(services, tx, `the transaction failed on chain: ${JSON.stringify(status.err)}`);
  else await completeTx(services, tx, status.slot);
}

/** Records a status at the configured commitment as the transaction's outcome; false when it is not one yet. */
async function recordOutcome(services: Services, tx: TxRow, status: SignatureStatus | null): Promise<boolean> {
  if (!isOutcome(services, status)) return false;
  await recordOutcomes(services, [{ tx, status }]);
  return true;
}

/**
 * How long one transaction of recorded outcomes may hold the event loop before it commits and lets
 * waiting requests in. One look can find dozens of landed transfers, each ~0.4 ms to record (its
 * events, the recipient's side, the decision log): recorded in one go they held the loop for up to
 * 70 ms at 190 payments/s, and a ping arriving meanwhile waited for all of them.
 */
const OUTCOME_SLICE_MS = 2;

/**
 * Records the outcomes of one look in as few transactions as fit OUTCOME_SLICE_MS each (one commit,
 * one fsync, for as many as landed together), each row in its own savepoint (db/write-batch.ts
 * `savepointSlice`): a row that fails is logged and left pending for the next look, without rolling
 * back the others; a slice that does not commit fails the look, none of its rows recorded. Returns
 * the ids recorded.
 */
async function recordOutcomes(services: Services, outcomes: { tx: TxRow; status: SignatureStatus }[]): Promise<Set<string>> {
  const recorded = new Set<string>();
  if (outcomes.length === 0) return recorded;
  crashPoint('confirmation_seen');
  const { db } = services;
  for (let next = 0; next < outcomes.length; ) {
    // Each slice takes a turn: a request that arrived meanwhile runs first. A row recorded by another
    // look in the meantime is not recorded twice (applyOutcome moves only a pending row).
    await nextTurn();
    const from = next;
    const { results, failed } = await savepointSlice(
      db,
      OUTCOME_SLICE_MS,
      () => {
        if (next >= outcomes.length) return undefined;
        const { tx, status } = outcomes[next++]!;
        return async () => await applyOutcome(services, tx, status);
      },
      OUTCOME_COMMITS,
    );
    if (failed) throw failed.err;
    results.forEach((r, i) => {
      const { tx } = outcomes[from + i]!;
      if (r.ok) recorded.add(tx.transaction_id);
      else services.log.warn('recording an outcome failed; the next look tries again', { transaction_id: tx.transaction_id, error: (r.err as Error).message });
    });
  }
  crashPoint('completion_recorded');
  for (const id of recorded) watchOf(services).lastSent.delete(id);
  return recorded;
}

/**
 * A look that only records outcomes: the statuses of every pending transaction, no height, so no
 * expiry and no re-send. It is the first look after a submit, made at once: a transaction that
 * landed with its send (simnet, a quick cluster) is recorded without waiting a tick, for one call.
 */
async function outcomesOnly(services: Services): Promise<void> {
  // Ids and signatures only: most looks find few outcomes, and only those need their whole row.
  const pending = await pendingSignatures(services.db, PASS_LIMIT);
  if (pending.length === 0) return;
  const seen = await lookUp(services, pending.map((t) => t.signature));
  const outcomes: { tx: TxRow; status: SignatureStatus }[] = [];
  for (const [i, { transaction_id, signature }] of pending.entries()) {
    const status = seen[i]!.status;
    if (!isOutcome(services, status)) continue;
    // Read after the look: recorded only while still pending with the signature that was looked up.
    const tx = await getTx(services.db, transaction_id);
    if (tx?.status === 'pending' && tx.signature === signature) outcomes.push({ tx, status });
  }
  await recordOutcomes(services, outcomes);
}

async function record(services: Services, tx: TxRow, { status, contextSlot }: Seen, tip: { blockHeight: bigint; slot: bigint }): Promise<void> {
  const w = watchOf(services);
  if ((await recordOutcome(services, tx, status)) || status) return;
  const lastValid = tx.last_valid_block_height;
  if (lastValid !== null && tip.blockHeight > lastValid) {
    // Expired: these bytes can land no more, but a view that has not reached the slot where this
    // process saw the expiry (a lagging node) may not know they already landed. Wait for one that has.
    let expiredAt = w.expiredAt.get(tx.transaction_id);
    if (expiredAt === undefined) {
      expiredAt = tip.slot;
      w.expiredAt.set(tx.transaction_id, expiredAt);
    }
    if (contextSlot < expiredAt) return;
    // Expired AND absent: back to confirmable for a new message.
    const backTo = tx.approval_id ? 'approved' : 'pre_approved';
    const signature = tx.signature!;
    await services.db
      .transaction(async () => {
        if (!(await resetExpiredSigning(services.db, tx.transaction_id, signature, backTo, services.now().getTime()))) return;
        await appendEvent(services.db, {
          walletId: tx.wallet_id,
          type: `${PREFIX[tx.type] ?? 'payment'}.resign_required`,
          data: { transaction_id: tx.transaction_id, expired_signature: signature, status: backTo },
          now: services.now().getTime(),
        });
      });
    w.lastSent.delete(tx.transaction_id);
    w.expiredAt.delete(tx.transaction_id);
    return;
  }
  const last = w.lastSent.get(tx.transaction_id);
  if (last === undefined) w.lastSent.set(tx.transaction_id, Date.now());
  else if (Date.now() - last >= REBROADCAST_MS) {
    // A send that cannot get through must not stop the pass: the other transactions' outcomes are already read.
    await broadcast(services, tx, { resend: true }).catch((err: unknown) => {
      if (!(err instanceof ChainUnavailableError)) throw err;
      services.log.warn('re-send failed; tried again next pass', { transaction_id: tx.transaction_id, error: err.message });
    });
  }
}

/** The look in flight, or a new one: concurrent callers share one. */
function sharedLook(services: Services): Promise<void> {
  const w = watchOf(services);
  w.inFlight ??= confirmPending(services).finally(() => {
    w.inFlight = null;
  });
  return w.inFlight;
}

/**
 * The confirmation job's pass: skipped when a look ran less than `minGapMs` ago (agents waiting
 * in submit_signed_tx keep looking faster), else one shared look.
 */
export function confirmPendingPass(services: Services, minGapMs: number): Promise<void> {
  if (Date.now() - watchOf(services).lastLookAt < minGapMs) return Promise.resolve();
  return sharedLook(services);
}

/** An outcomes-only look FIRST_LOOK_MS from now, unless one is already due (submits of one moment share it); wakes the waiters. */
function scheduleFirstLook(services: Services): void {
  const w = watchOf(services);
  w.firstLook ??= (async () => {
    await Bun.sleep(FIRST_LOOK_MS);
    try {
      await outcomesOnly(services);
    } catch (err) {
      if (err instanceof ChainUnavailableError) services.log.debug('confirmation look: the chain did not answer', { error: err.message });
      else services.log.warn('confirmation look failed', { error: (err as Error).message });
    } finally {
      w.firstLook = null;
      wakeAll(w);
    }
  })();
}

/**
 * Wakes the waiters one per turn of the event loop: each reads its row and builds its answer, then
 * I/O already due (a ping, a read) is served before the next. Woken all at once, sixteen answers
 * were built back to back, and a ping arriving with them waited for all sixteen.
 */
function wakeAll(w: Watch): void {
  for (const wake of w.wake.splice(0)) void nextTurn().then(wake);
}

/** Runs the shared look every WAIT_TICK_MS while anyone waits, waking every waiter after each. */
function ensureWaitLoop(services: Services): void {
  const w = watchOf(services);
  if (w.looping) return;
  w.looping = true;
  void (async () => {
    try {
      while (w.waiters > 0) {
        await Bun.sleep(waitTickMs(services.config.rpcMaxRps));
        try {
          await sharedLook(services);
        } catch (err) {
          if (err instanceof ChainUnavailableError) services.log.debug('confirmation look: the chain did not answer', { error: err.message });
      else services.log.warn('confirmation look failed', { error: (err as Error).message });
        }
        wakeAll(w);
      }
    } finally {
      w.looping = false;
    }
  })();
}

/** Waits until the transaction leaves `pending` or `deadline` (ms since epoch) passes; returns the fresh row. */
async function waitForOutcome(services: Services, txId: string, deadline: number): Promise<TxRow | null> {
  const w = watchOf(services);
  w.waiters++;
  scheduleFirstLook(services);
  ensureWaitLoop(services);
  try {
    for (;;) {
      const row = await getTx(services.db, txId);
      if (!row || row.status !== 'pending' || Date.now() >= deadline) return row;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        w.wake.push(resolve);
        timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      });
      clearTimeout(timer);
    }
  } finally {
    w.waiters--;
  }
}

/**
 * submit_signed_tx: broadcast the stored bytes (idempotent) and optionally wait for the outcome.
 * Every send is a re-send unless the caller has just signed the bytes (`firstSend`): an earlier
 * call, another process before a restart, or the confirmation job may already have sent them, so
 * "call submit_signed_tx again" can never turn bytes that still land into a failed payment.
 */
export async function submit(services: Services, tx: TxRow, waitMs: number, opts: { firstSend: boolean } = { firstSend: false }): Promise<TxRow> {
  if (tx.status === 'completed' || tx.status === 'failed') return tx;
  if (tx.status !== 'pending' || !tx.signed_tx) {
    throw new AppError('INVALID_STATUS', `The transaction is ${tx.status} and has no signed bytes to send.`, { howToFix: 'Sign it first: confirm, then frost_sign_init and frost_sign_complete.' });
  }
  try {
    await broadcast(services, tx, { resend: !opts.firstSend });
  } catch (err) {
    if (err instanceof ChainUnavailableError) {
      throw new AppError('SERVICE_UNAVAILABLE', 'Solana is unreachable; the signed transaction is kept and will be re-sent.', {
        headers: { 'Retry-After': '5' },
        howToFix: 'Call submit_signed_tx again later; never sign this payment again — the same bytes are re-sent.',
      });
    }
    throw err;
  }
  return (await waitForOutcome(services, tx.transaction_id, Date.now() + waitMs)) ?? tx;
}
