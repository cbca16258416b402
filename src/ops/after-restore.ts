/**
 * The first start after `admin restore`: the ledger is as old as the backup, the chain is not.
 *   1. before the daemon answers anything (beginRestore), every open signing session and
 *      unfinished DKG run from backup time is closed (a restored nonce may have signed already; it
 *      must never sign a second message); then it serves reads while money actions wait
 *      (src/ops/restore-state.ts) for the rest (finishRestore):
 *   2. it waits until every transaction signed before now has landed or expired: the newest
 *      blockhash's lastValidBlockHeight bounds them all (bytes broadcast just before a crash, or a
 *      restored message signed after the backup, may still land until then),
 *   3. every transfer out of our wallets that landed after the backup is found on chain (signatures
 *      since each wallet's deposit-watch cursor) and recorded once through the confirmation path: an
 *      x402 purchase by the wallet's signature in its bytes (its memo is the seller's), a restored
 *      row by the transaction id in its memo, otherwise a recovered row under that id,
 *   4. what cannot be recovered (approvals decided after the backup whose payment did not land)
 *      goes to the log and audit log.
 * Incoming transfers stay with the deposit watcher, which runs after this.
 */
import { newId } from '../contract/ids.ts';
import { getBase58Decoder, getTransactionDecoder, type Address } from '@solana/kit';
import { attachLandedTransfer, allPendingApprovals, clearRestoredMarker, invalidateRestoredSigning, recipientOf, restoredMarker, unsettledOutgoing, unsettledPurchasesOf } from '../db/backup.ts';
import { decideApproval } from '../db/approvals.ts';
import { watchedPaylinkFor } from '../db/paylinks.ts';
import { forgetWatchedAmounts, watchCursor } from '../db/watch.ts';
import { allWalletAddresses } from '../db/wallets.ts';
import { appendAudit } from '../db/events.ts';
import { getTx, hasSignature, insertTx, setTxSigned } from '../db/transactions.ts';
import { confirmPending } from '../payments/settle.ts';
import { completeLandedPurchase } from '../x402/purchase.ts';
import { treasuryOf } from '../payments/message.ts';
import { usdcAta } from '../solana/ata.ts';
import { signaturesSince } from '../solana/history.ts';
import { memoOf } from '../solana/decode.ts';
import type { TokenTransfers } from '../solana/port.ts';
import type { Services } from '../services.ts';

export interface RestoreReconciliation {
  backupCreatedAt: string;
  signSessionsClosed: number;
  dkgSessionsClosed: number;
  /** Restored rows whose transfer landed after the backup. */
  settledFromChain: string[];
  /** Transfers of intents created after the backup, recorded under the id in their memo. */
  recoveredFromChain: string[];
  /** Approvals pending in the backup: a decision taken after it is lost. */
  unrecoverableApprovals: string[];
}

/** The transaction id our payment memos end with (`[reference ]tx_…`), and the reference before it. */
export function parsePaymentMemo(memo: string | null): { transactionId: string; reference: string | null } | null {
  if (!memo) return null;
  const parts = memo.trim().split(' ');
  const last = parts.at(-1)!;
  if (!/^tx_[0-9a-z]+$/.test(last)) return null;
  const reference = parts.slice(0, -1).join(' ');
  return { transactionId: last, reference: reference === '' ? null : reference };
}

/** Longest wait for the chain to pass a block height (a stalled cluster fails this try; the next one waits again). */
const HEIGHT_WAIT_MS = 10 * 60 * 1000;
/** How often the wait logs where it stands. */
const PROGRESS_EVERY_MS = 5_000;

async function untilHeightPasses(services: Services, height: bigint): Promise<void> {
  const deadline = Date.now() + HEIGHT_WAIT_MS;
  let logged = 0;
  for (;;) {
    const current = await services.chain.getBlockHeight();
    services.restore.blockHeight = current;
    if (current > height) return;
    if (Date.now() > deadline) throw new Error(`the chain did not pass block height ${height} within ${HEIGHT_WAIT_MS / 60_000} minutes`);
    if (Date.now() - logged >= PROGRESS_EVERY_MS) {
      logged = Date.now();
      services.log.info('restore: waiting for the chain', { until_block_height: height.toString(), block_height: current.toString(), blocks_to_go: Number(height - current + 1n) });
    }
    await Bun.sleep(500);
  }
}

/**
 * The part of the first start after a restore that runs before the daemon answers anything: every
 * signing session and DKG run of backup time is closed (a restored nonce may have signed already),
 * and money actions are held (services.restore) until `finishRestore`. Null when not restored.
 */
export async function beginRestore(services: Services): Promise<ClosedSessions | null> {
  const { db } = services;
  if (!(await restoredMarker(db))) return null;
  const closed = await db
    .transaction(async () => {
      await forgetWatchedAmounts(db);
      return await invalidateRestoredSigning(db);
    });
  services.restore = { active: true, untilBlockHeight: null, blockHeight: null };
  services.log.info('restore: serving reads; money actions wait until the ledger is reconciled with the chain', { sign_sessions_closed: closed.signSessions, dkg_sessions_closed: closed.dkgSessions });
  return closed;
}

