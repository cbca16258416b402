/**
 * The owner + daemon sweep (DESIGN §4.1), the daemon's side: the agent's share is lost or the agent
 * is compromised, so the owner's kit (identifier 3) and the daemon's share (2) sign together. The
 * daemon co-signs only a message it builds itself: the wallet's whole USDC balance to the address
 * the owner named when announcing it, its own fee payer paying. The announcement revokes the
 * agent's API key, mails the owner and writes the audit log, and the signing waits
 * recovery.sweep_delay_seconds: a stolen mailbox plus a stolen kit cannot drain at once, and the
 * owner can cancel. The signed bytes go the way of every payment (stored, sent, confirmed once).
 */
import { apiGrant } from '../owner/passkeys.ts';
import { randomBytes } from 'node:crypto';
import type { Address } from '@solana/kit';
import { sha256 } from '@noble/hashes/sha2.js';
import { AppError, invalid } from '../errors.ts';
import { OWNER_SWEEP, SWEEP_MEMO } from '../contract/recovery-enroll.ts';
import { newId } from '../contract/ids.ts';
import { setWalletKeyHash } from '../db/credentials.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import { revokeAllExports } from '../db/exports.ts';
import { getOwner } from '../db/owners.ts';
import { currentEnrollment, getSweep, insertSweep, liveSweep, moveSweep, walletSweeps, type SweepRow } from '../db/recovery.ts';
import { closeOpenSessions, consumeNonces, getSignSession, insertSignSession } from '../db/sign-sessions.ts';
import { CONFIRMABLE, getTx, insertTx, moveTx, setTxMessage, setTxSigned, setUnsignedTxAmount, type TxRow, type TxStatus } from '../db/transactions.ts';
import { getWallet, type WalletRow } from '../db/wallets.ts';
import { walletKeyPackage } from '../frost/coordinator-dkg.ts';
import { AAD } from '../frost/aad.ts';
import { decodeSecretState, encodeSecretState } from '../frost/codec.ts';
import { SERVER_ID } from '../frost/ids.ts';
import { ed25519Sign } from '../frost/native-ed25519.ts';
import { commit } from '../frost/party.ts';
import { OWNER_ID, recoveryAggregate, recoverySignShare } from '../frost/recovery-share.ts';
import { open, seal } from '../frost/seal.ts';
import { Secret } from '../frost/secret.ts';
import type { SigningNonces } from '../frost/types.ts';
import { decodeCommitments, decodePublicPackage, decodeSignatureShare, encodeCommitments } from '../frost/wire.ts';
import { FrostWireError } from '../frost/errors.ts';
import { queueMail } from '../mail/outbox.ts';
import { sweepCancelUrl, validSweepCancelToken } from '../mail/sweep-cancel-link.ts';
import { currentPriorityFee } from '../payments/priority-fee.ts';
import { submit } from '../payments/settle.ts';
import { txView } from '../payments/views.ts';
import { usdcAta } from '../solana/ata.ts';
import { assembleSignedTransaction, buildUsdcTransfer, transactionSignature } from '../solana/transfer.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { ownerActor, type Via } from '../domain/owner-actor.ts';
import type { Services } from '../services.ts';
import { callerOwner, requireOwnerWallet } from './owner.ts';
import { implement } from './registry.ts';

