/**
 * The server side of a FROST signing round for a transaction the server built (DESIGN §4).
 *
 * frost_sign_init:     agent commitments → server commitments (server nonces sealed, single use)
 * frost_sign_complete: agent share → the server computes its own share, aggregates, verifies the
 *                      Ed25519 signature under the wallet address, adds the fee payer's signature
 *                      and stores the signed bytes — all in one synchronous SQLite transaction that
 *                      also consumes the nonces. The server's share never leaves the process, so
 *                      one message yields at most one signature: never two landable transfers.
 */
import type { Database } from 'bun:sqlite';
import { sha256 } from '@noble/hashes/sha2.js';
import { getAddressEncoder, type Address } from '@solana/kit';
import { AppError, invalid } from '../errors.ts';
import { newId } from '../contract/ids.ts';
import { closeOpenSessions, consumeNonces, getSignSession, insertSignSession, latestSignSession, type SignSessionRow } from '../db/sign-sessions.ts';
import { getTx, setTxSigned, type TxRow } from '../db/transactions.ts';
import { sameHash } from '../domain/api-keys.ts';
import { assembleSignedTransaction, signatureSlots, transactionSignature } from '../solana/transfer.ts';
import type { FeePayerKey } from '../secret-files.ts';
import { AAD } from './aad.ts';
import { decodeSecretState, encodeSecretState } from './codec.ts';
import { commitmentList } from './commitments.ts';
import { walletKeyPackage } from './coordinator-dkg.ts';
import { FrostProtocolError, FrostWireError } from './errors.ts';
import { AGENT_ID, SERVER_ID } from './ids.ts';
import { ed25519Sign, ed25519Verifies } from './native-ed25519.ts';
import { aggregate, commit, signShare, verifyShare } from './party.ts';
import { open, seal } from './seal.ts';
import { Secret } from './secret.ts';
import type { SigningCommitments, SigningNonces } from './types.ts';
import { decodeCommitments, decodeSignatureShare, encodeCommitments, type CommitmentsWire } from './wire.ts';

/** A signing session lives 2 minutes. */
export const SIGN_SESSION_TTL_MS = 2 * 60 * 1000;

export interface SignDeps {
  db: Database;
  masterKey: Uint8Array;
  feePayer: FeePayerKey;
  now: () => Date;
}

function wire(err: unknown, field: string): never {
  if (err instanceof FrostWireError) throw invalid(`/${err.field.replaceAll('.', '/')}`, err.message.slice(err.field.length + 2));
  if (err instanceof FrostProtocolError) throw invalid(field, err.message);
  throw err;
}