type ClosedSessions = { signSessions: number; dkgSessions: number };

/**
 * The rest, while the daemon serves reads: waits until every transaction signed before now has
 * landed or expired, records what landed, then lets money actions through. A chain outage throws
 * (the caller tries again); the marker stays until it succeeds.
 */
export async function finishRestore(services: Services, closed: ClosedSessions): Promise<RestoreReconciliation> {
  const summary = await reconcileAfterRestore(services, closed);
  services.restore = { active: false, untilBlockHeight: null, blockHeight: null };
  if (!summary) throw new Error('no restored marker: finishRestore after beginRestore only');
  return summary;
}

/** Runs the reconciliation when the ledger carries the restored marker; null otherwise. A chain outage throws (start again later). */
export async function reconcileAfterRestore(services: Services, closedAtStart?: ClosedSessions): Promise<RestoreReconciliation | null> {
  const { db, log } = services;
  const marker = await restoredMarker(db);
  if (!marker) return null;
  const now = () => services.now().getTime();

  const closed =
    closedAtStart ??
    (await db
      .transaction(async () => {
        await forgetWatchedAmounts(db);
        return await invalidateRestoredSigning(db);
      }));
  const { lastValidBlockHeight } = await services.chain.getLatestBlockhash();
  services.restore.untilBlockHeight = lastValidBlockHeight;
  log.info('restore: waiting until every transaction signed before the restore has landed or expired', { until_block_height: lastValidBlockHeight.toString() });
  await untilHeightPasses(services, lastValidBlockHeight);
  const mint = services.config.usdcMint as Address;
  const treasury = treasuryOf(services);
  const wallets = await allWalletAddresses(db);
  const walletOfAta = new Map<string, string>();
  const addressOf = new Map<string, string>();
  for (const w of wallets) {
    walletOfAta.set(await usdcAta(w.address as Address, mint), w.wallet_id);
    addressOf.set(w.wallet_id, w.address);
  }
  const treasuryAta = await usdcAta(treasury, mint);

  const settledFromChain: string[] = [];
  const recoveredFromChain: string[] = [];
  const seen = new Set<string>();
  for (const w of wallets) {
    const ata = await usdcAta(w.address as Address, mint);
    // All of it: a transfer left unread here would never be recorded (the marker is cleared below).
    const sigs = await signaturesSince(services.chain, ata, (await watchCursor(db, w.address)) ?? undefined);
    for (const s of [...sigs].reverse()) {
      if (s.err !== null || seen.has(s.signature)) continue;
      seen.add(s.signature);
      const transfers = await services.chain.getTokenTransfersOf(s.signature);
      const out = transfers?.deltas.find((d) => d.mint === mint && d.delta < 0n && walletOfAta.has(d.account));
      if (!transfers || !out) continue;
      const senderId = walletOfAta.get(out.account)!;
      if (await hasSignature(db, senderId, s.signature)) continue;
      const wire = await services.chain.getTransactionWire(s.signature);
      if (!wire) continue;
      const purchase = await landedPurchase(db, senderId, addressOf.get(senderId)!, wire);
      if (purchase) {
        await completeLandedPurchase(services, purchase.fetch_id, s.signature);
        settledFromChain.push(purchase.transaction_id);
        log.info('restore: an x402 purchase that landed after the backup is recorded', { fetch_id: purchase.fetch_id, transaction_id: purchase.transaction_id, signature: s.signature });
        continue;
      }
      const memo = parsePaymentMemo(memoOf(wire));
      const restored = memo ? await unsettledOutgoing(db, memo.transactionId) : null;
      let txId: string;
      if (restored && restored.wallet_id === senderId) {
        txId = restored.transaction_id;
        const approvalId = restored.approval_id;
        await db.transaction(async () => {
          // It landed, so the owner approved it after the backup: record that decision before the completion.
          if (restored.status === 'awaiting_approval' && approvalId) await decideApproval(db, approvalId, 'approved', 'system:restore', now());
          await attachLandedTransfer(db, txId, wire, s.signature, now());
        });
        settledFromChain.push(txId);
      } else {
        txId = memo && !(await getTx(db, memo.transactionId)) ? memo.transactionId : newId('transaction');
        await db.transaction(async () => await recordRecovered(services, { txId, walletId: senderId, signature: s.signature, wire: wire, transfers, ata: out.account, treasuryAta, reference: memo?.reference ?? null, backupCreatedAt: marker.backup_created_at }));
        recoveredFromChain.push(txId);
      }
      await confirmPending(services);
      const after = await getTx(db, txId);
      log.info('restore: a transfer that landed after the backup is recorded', { transaction_id: txId, signature: s.signature, status: after?.status });
    }
  }

  // After the scan: an approval whose payment landed was evidently approved and is closed above.
  const approvals = await allPendingApprovals(db);
  await db.transaction(async () => {
    for (const a of approvals) {
      await appendAudit(db, {
        walletId: a.wallet_id,
        actor: 'system',
        kind: 'restore.approval_unrecoverable',
        data: { approval_id: a.approval_id, subject_id: a.subject_id, backup_created_at: marker.backup_created_at, reason: 'a decision taken after the backup is lost; the owner decides again' },
        now: now(),
      });
    }
    await clearRestoredMarker(db);
  });
  for (const a of approvals) {
    log.warn('restore: an approval pending in the backup may have been decided since; the owner must decide it again', { approval_id: a.approval_id, wallet_id: a.wallet_id, subject_id: a.subject_id });
  }

  const summary: RestoreReconciliation = {
    backupCreatedAt: marker.backup_created_at,
    signSessionsClosed: closed.signSessions,
    dkgSessionsClosed: closed.dkgSessions,
    settledFromChain,
    recoveredFromChain,
    unrecoverableApprovals: approvals.map((a) => a.approval_id),
  };
  log.warn('restore: ledger reconciled with the chain; wallets registered after the backup are not in this ledger (their server key shares are lost)', {
    backup_created_at: summary.backupCreatedAt,
    sign_sessions_closed: summary.signSessionsClosed,
    dkg_sessions_closed: summary.dkgSessionsClosed,
    settled_from_chain: settledFromChain.length,
    recovered_from_chain: recoveredFromChain.length,
    unrecoverable_approvals: summary.unrecoverableApprovals,
  });
  return summary;
}

