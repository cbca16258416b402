/**
 * The server side of a FROST signing round for a transaction the server built (DESIGN §4).
 *
 * frost_sign_init:     agent commitments → server commitments (server nonces sealed, single use)
 * frost_sign_complete: agent share → the server computes its own share, aggregates, verifies the
 *                      Ed25519 signature under the wallet address, adds the fee payer's signature
 *                      and stores the signed bytes, consuming the nonces in the same ledger
 *                      transaction that stores them (signing-ledger.ts, the port it keeps them through).
 *
 * The curve work runs on a worker thread (pool.ts, sign-jobs.ts) between two synchronous steps:
 * the session and the transaction are read and checked, the worker computes, and one write
 * transaction checks them again and stores the result. The server's share never leaves the
 * process except inside that stored signature; it is a pure function of the session row (its
 * message and both commitments are fixed there), so a share computed twice for one session — two
 * concurrent identical requests, or a crash before the store — is the same share: one message
 * yields at most one signature, never two landable transfers.
 */
import { sha256 } from '../domain/sha256.ts';
import { bytesToHex } from '@noble/hashes/utils.js';
import { addressBytes } from '../solana/address-codec.ts';
import { AppError, invalid } from '../errors.ts';
import { newId } from '../contract/ids.ts';
import { crashPoint } from '../crash-points.ts';
import { sameHash } from '../domain/api-keys.ts';
import { assembleSignedTransaction, signatureSlots, transactionSignature } from '../solana/transfer.ts';
import type { FeePayerKey } from '../secret-files.ts';
import { FrostProtocolError, FrostWireError } from './errors.ts';
import { AGENT_ID } from './ids.ts';
import { ed25519Sign } from './native-ed25519.ts';
import { frostPool } from './pool.ts';
import type { SignResult } from './sign-jobs.ts';
import type { RoundState, RoundStore, SignableTx, SignSession, SigningLedger } from './signing-ledger.ts';
import { decodeSignatureShare, type CommitmentsWire } from './wire.ts';
import { nextTurn } from '../loop-turns.ts';

/** A signing session lives 2 minutes. */
export const SIGN_SESSION_TTL_MS = 2 * 60 * 1000;

export interface SignDeps<Tx extends SignableTx = SignableTx> {
  signingLedger: SigningLedger<Tx>;
  masterKey: Uint8Array;
  feePayer: FeePayerKey;
  now: () => Date;
}

function wire(err: unknown, field: string): never {
  if (err instanceof FrostWireError) throw invalid(`/${err.field.replaceAll('.', '/')}`, err.message.slice(err.field.length + 2));
  if (err instanceof FrostProtocolError) throw invalid(field, err.message);
  throw err;
}

function signable(tx: SignableTx): Uint8Array {
  if (tx.signed_tx) throw new AppError('INVALID_STATUS', 'This transaction is already signed.', { howToFix: 'Submit it with submit_signed_tx; a signed message is never signed again.' });
  if (tx.status !== 'pre_approved' && tx.status !== 'approved') {
    throw new AppError('INVALID_STATUS', `The transaction is ${tx.status}; only pre_approved or approved transactions are signed.`, { howToFix: 'Check its status with list_payments.' });
  }
  if (!tx.message) throw new AppError('INVALID_STATUS', 'No message was built for this transaction yet.', { howToFix: 'Call confirm_payment (or confirm_withdrawal / x402_confirm) first.' });
  return tx.message;
}

export interface SignInitResult {
  sign_session_id: string;
  server_commitments: CommitmentsWire;
  message: string;
  expires_at: string;
}

/** The server's nonces for one round, committed and sealed, before the message is known; recorded once or dropped. */
export interface PreparedRound {
  id: string;
  agent: CommitmentsWire;
  server: CommitmentsWire;
  sealedNonces: Uint8Array;
}

/**
 * Checks the agent's round-one commitments (VALIDATION_ERROR naming the field) and commits the
 * server to fresh nonces for its round, on a worker thread. Nonces are independent of the message
 * they later sign, so the fast path prepares the round before the intent or its message exists.
 */
export async function prepareRound(deps: SignDeps, walletId: string, walletServerKey: Uint8Array, agentCommitmentsJson: unknown): Promise<PreparedRound> {
  const id = newId('signSession');
  const round = await frostPool().run({ kind: 'round', masterKey: deps.masterKey, walletId, serverKey: walletServerKey, sessionId: id, agent: agentCommitmentsJson }, walletId);
  if (!round.ok) throw invalid(round.field, round.message);
  return { id, agent: round.agent, server: round.server, sealedNonces: round.sealedNonces };
}