const SESSION_TTL_MS = 2 * 60 * 1000;
const iso = (ms: bigint | number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** The wallet's sweep not cancelled and not completed, as the dashboard shows it; null when none. */
export async function openSweepOf(services: Services, walletId: string) {
  const s = await liveSweep(services.db, walletId);
  return s ? await sweepView(services, s) : null;
}

async function sweepView(services: Services, s: SweepRow) {
  const tx = s.transaction_id ? await getTx(services.db, s.transaction_id) : null;
  return {
    sweep_id: s.sweep_id,
    wallet_id: s.wallet_id,
    to_address: s.to_address,
    status: s.status,
    executes_at: iso(s.executes_at),
    // By the daemon's clock, which decides: the owner's machine may run behind or ahead of it.
    signable: s.status !== 'cancelled' && services.now().getTime() >= Number(s.executes_at) && !(tx && SIGNED.includes(tx.status)),
    created_at: iso(s.created_at),
    transaction: tx ? { transaction_id: tx.transaction_id, status: tx.status, amount: toUsdcNumber(tx.amount), signature: tx.signature } : null,
  };
}

async function ownSweep(services: Services, ownerId: string, sweepId: string): Promise<SweepRow> {
  const s = await getSweep(services.db, sweepId);
  if (!s || s.owner_id !== ownerId) throw new AppError('NOT_FOUND', 'Sweep not found among your wallets.', { howToFix: 'Use a sweep_id from recovery_sweeps.' });
  return s;
}

export async function startSweep(services: Services, ownerId: string, walletId: string, toAddress: string) {
  const wallet = await requireOwnerWallet(services, ownerId, walletId);
  if (toAddress === wallet.address) throw invalid('/to_address', 'is the wallet itself', 'Name the address the balance goes to.');
  const enrolled = await currentEnrollment(services.db, walletId);
  if (!enrolled) throw new AppError('INVALID_STATUS', 'The wallet has no enrolled recovery kit: the daemon co-signs a sweep only with one.', { howToFix: 'Enroll a kit first (agent-wallet owner recovery start).' });
  // Once the owner has a passkey, the API announces a sweep only under a grant signed on the dashboard for this address.
  const grant = await apiGrant(services, ownerId, { kind: 'recovery.sweep', owner_id: ownerId, wallet_id: walletId, to_address: toAddress });
  const now = services.now().getTime();
  const sweepId = newId('recoverySweep');
  const executesAt = now + services.config.recovery.sweep_delay_seconds * 1000;
  const owner = await getOwner(services.db, ownerId);
  await services.db
    .transaction(async () => {
      if (await liveSweep(services.db, walletId)) throw new AppError('INVALID_STATUS', 'A sweep of this wallet is already announced.', { howToFix: 'See recovery_sweeps; cancel it to announce another.' });
      await insertSweep(services.db, { sweep_id: sweepId, wallet_id: walletId, owner_id: ownerId, to_address: toAddress, executes_at: executesAt, now });
      // The agent may be the compromised party: its key stops working at once, and so do its .wlt
      // exports, which carry that key and the agent's share (as a rotation revokes them).
      await setWalletKeyHash(services.db, walletId, randomBytes(32));
      const revoked = await revokeAllExports(services.db, walletId, now);
      const data = { sweep_id: sweepId, to_address: toAddress, executes_at: iso(executesAt), kit_fingerprint: enrolled.fingerprint, revoked_exports: revoked };
      await appendAudit(services.db, { walletId, actor: ownerActor(ownerId, 'api'), kind: 'recovery.sweep_announced', data: { ...data, ...(grant ? { passkey: grant.evidence } : {}) }, now });
      await grant?.take();
      await appendEvent(services.db, { walletId, type: 'recovery.sweep_announced', data, now });
      if (owner) {
        const cancelUrl = sweepCancelUrl(services, sweepId);
        await queueMail(services, {
          kind: 'recovery',
          to: owner.email,
          subject: `A sweep of ${wallet.name} was announced`,
          body: `A sweep of the whole USDC balance of ${wallet.name} (${wallet.address}) to ${toAddress} was announced with your owner account and your recovery kit. The agent's API key and its .wlt exports were revoked. It can be signed from ${iso(executesAt)} on.\n\nIf this was not you, cancel it now:\n\n${cancelUrl}\n\nThe link opens a page with one button that cancels this sweep; it can do nothing else and does not sign you in. Or run agent-wallet owner recover cancel ${sweepId} (recovery_sweep_cancel). Then rotate your owner tokens and enroll a new kit after refreshing the key.`,
          links: [{ label: 'cancel the sweep', url: cancelUrl }],
        });
      }
    });
  return { ...(await sweepView(services, (await getSweep(services.db, sweepId))!)), next_step: `The agent's API key is revoked. Sign after ${iso(executesAt)} with agent-wallet owner recover sweep; cancel before then with recovery_sweep_cancel.` };
}

export async function cancelSweep(services: Services, ownerId: string, sweepId: string, via: Via) {
  await ownSweep(services, ownerId, sweepId);
  const now = services.now().getTime();
  await services.db
    .transaction(async () => {
      const s = (await getSweep(services.db, sweepId))!;
      const tx = s.transaction_id ? await getTx(services.db, s.transaction_id) : null;
      if (tx && SIGNED.includes(tx.status)) throw new AppError('INVALID_STATUS', `This sweep is signed and ${tx.status}; it cannot be cancelled.`, { howToFix: 'Read its outcome with recovery_sweeps.' });
      if (!(await moveSweep(services.db, sweepId, ['waiting', 'signing'], 'cancelled', now))) throw new AppError('INVALID_STATUS', `This sweep is ${s.status}.`, { howToFix: 'Nothing to cancel.' });
      if (tx) {
        await closeOpenSessions(services.db, tx.transaction_id);
        // Its unsigned transaction set the whole balance aside: released, so the wallet can spend again.
        await moveTx(services.db, tx.transaction_id, CONFIRMABLE, 'cancelled', now);
      }
      await appendAudit(services.db, { walletId: s.wallet_id, actor: ownerActor(ownerId, via), kind: 'recovery.sweep_cancelled', data: { sweep_id: sweepId }, now });
    });
  return await sweepView(services, (await getSweep(services.db, sweepId))!);
}

/** Why a mailed cancel link does nothing: not a link of ours, or the sweep is past cancelling. */
export type SweepLinkFailure = 'unknown' | 'cancelled' | 'signed';

/**
 * What a mailed cancel link points at (the sweep as the dashboard shows it, and the owner who
 * announced it, whom its page's POST cancels as), or why it does nothing; changes nothing.
 */
export async function sweepLinkInfo(
  services: Services,
  sweepId: string,
  token: string,
): Promise<{ ok: true; sweep: Awaited<ReturnType<typeof sweepView>>; wallet: WalletRow; ownerId: string } | { ok: false; reason: SweepLinkFailure; walletId: string | null }> {
  const s = validSweepCancelToken(services.masterKey, sweepId, token) ? await getSweep(services.db, sweepId) : null;
  const wallet = s ? await getWallet(services.db, s.wallet_id) : null;
  if (!s || !wallet) return { ok: false, reason: 'unknown', walletId: null };
  const view = await sweepView(services, s);
  if (s.status === 'cancelled') return { ok: false, reason: 'cancelled', walletId: s.wallet_id };
  if (view.transaction && SIGNED.includes(view.transaction.status as TxStatus)) return { ok: false, reason: 'signed', walletId: s.wallet_id };
  return { ok: true, sweep: view, wallet, ownerId: s.owner_id };
}

/** Transaction statuses of a sweep that is signed and sent or landed: never signed again nor cancelled. */
const SIGNED: readonly TxStatus[] = ['pending', 'completed'];

/**
 * The sweep's transaction a new round signs (unsigned, or back to confirmable after its bytes
 * expired); null when the round makes a new one: none yet, or the last one failed (nothing moved,
 * the delay is over, so the owner may try again once the cause is gone). A cancelled or signed
 * sweep is refused. Read again inside the round's write: concurrent rounds share one transaction.
 */
async function sweepTxToSign(services: Services, s: SweepRow): Promise<TxRow | null> {
  if (s.status === 'cancelled') throw new AppError('INVALID_STATUS', 'This sweep was cancelled.', { howToFix: 'Announce a new one with recovery_sweep_start.' });
  const tx = s.transaction_id ? await getTx(services.db, s.transaction_id) : null;
  if (tx && SIGNED.includes(tx.status)) throw new AppError('INVALID_STATUS', `The sweep is signed and ${tx.status}.`, { howToFix: 'Read its outcome with recovery_sweeps.' });
  return tx && CONFIRMABLE.includes(tx.status) ? tx : null;
}

/** After the delay: the message the daemon will co-sign, and a signing round with the owner's commitments. */
export async function signSweep(services: Services, ownerId: string, sweepId: string, commitmentsJson: unknown) {
  const s = await ownSweep(services, ownerId, sweepId);
  await sweepTxToSign(services, s);
  const now = services.now().getTime();
  if (now < Number(s.executes_at)) {
    throw new AppError('INVALID_STATUS', `This sweep may be signed from ${iso(s.executes_at)} on.`, { howToFix: 'Sign it after that time; cancel it meanwhile if you did not start it.', headers: { 'Retry-After': String(Math.ceil((Number(s.executes_at) - now) / 1000)) } });
  }
  let owner;
  try {
    owner = decodeCommitments(commitmentsJson, OWNER_ID, 'commitments');
  } catch (err) {
    if (err instanceof FrostWireError) throw invalid(`/${err.field.replaceAll('.', '/')}`, err.message.slice(err.field.length + 2), 'Send the commitments of your kit (identifier 3).');
    throw err;
  }
  const wallet = await requireOwnerWallet(services, ownerId, s.wallet_id);
  const mint = services.config.usdcMint as Address;
  const to = s.to_address as Address;
  const amount = await services.chain.getTokenBalance(wallet.address as Address, mint);
  if (amount <= 0n) throw new AppError('INVALID_STATUS', 'The wallet holds no USDC: nothing to sweep.', { howToFix: 'Nothing to do.' });
  const [blockhash, createRecipientAta, price] = await Promise.all([
    services.chain.getLatestBlockhash(),
    services.chain.tokenAccountExists(to, mint).then((e) => !e),
    currentPriorityFee(services, [await usdcAta(wallet.address as Address, mint), await usdcAta(to, mint)]),
  ]);
  const { messageBytes, lastValidBlockHeight } = await buildUsdcTransfer({
    wallet: wallet.address as Address, mint, recipientOwner: to, amount, fee: 0n, treasuryOwner: to, feePayer: services.feePayer.address, createRecipientAta, memo: SWEEP_MEMO, computeUnitPrice: price, blockhash,
  });
  const { nonces, commitments } = commit(walletKeyPackage(services.masterKey, wallet.wallet_id, wallet.server_key));
  const sessionId = newId('signSession');
  await services.db
    .transaction(async () => {
      const existing = await sweepTxToSign(services, (await getSweep(services.db, sweepId))!);
      const txId = existing?.transaction_id ?? newId('transaction');
      if (!existing) {
        await insertTx(services.db, {
          transaction_id: txId, wallet_id: wallet.wallet_id, type: 'withdrawal', direction: 'out', category: 'withdrawal', status: 'approved', amount,
          counterparty: to, to_address: to, note: SWEEP_MEMO, decision_rule: 'recovery_sweep', decision_reason: `owner sweep ${sweepId}`, now,
        });
      } else {
        await setUnsignedTxAmount(services.db, txId, amount, now);
      }
      await setTxMessage(services.db, txId, messageBytes, lastValidBlockHeight, now, price);
      await closeOpenSessions(services.db, txId);
      // The owner's commitments take the agent's column: the session's other signer.
      await insertSignSession(services.db, {
        sign_session_id: sessionId, transaction_id: txId, message_hash: sha256(messageBytes), agent_commitments: JSON.stringify(encodeCommitments(owner)),
        server_commitments: JSON.stringify(encodeCommitments(commitments)), nonces: seal(services.masterKey, encodeSecretState(nonces.reveal()), AAD.signNonces(sessionId)), now, expires_at: now + SESSION_TTL_MS,
      });
      await moveSweep(services.db, sweepId, ['waiting', 'signing'], 'signing', now, txId);
    });
  return { sweep_id: sweepId, sign_session_id: sessionId, server_commitments: encodeCommitments(commitments), message: Buffer.from(messageBytes).toString('base64'), amount: toUsdcNumber(amount), to_address: to, fee_payer: services.feePayer.address };
}

/** The owner's share: the daemon's own, the aggregate checked, the bytes stored and sent once. */
export async function completeSweep(services: Services, ownerId: string, sweepId: string, sessionId: string, shareJson: unknown) {
  const s = await ownSweep(services, ownerId, sweepId);
  let ownerShare: Uint8Array;
  try {
    ownerShare = decodeSignatureShare(shareJson, OWNER_ID, 'signature_share');
  } catch (err) {
    if (err instanceof FrostWireError) throw invalid('/signature_share', err.message, 'Send the share of your kit (identifier 3) for the message recovery_sweep_sign answered.');
    throw err;
  }
  const wallet = await requireOwnerWallet(services, ownerId, s.wallet_id);
  const now = services.now().getTime();
  const outcome = await services.db
    .transaction(async (): Promise<{ ok: true; txId: string } | { ok: false; error: AppError }> => {
      const session = await getSignSession(services.db, sessionId);
      const tx = s.transaction_id ? await getTx(services.db, s.transaction_id) : null;
      if (!session || !tx || session.transaction_id !== tx.transaction_id || s.status !== 'signing') return { ok: false, error: new AppError('NOT_FOUND', 'Signing session not found for this sweep.', { howToFix: 'Start a round with recovery_sweep_sign.' }) };
      if (tx.signed_tx) return { ok: false, error: new AppError('INVALID_STATUS', 'The sweep is already signed.', { howToFix: 'A signed message is never signed again: read its outcome with recovery_sweeps.' }) };
      if (session.status !== 'open' || !session.nonces || Number(session.expires_at) < now) return { ok: false, error: new AppError('INVALID_STATUS', 'This signing session is closed or expired.', { howToFix: 'Start a new round with recovery_sweep_sign.' }) };
      const message = tx.message!;
      const nonces = new Secret(decodeSecretState(open(services.masterKey, session.nonces, AAD.signNonces(sessionId))) as SigningNonces);
      // Burnt here whatever follows: these nonces never sign anything else.
      await consumeNonces(services.db, sessionId, 'used', ownerShare);
      const list = [decodeCommitments(JSON.parse(session.agent_commitments), OWNER_ID), decodeCommitments(JSON.parse(session.server_commitments), SERVER_ID)];
      const pub = decodePublicPackage(JSON.parse(wallet.public_package));
      let signature: Uint8Array;
      try {
        const serverShare = recoverySignShare(walletKeyPackage(services.masterKey, wallet.wallet_id, wallet.server_key), nonces, list, message);
        signature = recoveryAggregate(pub, list, message, { [OWNER_ID]: ownerShare, [SERVER_ID]: serverShare });
      } catch {
        return { ok: false, error: invalid('/signature_share', "does not verify for this message: not this wallet's kit, or a kit made before the key was refreshed", 'Nothing was signed or sent. Use the kit of this wallet as it is now (enroll again after a refresh).') };
      }
      const wire = assembleSignedTransaction(message, { [wallet.address]: signature, [services.feePayer.address]: ed25519Sign(message, services.feePayer.keypairBytes) });
      if (!(await setTxSigned(services.db, tx.transaction_id, wire, transactionSignature(wire), now))) return { ok: false, error: new AppError('INVALID_STATUS', 'The sweep changed while it was signed.', { howToFix: 'Start a new round with recovery_sweep_sign.' }) };
      await appendAudit(services.db, { walletId: wallet.wallet_id, actor: ownerActor(ownerId, 'api'), kind: 'recovery.sweep_signed', data: { sweep_id: sweepId, transaction_id: tx.transaction_id, amount: toUsdcNumber(tx.amount) }, now });
      return { ok: true, txId: tx.transaction_id };
    });
  if (!outcome.ok) throw outcome.error;
  const sent = await submit(services, (await getTx(services.db, outcome.txId))!, 30_000, { firstSend: true });
  return { sweep_id: sweepId, ...txView(sent) };
}

export const ownerSweepActions = implement(OWNER_SWEEP, {
  recovery_sweep_start: async (ctx, p) => await startSweep(ctx.services, callerOwner(ctx).ownerId, p.wallet_id, p.to_address),
  recovery_sweep_cancel: async (ctx, p) => await cancelSweep(ctx.services, callerOwner(ctx).ownerId, p.sweep_id, 'api'),
  recovery_sweeps: async (ctx, p) => {
    await requireOwnerWallet(ctx.services, callerOwner(ctx).ownerId, p.wallet_id);
    return { items: await Promise.all((await walletSweeps(ctx.services.db, p.wallet_id)).map((s) => sweepView(ctx.services, s))) };
  },
  recovery_sweep_sign: (ctx, p) => signSweep(ctx.services, callerOwner(ctx).ownerId, p.sweep_id, p.commitments),
  recovery_sweep_complete: (ctx, p) => completeSweep(ctx.services, callerOwner(ctx).ownerId, p.sweep_id, p.sign_session_id, p.signature_share),
});