/** The wallet's signature in transaction bytes, base58; null when its slot is empty or absent. */
function walletSignature(wire: Uint8Array, address: string): string | null {
  const signature = getTransactionDecoder().decode(wire).signatures[address as Address];
  return signature ? getBase58Decoder().decode(signature) : null;
}

/**
 * The restored x402 purchase whose bytes landed: the landed transaction carries the wallet's
 * signature of that purchase's exact message (the facilitator only adds the fee payer's).
 */
async function landedPurchase(db: Services['db'], walletId: string, address: string, wire: Uint8Array): Promise<{ fetch_id: string; transaction_id: string } | null> {
  const landed = walletSignature(wire, address);
  if (!landed) return null;
  for (const p of (await unsettledPurchasesOf(db, walletId))) {
    if (walletSignature(p.signed_tx, address) === landed) return { fetch_id: p.fetch_id, transaction_id: p.transaction_id };
  }
  return null;
}

/**
 * A transfer out of one of our wallets whose intent the backup does not hold: recorded as a
 * payment with what the chain shows (recipient, amount, platform fee), signed with the landed
 * bytes, so the confirmation pass completes it like any other. Inside a write transaction.
 */
async function recordRecovered(
  services: Services,
  r: { txId: string; walletId: string; signature: string; wire: Uint8Array; transfers: TokenTransfers; ata: string; treasuryAta: string; reference: string | null; backupCreatedAt: string },
): Promise<void> {
  const mint = services.config.usdcMint;
  const credits = r.transfers.deltas.filter((d) => d.mint === mint && d.delta > 0n);
  const fee = credits.find((d) => d.account === r.treasuryAta)?.delta ?? 0n;
  const to = credits.find((d) => d.account !== r.treasuryAta && d.account !== r.ata);
  const recipient = to ? await recipientOf(services.db, to.owner) : null;
  // A payment of a paylink carries its reference key: recorded with it, the completion marks the paylink paid.
  const paylink = to ? await watchedPaylinkFor(services.db, to.owner, r.transfers.accountKeys, 0) : null;
  const now = services.now().getTime();
  await insertTx(services.db, {
    transaction_id: r.txId,
    wallet_id: r.walletId,
    type: 'payment',
    direction: 'out',
    category: paylink !== null ? 'paylink' : recipient === null ? null : 'wallet_id' in recipient ? 'wallet' : 'merchant',
    status: 'pre_approved',
    amount: to?.delta ?? fee,
    fee: to ? fee : 0n,
    counterparty: recipient?.username ?? to?.owner ?? null,
    to_wallet_id: recipient && 'wallet_id' in recipient ? recipient.wallet_id : null,
    to_merchant_id: recipient && 'merchant_id' in recipient ? recipient.merchant_id : null,
    to_address: to?.owner ?? null,
    reference: r.reference,
    payment_request_id: paylink,
    decision_rule: 'restore',
    decision_reason: `landed on chain after the backup of ${r.backupCreatedAt}; recovered from the chain`,
    now,
  });
  await setTxSigned(services.db, r.txId, r.wire, r.signature, now);
  await appendAudit(services.db, { walletId: r.walletId, actor: 'system', kind: 'restore.recovered_from_chain', data: { transaction_id: r.txId, signature: r.signature }, now });
}