/** frost_sign_init: commits the server to a fresh nonce pair for the stored message of `tx` (as it is once the round is ready). */
export async function startSigning(deps: SignDeps, tx: SignableTx, walletServerKey: Uint8Array, agentCommitmentsJson: unknown): Promise<SignInitResult> {
  const round = await prepareRound(deps, tx.wallet_id, walletServerKey, agentCommitmentsJson);
  return await deps.signingLedger.openRound(tx.transaction_id, (current) => {
    if (!current) throw new AppError('NOT_FOUND', 'Transaction not found.');
    return roundFor(deps, round, current);
  });
}

/** The session a prepared round opens for the stored message of `tx`, and the answer for the agent. */
function roundFor(deps: SignDeps, round: PreparedRound, tx: SignableTx) {
  const message = signable(tx);
  const now = deps.now().getTime();
  const session = {
    sign_session_id: round.id,
    transaction_id: tx.transaction_id,
    message_hash: sha256(message),
    agent_commitments: JSON.stringify(round.agent),
    server_commitments: JSON.stringify(round.server),
    nonces: round.sealedNonces,
    now,
    expires_at: now + SIGN_SESSION_TTL_MS,
  };
  const answer: SignInitResult = { sign_session_id: round.id, server_commitments: round.server, message: Buffer.from(message).toString('base64'), expires_at: new Date(now + SIGN_SESSION_TTL_MS).toISOString() };
  return { session, answer };
}

/**
 * Records a prepared round for the stored message of `tx` (as read in the caller's write
 * transaction: the fast path records it in the same one that stores a new message).
 */
export async function recordRound(deps: SignDeps, round: PreparedRound, tx: SignableTx): Promise<SignInitResult> {
  const { session, answer } = roundFor(deps, round, tx);
  // A newer round supersedes older open ones: their nonces are destroyed unused.
  await deps.signingLedger.recordRound(session);
  return answer;
}

export interface SignCompleteResult {
  transaction_id: string;
  /** The transaction id; null while another party (an x402 facilitator) still has to sign as fee payer. */
  signature: string | null;
  status: string;
  /**
   * True only for the call that produced the signature: its bytes have never left the process, so
   * only its send is a first send. A retry that returns the stored result is not.
   */
  fresh: boolean;
}

function pickSession(tx: SignableTx, session: SignSession | null): SignSession {
  if (!session || session.transaction_id !== tx.transaction_id) {
    throw new AppError('NOT_FOUND', 'No signing session for this transaction.', { howToFix: 'Start one with frost_sign_init.' });
  }
  return session;
}

/** Where a completion stands: answered already, refused, or ready for the worker with this session and message. */
type Standing<Tx extends SignableTx> =
  | { kind: 'done'; result: SignCompleteResult }
  | { kind: 'refused'; error: AppError; burn?: SignSession }
  | { kind: 'sign'; tx: Tx; session: SignSession & { nonces: Uint8Array }; message: Uint8Array };

/** Checks the transaction and its session as read for a completion with `agentShare`. */
function standing<Tx extends SignableTx>(deps: SignDeps<Tx>, state: RoundState<Tx>, agentShare: Uint8Array): Standing<Tx> {
  const { tx } = state;
  if (!tx) return { kind: 'refused', error: new AppError('NOT_FOUND', 'Transaction not found.') };
  const session = pickSession(tx, state.session);
  if (session.status === 'used') {
    if (tx.signed_tx && session.agent_share && sameHash(session.agent_share, agentShare)) {
      return { kind: 'done', result: { transaction_id: tx.transaction_id, signature: tx.signature, status: tx.status, fresh: false } };
    }
    return { kind: 'refused', error: new AppError('INVALID_STATUS', 'This signing session is already complete.', { howToFix: 'A signed message is never signed again: submit it with submit_signed_tx.' }) };
  }
  if (session.status !== 'open' || !session.nonces || Number(session.expires_at) < deps.now().getTime()) {
    return { kind: 'refused', error: new AppError('INVALID_STATUS', 'This signing session is closed or expired.', { howToFix: 'Start a new round with frost_sign_init (sessions last 2 minutes).' }) };
  }
  const message = signable(tx);
  if (!sameHash(sha256(message), session.message_hash)) {
    return { kind: 'refused', error: new AppError('INVALID_STATUS', 'The transaction message changed since this session started.', { howToFix: 'Start a new round with frost_sign_init.' }), burn: session };
  }
  return { kind: 'sign', tx, session: session as SignSession & { nonces: Uint8Array }, message };
}

