/**
 * The server's curve work of a signing round as pure functions of plain data — no database, no
 * clock, no I/O — so that it runs on a worker thread (pool.ts) and the event loop never waits on
 * it: checking the agent's commitments and committing to the server's nonces (round one), and the
 * server's share, the aggregate and its Ed25519 check (round two). Inputs and results cross the
 * thread boundary by structured clone, so they are plain objects and byte arrays; a refusal is a
 * result, not an exception.
 *
 * Round two is a pure function of its inputs: the session row fixes the message and both
 * commitment lists, so computing the server's share again for the same session (a concurrent
 * retry, or after a crash before the signed bytes were stored) yields the same share and the same
 * signature — a nonce is never used for two different messages (DESIGN §4; coordinator-sign.ts).
 */
import { equalBytes } from '@noble/curves/utils.js';
import { AAD } from './aad.ts';
import { decodeSecretState, encodeSecretState } from './codec.ts';
import { commitmentList } from './commitments.ts';
import { walletKeyPackage } from './coordinator-dkg.ts';
import { FrostProtocolError, FrostWireError } from './errors.ts';
import { AGENT_ID, SERVER_ID } from './ids.ts';
import { aggregate, commit, signShare, verifyShare } from './party.ts';
import { open, seal } from './seal.ts';
import { Secret } from './secret.ts';
import type { SigningNonces } from './types.ts';
import { decodeCommitments, encodeCommitments, type CommitmentsWire } from './wire.ts';

/** What locates and opens the wallet's server share: the master key, the wallet and its sealed share. */
interface KeyRef {
  masterKey: Uint8Array;
  walletId: string;
  serverKey: Uint8Array;
}

/** Round one: the agent's commitments as received, and the id the server's sealed nonces are bound to. */
export interface RoundJob extends KeyRef {
  kind: 'round';
  sessionId: string;
  agent: unknown;
}

export type RoundResult =
  | { ok: true; agent: CommitmentsWire; server: CommitmentsWire; sealedNonces: Uint8Array }
  /** The agent's commitments are refused: `field` is the JSON pointer of the offending value. */
  | { ok: false; field: string; message: string };

/** Round two: everything the session row and the request hold. */
export interface SignJob extends KeyRef {
  kind: 'sign';
  sessionId: string;
  sealedNonces: Uint8Array;
  agentCommitments: string;
  serverCommitments: string;
  message: Uint8Array;
  agentShare: Uint8Array;
  /** The wallet's address as 32 bytes: the group key the aggregate must verify under. */
  groupKey: Uint8Array;
}

export type SignResult =
  | { ok: true; signature: Uint8Array }
  /** No valid signature from these shares; `message` names the culprit when the agent's share is it. */
  | { ok: false; reason: 'share'; message: string }
  /** The aggregate does not verify under the wallet's address although the shares combined. */
  | { ok: false; reason: 'verify' };

export type FrostJob = RoundJob | SignJob;
export type ResultOf<J extends FrostJob> = J extends RoundJob ? RoundResult : SignResult;

/** Checks the agent's round-one commitments and commits the server to fresh nonces, sealed to `sessionId`. */
export function openRound(job: RoundJob): RoundResult {
  let agent;
  try {
    agent = decodeCommitments(job.agent, AGENT_ID, 'commitments');
  } catch (err) {
    if (err instanceof FrostWireError) return { ok: false, field: `/${err.field.replaceAll('.', '/')}`, message: err.message.slice(err.field.length + 2) };
    if (err instanceof FrostProtocolError) return { ok: false, field: '/commitments', message: err.message };
    throw err;
  }
  const { nonces, commitments } = commit(walletKeyPackage(job.masterKey, job.walletId, job.serverKey));
  const sealedNonces = seal(job.masterKey, encodeSecretState(nonces.reveal()), AAD.signNonces(job.sessionId));
  return { ok: true, agent: encodeCommitments(agent), server: encodeCommitments(commitments), sealedNonces };
}

/** The server's share over the session's message, aggregated with the agent's and checked as a plain Ed25519 signature. */
export function signRound(job: SignJob): SignResult {
  const serverKey = walletKeyPackage(job.masterKey, job.walletId, job.serverKey);
  const nonces = new Secret(decodeSecretState(open(job.masterKey, job.sealedNonces, AAD.signNonces(job.sessionId))) as SigningNonces);
  const list = commitmentList(decodeCommitments(JSON.parse(job.agentCommitments), AGENT_ID), decodeCommitments(JSON.parse(job.serverCommitments), SERVER_ID));
  const pub = serverKey.reveal().public;
  let signature: Uint8Array;
  try {
    const serverShare = signShare(serverKey, nonces, list, job.message);
    signature = aggregate(pub, list, job.message, { [AGENT_ID]: job.agentShare, [SERVER_ID]: serverShare });
  } catch (err) {
    const culprit = !verifyShare(pub, list, job.message, AGENT_ID, job.agentShare) ? 'the agent share does not verify for this message and these commitments' : (err as Error).message;
    return { ok: false, reason: 'share', message: culprit };
  }
  // aggregate() verified it under the key's own group key: when that is the wallet's address, verifying
  // again would check the same thing; a key that is not the address's gives no signature for it.
  if (!equalBytes(pub.commitments[0]!, job.groupKey)) return { ok: false, reason: 'verify' };
  return { ok: true, signature };
}

/** Runs one job (on whichever thread calls it). */
export function runJob(job: FrostJob): RoundResult | SignResult {
  return job.kind === 'round' ? openRound(job) : signRound(job);
}