function signable(tx: TxRow): Uint8Array {
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

/** The agent's round-one commitments from the wire, decoded and checked once (VALIDATION_ERROR naming the field). */
export function agentCommitments(json: unknown): SigningCommitments {
  try {
    return decodeCommitments(json, AGENT_ID, 'commitments');
  } catch (err) {
    wire(err, '/commitments');
  }
}

/** frost_sign_init: commits the server to a fresh nonce pair for the stored message of `tx`. */
export function startSigning(deps: SignDeps, tx: TxRow, walletServerKey: Uint8Array, agentCommitmentsJson: unknown): SignInitResult {
  return openSigningSession(deps, tx, walletServerKey, agentCommitments(agentCommitmentsJson));
}

/** The round-one step itself, for commitments already decoded (the fast path decodes them before the intent exists). */
export function openSigningSession(deps: SignDeps, tx: TxRow, walletServerKey: Uint8Array, agent: SigningCommitments): SignInitResult {
  const round = prepareRound(deps, tx.wallet_id, walletServerKey, agent);
  return deps.db.transaction(() => recordRound(deps, round, tx)).immediate();
}

/** The server's nonces for one round, committed and sealed, before the message is known; recorded once or dropped. */
export interface PreparedRound {
  id: string;
  agent: SigningCommitments;
  server: SigningCommitments;
  sealedNonces: Uint8Array;
}

/** Commits the server to fresh nonces for `agent`'s round (nonces are independent of the message they later sign). */
export function prepareRound(deps: SignDeps, walletId: string, walletServerKey: Uint8Array, agent: SigningCommitments): PreparedRound {
  const { nonces, commitments } = commit(walletKeyPackage(deps.masterKey, walletId, walletServerKey));
  const id = newId('signSession');
  return { id, agent, server: commitments, sealedNonces: seal(deps.masterKey, encodeSecretState(nonces.reveal()), AAD.signNonces(id)) };
}

/**
 * Records a prepared round for the stored message of `tx` (as read in the caller's SQLite
 * transaction: the fast path records it in the same one that stores a new message).
 */
export function recordRound(deps: SignDeps, round: PreparedRound, tx: TxRow): SignInitResult {
  const message = signable(tx);
  const now = deps.now().getTime();
  // A newer round supersedes older open ones: their nonces are destroyed unused.
  closeOpenSessions(deps.db, tx.transaction_id);
  insertSignSession(deps.db, {
    sign_session_id: round.id,
    transaction_id: tx.transaction_id,
    message_hash: sha256(message),
    agent_commitments: JSON.stringify(encodeCommitments(round.agent)),
    server_commitments: JSON.stringify(encodeCommitments(round.server)),
    nonces: round.sealedNonces,
    now,
    expires_at: now + SIGN_SESSION_TTL_MS,
  });
  return { sign_session_id: round.id, server_commitments: encodeCommitments(round.server), message: Buffer.from(message).toString('base64'), expires_at: new Date(now + SIGN_SESSION_TTL_MS).toISOString() };
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

function pickSession(deps: SignDeps, tx: TxRow, sessionId: string | undefined): SignSessionRow {
  const session = sessionId ? getSignSession(deps.db, sessionId) : latestSignSession(deps.db, tx.transaction_id);
  if (!session || session.transaction_id !== tx.transaction_id) {
    throw new AppError('NOT_FOUND', 'No signing session for this transaction.', { howToFix: 'Start one with frost_sign_init.' });
  }
  return session;
}

/**
 * frost_sign_complete: the agent's share + the server's share → the signed transaction, stored
 * before anything is broadcast. An identical retry returns the stored result.
 */
export function completeSigning(
  deps: SignDeps,
  txId: string,
  walletAddress: string,
  walletServerKey: Uint8Array,
  shareJson: unknown,
  opts: { sessionId?: string; recheck?: (tx: TxRow) => AppError | null } = {},
): SignCompleteResult {
  let agentShare: Uint8Array;
  try {
    agentShare = decodeSignatureShare(shareJson, AGENT_ID, 'signature_share');
  } catch (err) {
    wire(err, '/signature_share');
  }
  const outcome = deps.db
    .transaction((): { ok: true; result: SignCompleteResult } | { ok: false; error: AppError } => {
      const tx = getTx(deps.db, txId);
      if (!tx) return { ok: false, error: new AppError('NOT_FOUND', 'Transaction not found.') };
      const session = pickSession(deps, tx, opts.sessionId);
      if (session.status === 'used') {
        if (tx.signed_tx && session.agent_share && sameHash(session.agent_share, agentShare)) {
          return { ok: true, result: { transaction_id: tx.transaction_id, signature: tx.signature, status: tx.status, fresh: false } };
        }
        return { ok: false, error: new AppError('INVALID_STATUS', 'This signing session is already complete.', { howToFix: 'A signed message is never signed again: submit it with submit_signed_tx.' }) };
      }
      if (session.status !== 'open' || !session.nonces || Number(session.expires_at) < deps.now().getTime()) {
        return { ok: false, error: new AppError('INVALID_STATUS', 'This signing session is closed or expired.', { howToFix: 'Start a new round with frost_sign_init (sessions last 2 minutes).' }) };
      }
      const message = signable(tx);
      const refused = opts.recheck?.(tx);
      if (refused) return { ok: false, error: refused };
      if (!sameHash(sha256(message), session.message_hash)) {
        consumeNonces(deps.db, session.sign_session_id, 'failed', agentShare);
        return { ok: false, error: new AppError('INVALID_STATUS', 'The transaction message changed since this session started.', { howToFix: 'Start a new round with frost_sign_init.' }) };
      }
      const serverKey = walletKeyPackage(deps.masterKey, tx.wallet_id, walletServerKey);
      const nonces = new Secret(decodeSecretState(open(deps.masterKey, session.nonces, AAD.signNonces(session.sign_session_id))) as SigningNonces);
      const list = commitmentList(decodeCommitments(JSON.parse(session.agent_commitments), AGENT_ID), decodeCommitments(JSON.parse(session.server_commitments), SERVER_ID));
      const pub = serverKey.reveal().public;
      let signature: Uint8Array;
      try {
        const serverShare = signShare(serverKey, nonces, list, message);
        signature = aggregate(pub, list, message, { [AGENT_ID]: agentShare, [SERVER_ID]: serverShare });
      } catch (err) {
        // The nonces were used to compute a share: they are burnt even though nothing is released.
        consumeNonces(deps.db, session.sign_session_id, 'failed', agentShare);
        const culprit = !verifyShare(pub, list, message, AGENT_ID, agentShare) ? 'the agent share does not verify for this message and these commitments' : (err as Error).message;
        return { ok: false, error: invalid('/signature_share', culprit, 'Sign exactly the message returned by confirm with the nonces committed in frost_sign_init; start a new round with frost_sign_init.') };
      }
      if (!ed25519Verifies(signature, message, new Uint8Array(getAddressEncoder().encode(walletAddress as Address)))) {
        consumeNonces(deps.db, session.sign_session_id, 'failed', agentShare);
        return { ok: false, error: new AppError('INTERNAL_ERROR', 'The aggregated signature does not verify.') };
      }
      // Our fee payer signs only messages it pays for; an x402 message is paid by the facilitator,
      // which adds its own signature later (the bytes stay partially signed here).
      const signatures: Record<string, Uint8Array> = { [walletAddress]: signature };
      const slots = signatureSlots(message);
      if (slots.includes(deps.feePayer.address)) signatures[deps.feePayer.address] = ed25519Sign(message, deps.feePayer.keypairBytes);
      const wireTx = assembleSignedTransaction(message, signatures);
      const txSignature = slots.every((a) => a in signatures) ? transactionSignature(wireTx) : null;
      consumeNonces(deps.db, session.sign_session_id, 'used', agentShare);
      if (!setTxSigned(deps.db, tx.transaction_id, wireTx, txSignature, deps.now().getTime())) {
        throw new Error('transaction changed during signing');
      }
      return { ok: true, result: { transaction_id: tx.transaction_id, signature: txSignature, status: 'pending', fresh: true } };
    })
    .immediate();
  if (!outcome.ok) throw outcome.error;
  return outcome.result;
}