/** A completion's answer, decided inside its write transaction and thrown or returned after it. */
type Outcome = { ok: true; result: SignCompleteResult } | { ok: false; error: AppError };

/**
 * frost_sign_complete: the agent's share + the server's share → the signed transaction, stored
 * before anything is broadcast. An identical retry returns the stored result.
 */
export async function completeSigning<Tx extends SignableTx>(
  deps: SignDeps<Tx>,
  txId: string,
  walletAddress: string,
  walletServerKey: Uint8Array,
  shareJson: unknown,
  opts: { sessionId?: string; recheck?: (tx: Tx) => Promise<AppError | null> } = {},
): Promise<SignCompleteResult> {
  let agentShare: Uint8Array;
  try {
    agentShare = decodeSignatureShare(shareJson, AGENT_ID, 'signature_share');
  } catch (err) {
    wire(err, '/signature_share');
  }
  // The curve work, on a worker, for the session as it stands now; the write below checks it again.
  const before = standing(deps, await deps.signingLedger.round(txId, opts.sessionId), agentShare);
  let signed: SignResult | null = null;
  if (before.kind === 'sign') {
    signed = await frostPool().run(
      {
        kind: 'sign',
        masterKey: deps.masterKey,
        walletId: before.tx.wallet_id,
        serverKey: walletServerKey,
        sessionId: before.session.sign_session_id,
        sealedNonces: before.session.nonces,
        agentCommitments: before.session.agent_commitments,
        serverCommitments: before.session.server_commitments,
        message: before.message,
        agentShare,
        groupKey: addressBytes(walletAddress),
      },
      before.tx.wallet_id,
    );
    crashPoint('share_computed');
    // The write below is this completion's own turn, not one more unit of whatever turn the worker's answer arrived in.
    await nextTurn();
  }
  const outcome = await deps.signingLedger.settleRound(txId, opts.sessionId, async (state): Promise<{ store: RoundStore; answer: Outcome }> => {
    const now = standing(deps, state, agentShare);
    if (now.kind === 'done') return { store: null, answer: { ok: true, result: now.result } };
    if (now.kind === 'refused') return { store: now.burn ? { kind: 'burn', sessionId: now.burn.sign_session_id, agentShare } : null, answer: { ok: false, error: now.error } };
    // Another round replaced this one while the worker computed (a new frost_sign_init).
    if (!signed || before.kind !== 'sign' || before.session.sign_session_id !== now.session.sign_session_id) {
      return { store: null, answer: { ok: false, error: new AppError('INVALID_STATUS', 'The signing session changed while this share was being combined.', { howToFix: 'Start a new round with frost_sign_init.' }) } };
    }
    const refused = await opts.recheck?.(now.tx);
    if (refused) return { store: null, answer: { ok: false, error: refused } };
    const { tx, session, message } = now;
    if (!signed.ok) {
      // The nonces were used to compute a share: they are burnt even though nothing is released.
      const burn: RoundStore = { kind: 'burn', sessionId: session.sign_session_id, agentShare };
      if (signed.reason === 'verify') return { store: burn, answer: { ok: false, error: new AppError('INTERNAL_ERROR', 'The aggregated signature does not verify.') } };
      return { store: burn, answer: { ok: false, error: invalid('/signature_share', signed.message, 'Sign exactly the message returned by confirm with the nonces committed in frost_sign_init; start a new round with frost_sign_init.') } };
    }
    // Our fee payer signs only messages it pays for; an x402 message is paid by the facilitator,
    // which adds its own signature later (the bytes stay partially signed here).
    const signatures: Record<string, Uint8Array> = { [walletAddress]: signed.signature };
    const slots = signatureSlots(message);
    if (slots.includes(deps.feePayer.address)) signatures[deps.feePayer.address] = ed25519Sign(message, deps.feePayer.keypairBytes);
    const wireTx = assembleSignedTransaction(message, signatures);
    const txSignature = slots.every((a) => a in signatures) ? transactionSignature(wireTx) : null;
    return {
      // The nonces are consumed, the bytes stored and the decision logged in one transaction.
      store: {
        kind: 'signed',
        sessionId: session.sign_session_id,
        agentShare,
        walletId: tx.wallet_id,
        transactionId: tx.transaction_id,
        signedTx: wireTx,
        signature: txSignature,
        messageSha256: bytesToHex(sha256(message)),
        now: deps.now().getTime(),
      },
      answer: { ok: true, result: { transaction_id: tx.transaction_id, signature: txSignature, status: 'pending', fresh: true } },
    };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.result;
}
