/**
 * The owner's passkeys (DESIGN §7.1, issue 44): enrolment, the assertion every decision that moves
 * or loosens money needs once an owner has one, grants that let the owner API carry out one such
 * decision signed on the dashboard, and the mail-started reset for a lost passkey.
 *
 * A ceremony's challenge commits to the decision the server itself built (src/domain/
 * owner-decision.ts) and is spent once; the assertion is checked by the rules `verify-log` uses
 * (src/domain/passkey-assertion.ts) and kept with the decision it approved: in the decision log
 * row, and on an approval, where the daemon checks it again before it co-signs.
 */
import { isIP } from 'node:net';
import { generateAuthenticationOptions, generateRegistrationOptions, verifyRegistrationResponse, type RegistrationResponseJSON } from '@simplewebauthn/server';
import { AppError } from '../errors.ts';
import { newId } from '../contract/ids.ts';
import { checkName } from '../domain/identity.ts';
import { canonicalJson, decisionChallenge, decisionWords, type OwnerDecision } from '../domain/owner-decision.ts';
import { checkAssertion, evidenceOf, type PasskeyEvidence, type PasskeyKey } from '../domain/passkey-assertion.ts';
import { appendAudit } from '../db/events.ts';
import { getOwner } from '../db/owners.ts';
import type { ApprovalRow } from '../db/approvals.ts';
import type { TxRow } from '../db/transactions.ts';
import {
  activePasskeys,
  allPasskeys,
  cancelReset,
  finishReset,
  getChallenge,
  getPasskey,
  hadPasskeyAt,
  insertChallenge,
  insertGrant,
  insertPasskey,
  insertReset,
  openReset,
  ownerWalletIds,
  removeAllPasskeys,
  removePasskey,
  spendChallenge,
  peekGrant,
  takeGrant,
  usePasskey,
  type PasskeyRow,
  type ResetRow,
} from '../db/passkeys.ts';
import { queueMail } from '../mail/outbox.ts';
import { ownerActor, type Via } from '../domain/owner-actor.ts';
import type { Services } from '../services.ts';

/** How long a prompt may take between the options and the answer. */
const CHALLENGE_MS = 5 * 60_000;
/** How long a dashboard-signed decision waits for the owner API to carry it out. */
export const GRANT_MINUTES = 10;
const TIMEOUT_MS = 120_000;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const randomNonce = () => b64(crypto.getRandomValues(new Uint8Array(18)));

/** The relying party: the public URL's host (a loopback IP is served as localhost), or null where passkeys cannot work (an IP). */
export function relyingParty(services: Services): { rpId: string; origin: string; name: string } | null {
  const url = new URL(services.publicUrl());
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return null;
  return { rpId: host, origin: url.origin, name: 'Agent Wallet' };
}

function requireRp(services: Services) {
  const rp = relyingParty(services);
  if (!rp) {
    throw new AppError('VALIDATION_ERROR', `Passkeys need a domain name, and this daemon's public URL is ${services.publicUrl()}.`, {
      status: 409,
      howToFix: 'Set public_url in config.toml to the https URL owners open (or http://localhost:PORT on your own machine) and restart the daemon.',
    });
  }
  return rp;
}

/** The error of a decision that needs the owner's passkey and came without a valid one. */
export function passkeyRequired(via: Via, decision: OwnerDecision, why?: string): AppError {
  const what = decisionWords(decision);
  if (via === 'api') {
    return new AppError('UNAUTHORIZED', `Your passkey is needed to ${what}: an owner API token can read, export and tighten, not approve or loosen.`, {
      status: 403,
      howToFix: "Do it on the dashboard, where your passkey signs it (for the CLI's recovery commands: sign the step on the wallet's dashboard page first; it is then allowed once for 10 minutes).",
      details: { reason: 'passkey_required' },
    });
  }
  return new AppError('UNAUTHORIZED', `Your passkey is needed to ${what}${why ? `: ${why}` : ''}.`, {
    status: 403,
    howToFix: 'Press the button again and confirm with your passkey when the browser asks; a mailed link alone cannot decide this once you have a passkey.',
    details: { reason: 'passkey_required' },
  });
}

/** A passkey as the owner's pages list it. */
export function passkeyView(p: PasskeyRow) {
  return { credential_id: p.credential_id, name: p.name, created_at: iso(p.created_at), last_used_at: iso(p.last_used_at) };
}

function keyOf(p: PasskeyRow): PasskeyKey {
  const e = JSON.parse(p.evidence) as { key: PasskeyKey };
  return e.key;
}

/** Applies the owner's reset if its time has come (every key is removed, each wallet's log says so). */
export async function settleReset(services: Services, ownerId: string): Promise<void> {
  const now = services.now().getTime();
  const reset = await openReset(services.db, ownerId);
  if (!reset || reset.effective_at > now) return;
  await services.db.transaction(async () => {
    if (!(await finishReset(services.db, reset.reset_id, now))) return;
    const removed = await removeAllPasskeys(services.db, ownerId, now);
    await logToOwnerWallets(services, ownerId, 'owner.passkeys_reset', { reset_id: reset.reset_id, started_at: iso(reset.created_at), effective_at: iso(reset.effective_at), removed }, now, 'email');
  });
}

/** Whether the owner has an enrolled passkey now (a due reset applied first). */
export async function hasPasskey(services: Services, ownerId: string): Promise<boolean> {
  await settleReset(services, ownerId);
  return (await activePasskeys(services.db, ownerId)).length > 0;
}

export async function listPasskeys(services: Services, ownerId: string) {
  await settleReset(services, ownerId);
  return (await activePasskeys(services.db, ownerId)).map(passkeyView);
}

/** Writes an owner-level change into the decision log of each of the owner's wallets. */
export async function logToOwnerWallets(services: Services, ownerId: string, kind: string, data: Record<string, unknown>, now: number, via: Via): Promise<void> {
  for (const walletId of await ownerWalletIds(services.db, ownerId)) await appendAudit(services.db, { walletId, actor: ownerActor(ownerId, via), kind, data, now });
}

/**
 * The passkeys a wallet's log must know when its owner claims it, with the owner's assertion over
 * claiming this wallet by one of them (the claim link asked for it): the owner vouches for the
 * claim; which other keys the owner has is the daemon's word, as for a first key.
 */
export async function carryPasskeysInto(services: Services, ownerId: string, walletId: string, now: number, claim: PasskeyEvidence | null): Promise<void> {
  const keys = await activePasskeys(services.db, ownerId);
  if (keys.length === 0) return;
  await appendAudit(services.db, { walletId, actor: ownerActor(ownerId, 'email'), kind: 'owner.passkeys_carried', data: { keys: keys.map(keyOf), ...(claim ? { passkey: claim } : {}) }, now });
}

function authOptions(services: Services, challenge: string, keys: PasskeyRow[]) {
  const rp = requireRp(services);
  return generateAuthenticationOptions({
    rpID: rp.rpId,
    challenge: Uint8Array.from(Buffer.from(challenge, 'base64url')),
    allowCredentials: keys.map((k) => ({ id: k.credential_id, transports: JSON.parse(k.transports) as never })),
    userVerification: 'required',
    timeout: TIMEOUT_MS,
  });
}

/** The options of a passkey prompt for `decision`: its challenge commits to the decision and a fresh nonce. */
export async function decisionOptions(services: Services, ownerId: string, decision: OwnerDecision) {
  const keys = await activePasskeys(services.db, ownerId);
  if (keys.length === 0) throw new AppError('INVALID_STATUS', 'You have no passkey yet.', { howToFix: 'Add one on the Passkeys page of the dashboard.' });
  const nonce = randomNonce();
  const challenge = decisionChallenge(decision, nonce);
  const now = services.now().getTime();
  await services.db.transaction(async () => await insertChallenge(services.db, { challenge, owner_id: ownerId, purpose: 'decision', decision: canonicalJson(decision), nonce, now, expires_at: now + CHALLENGE_MS }));
  return { ...(await authOptions(services, challenge, keys)), decision: decisionWords(decision) };
}

function challengeOfResponse(response: unknown): string | null {
  try {
    const r = response as { response?: { clientDataJSON?: unknown } };
    const text = Buffer.from(String(r.response?.clientDataJSON), 'base64url').toString('utf8');
    const c = (JSON.parse(text) as { challenge?: unknown }).challenge;
    return typeof c === 'string' && /^[A-Za-z0-9_-]{10,100}$/.test(c) ? c : null;
  } catch {
    return null;
  }
}

function parseResponse(input: unknown): Record<string, any> | null {
  if (typeof input === 'string') {
    try {
      input = JSON.parse(input);
    } catch {
      return null;
    }
  }
  return typeof input === 'object' && input !== null ? (input as Record<string, any>) : null;
}

/**
 * Checks the owner's assertion over `decision` (which the caller rebuilt from the current state)
 * and spends its challenge: the evidence to keep with the decision. Refused, changing nothing,
 * for another decision's challenge, a spent or expired one (a replay), another origin, no user
 * verification, or another owner's key.
 */
export async function proveDecision(services: Services, ownerId: string, decision: OwnerDecision, input: unknown, via: Via): Promise<PasskeyEvidence> {
  const response = parseResponse(input);
  const challenge = challengeOfResponse(response);
  const row = challenge ? await getChallenge(services.db, challenge) : null;
  const now = services.now().getTime();
  if (!response || !row || row.owner_id !== ownerId || row.purpose !== 'decision') throw passkeyRequired(via, decision, 'the passkey answer is not one this daemon asked for');
  if (row.used_at !== null || row.expires_at <= now) throw passkeyRequired(via, decision, 'that passkey answer was already used or has expired; each one decides once');
  if (row.decision !== canonicalJson(decision)) throw passkeyRequired(via, decision, 'the passkey signed another decision than this one (it changed meanwhile?)');
  const evidence = evidenceOf({ credential_id: response.id, decision, nonce: row.nonce, response: response.response });
  const key = evidence ? await getPasskey(services.db, evidence.credential_id) : null;
  if (!evidence || !key || key.owner_id !== ownerId || key.removed_at !== null) throw passkeyRequired(via, decision, 'the passkey is not one of yours');
  const checked = await checkAssertion(evidence, decision, keyOf(key), key.counter);
  if (!checked.ok) throw passkeyRequired(via, decision, `the passkey answer does not check (${checked.reason})`);
  const spent = await services.db.transaction(async () => (await spendChallenge(services.db, row.challenge, now)) && (await usePasskey(services.db, key.credential_id, checked.counter, now)));
  if (!spent) throw passkeyRequired(via, decision, 'that passkey answer was already used; each one decides once');
  return evidence;
}

/**
 * The owner's proof for `decision`, or null when the owner has no passkey (decides as before, by
 * mail and session). From the owner API only a grant signed on the dashboard counts.
 */
export async function ownerProof(services: Services, ownerId: string, decision: OwnerDecision, assertion: unknown, via: Via): Promise<PasskeyEvidence | null> {
  if (!(await hasPasskey(services, ownerId))) return null;
  if (via === 'api') throw passkeyRequired('api', decision);
  if (assertion === undefined || assertion === null || assertion === '') throw passkeyRequired(via, decision);
  return await proveDecision(services, ownerId, decision, assertion, via);
}

/** What the owner API may carry out only under a grant the owner signed on the dashboard. */
export type GrantableDecision = Extract<OwnerDecision, { kind: 'recovery.enroll' | 'recovery.sweep' }>;

/**
 * The dashboard grant that lets the owner API carry out `decision`, or null when the owner has no
 * passkey (the API decides as before). Call `take` inside the decision's own transaction, so a
 * decision that fails leaves the grant for the retry.
 */
export async function apiGrant(services: Services, ownerId: string, decision: GrantableDecision): Promise<{ evidence: PasskeyEvidence; take: () => Promise<void> } | null> {
  if (!(await hasPasskey(services, ownerId))) return null;
  const now = services.now().getTime();
  const found = await peekGrant(services.db, ownerId, canonicalJson(decision), now);
  const evidence = found ? evidenceOf(JSON.parse(found.evidence)) : null;
  if (!found || !evidence) throw passkeyRequired('api', decision);
  return {
    evidence,
    take: async () => {
      if (!(await takeGrant(services.db, found.grant_id, now))) throw passkeyRequired('api', decision, 'the dashboard grant was used meanwhile');
    },
  };
}

/** Signs `decision` on the dashboard for the owner API to carry out once within GRANT_MINUTES. */
export async function grantForApi(services: Services, ownerId: string, decision: GrantableDecision, assertion: unknown) {
  if (decision.kind !== 'recovery.enroll' && decision.kind !== 'recovery.sweep') throw new AppError('VALIDATION_ERROR', 'Only a recovery enrolment or a sweep can be allowed for the owner API.');
  const evidence = await proveDecision(services, ownerId, decision, assertion, 'dashboard');
  const now = services.now().getTime();
  const grantId = newId('passkeyGrant');
  const expiresAt = now + GRANT_MINUTES * 60_000;
  await services.db.transaction(async () => await insertGrant(services.db, { grant_id: grantId, owner_id: ownerId, decision: canonicalJson(decision), evidence: JSON.stringify(evidence), now, expires_at: expiresAt }));
  return { grant_id: grantId, decision: decisionWords(decision), expires_at: iso(expiresAt) };
}

// ---- enrolment ---------------------------------------------------------------------------------

/** Registration options for a new passkey of the signed-in owner (user verification required). */
export async function registrationOptions(services: Services, ownerId: string) {
  const rp = requireRp(services);
  const owner = await getOwner(services.db, ownerId);
  if (!owner) throw new AppError('NOT_FOUND', 'Owner not found.');
  const keys = await activePasskeys(services.db, ownerId);
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.rpId,
    userName: owner.email,
    userDisplayName: owner.email,
    userID: new TextEncoder().encode(ownerId),
    attestationType: 'none',
    excludeCredentials: keys.map((k) => ({ id: k.credential_id, transports: JSON.parse(k.transports) as never })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    supportedAlgorithmIDs: [-7, -8, -257],
    timeout: TIMEOUT_MS,
  });
  const now = services.now().getTime();
  await services.db.transaction(async () =>
    await insertChallenge(services.db, { challenge: options.challenge, owner_id: ownerId, purpose: 'register', decision: canonicalJson({ kind: 'passkey.register', owner_id: ownerId }), nonce: '', now, expires_at: now + CHALLENGE_MS }),
  );
  return options;
}

interface PendingKey {
  name: string;
  counter: number;
  transports: string[];
  key: PasskeyKey;
}

async function addKey(services: Services, ownerId: string, pending: PendingKey, addedUnder: PasskeyEvidence | null, now: number): Promise<void> {
  await insertPasskey(services.db, {
    credential_id: pending.key.credential_id,
    owner_id: ownerId,
    name: pending.name,
    public_key: Uint8Array.from(Buffer.from(pending.key.public_key, 'base64url')),
    counter: pending.counter,
    transports: JSON.stringify(pending.transports),
    evidence: JSON.stringify({ key: pending.key, added_under: addedUnder }),
    now,
  });
  await logToOwnerWallets(services, ownerId, 'owner.passkey_added', { ...pending.key, name: pending.name, ...(addedUnder ? { passkey: addedUnder } : {}) }, now, 'dashboard');
}

/**
 * Verifies a new passkey's registration. The owner's first passkey is added at once (under the
 * session); a later one only under an assertion of an earlier one: then the answer is the prompt
 * for that assertion, and confirmAddition adds it.
 */
export async function finishRegistration(services: Services, ownerId: string, input: unknown, rawName: string): Promise<{ added: ReturnType<typeof passkeyView> } | { confirm: Awaited<ReturnType<typeof authOptions>> & { decision: string } }> {
  const rp = requireRp(services);
  const named = checkName(rawName.trim() || 'passkey');
  if (!named.ok) throw new AppError('VALIDATION_ERROR', `/name: ${named.reason}`, { details: { field: '/name' } });
  const response = parseResponse(input);
  const challenge = challengeOfResponse(response);
  const row = challenge ? await getChallenge(services.db, challenge) : null;
  const now = services.now().getTime();
  const refused = (why: string) => new AppError('VALIDATION_ERROR', `The passkey was not added: ${why}.`, { howToFix: 'Press "Add a passkey" again and follow the browser.' });
  if (!response || !row || row.owner_id !== ownerId || row.purpose !== 'register') throw refused('the answer is not one this daemon asked for');
  if (row.used_at !== null || row.expires_at <= now) throw refused('the prompt was already used or has expired');
  let verified;
  try {
    verified = await verifyRegistrationResponse({ response: response as RegistrationResponseJSON, expectedChallenge: row.challenge, expectedOrigin: rp.origin, expectedRPID: rp.rpId, requireUserVerification: true });
  } catch (err) {
    throw refused((err as Error).message);
  }
  if (!verified.verified) throw refused('the registration does not check');
  const cred = verified.registrationInfo.credential;
  if (await getPasskey(services.db, cred.id)) throw refused('this passkey is already enrolled');
  const pending: PendingKey = { name: named.value, counter: cred.counter, transports: cred.transports ?? [], key: { credential_id: cred.id, public_key: b64(cred.publicKey), rp_id: rp.rpId, origin: rp.origin } };
  const earlier = await activePasskeys(services.db, ownerId);
  if (earlier.length === 0) {
    const added = await services.db.transaction(async () => {
      if (!(await spendChallenge(services.db, row.challenge, now))) return false;
      if ((await activePasskeys(services.db, ownerId)).length > 0) return false;
      await addKey(services, ownerId, pending, null, now);
      return true;
    });
    if (!added) throw refused('the prompt was already used, or another passkey was added meanwhile');
    return { added: passkeyView((await getPasskey(services.db, cred.id))!) };
  }
  const decision: OwnerDecision = { kind: 'passkey.add', owner_id: ownerId, credential_id: pending.key.credential_id, public_key: pending.key.public_key };
  const nonce = randomNonce();
  const addChallenge = decisionChallenge(decision, nonce);
  await services.db.transaction(async () => {
    if (!(await spendChallenge(services.db, row.challenge, now))) throw refused('the prompt was already used');
    await insertChallenge(services.db, { challenge: addChallenge, owner_id: ownerId, purpose: 'decision', decision: canonicalJson(decision), nonce, pending: JSON.stringify(pending), now, expires_at: now + CHALLENGE_MS });
  });
  return { confirm: { ...(await authOptions(services, addChallenge, earlier)), decision: decisionWords(decision) } };
}

/** Adds the passkey a registration left waiting, under the earlier passkey's assertion over it. */
export async function confirmAddition(services: Services, ownerId: string, input: unknown) {
  const challenge = challengeOfResponse(parseResponse(input));
  const row = challenge ? await getChallenge(services.db, challenge) : null;
  if (!row || row.owner_id !== ownerId || !row.pending) throw new AppError('VALIDATION_ERROR', 'The passkey was not added: the answer is not one this daemon asked for.', { howToFix: 'Press "Add a passkey" again.' });
  const pending = JSON.parse(row.pending) as PendingKey;
  const decision = JSON.parse(row.decision) as OwnerDecision;
  const evidence = await proveDecision(services, ownerId, decision, input, 'dashboard');
  const now = services.now().getTime();
  await services.db.transaction(async () => await addKey(services, ownerId, pending, evidence, now));
  return passkeyView((await getPasskey(services.db, pending.key.credential_id))!);
}

/** Removes one of the owner's passkeys, under an assertion of any of them. */
export async function removeOwnerPasskey(services: Services, ownerId: string, credentialId: string, assertion: unknown) {
  const key = await getPasskey(services.db, credentialId);
  if (!key || key.owner_id !== ownerId || key.removed_at !== null) throw new AppError('NOT_FOUND', 'Passkey not found among yours.', { howToFix: 'Pick one from the Passkeys page.' });
  const decision: OwnerDecision = { kind: 'passkey.remove', owner_id: ownerId, credential_id: credentialId };
  const evidence = await proveDecision(services, ownerId, decision, assertion, 'dashboard');
  const now = services.now().getTime();
  await services.db.transaction(async () => {
    if (!(await removePasskey(services.db, ownerId, credentialId, now))) throw new AppError('INVALID_STATUS', 'The passkey was removed meanwhile.');
    await logToOwnerWallets(services, ownerId, 'owner.passkey_removed', { credential_id: credentialId, name: key.name, passkey: evidence }, now, 'dashboard');
  });
  return { credential_id: credentialId, removed_at: iso(now) };
}

// ---- a lost passkey ----------------------------------------------------------------------------

export function resetView(r: ResetRow) {
  return { reset_id: r.reset_id, started_at: iso(r.created_at)!, effective_at: iso(r.effective_at)! };
}

export async function currentReset(services: Services, ownerId: string) {
  await settleReset(services, ownerId);
  const r = await openReset(services.db, ownerId);
  return r ? resetView(r) : null;
}

/**
 * Starts a reset from the mailbox (a sign-in link proves it): every passkey is removed after
 * owner.passkey_reset_hours unless one of them cancels it first. The owner is mailed at once, so a
 * thief holding the mailbox is seen by an owner who still reads it.
 */
export async function startReset(services: Services, ownerId: string) {
  const owner = await getOwner(services.db, ownerId);
  if (!owner) throw new AppError('NOT_FOUND', 'Owner not found.');
  await settleReset(services, ownerId);
  const now = services.now().getTime();
  const effectiveAt = now + Math.round(services.config.owner.passkey_reset_hours * 3_600_000);
  const resetId = newId('passkeyReset');
  // Checked in the transaction that inserts: two links followed at once start one reset.
  const existing = await services.db.transaction(async () => {
    const open = await openReset(services.db, ownerId);
    if (open) return open;
    await insertReset(services.db, { reset_id: resetId, owner_id: ownerId, now, effective_at: effectiveAt });
    await logToOwnerWallets(services, ownerId, 'owner.passkey_reset_started', { reset_id: resetId, effective_at: iso(effectiveAt) }, now, 'email');
    const dashboard = `${services.publicUrl()}/dashboard/passkeys`;
    await queueMail(services, {
      kind: 'passkey_reset',
      to: owner.email,
      subject: 'A reset of your passkeys was started',
      body: `Someone with access to this mailbox started a reset of your Agent Wallet passkeys. At ${iso(effectiveAt)} every passkey of yours is removed, and mail links alone can then approve payments and loosen your wallets' guard rails again.\n\nIf this was not you, cancel it now with any of your passkeys:\n\n${dashboard}\n\nIf it was you (you lost your passkey), nothing to do: add a new passkey after that time.`,
      links: [{ label: 'cancel the reset', url: dashboard }],
    });
    return null;
  });
  return resetView(existing ?? { reset_id: resetId, owner_id: ownerId, created_at: now, effective_at: effectiveAt, cancelled_at: null, done_at: null });
}

/** Cancels the owner's open reset under an assertion of any enrolled passkey. */
export async function cancelOwnerReset(services: Services, ownerId: string, resetId: string, assertion: unknown) {
  const open = await openReset(services.db, ownerId);
  if (!open || open.reset_id !== resetId) throw new AppError('NOT_FOUND', 'No such reset is open.', { howToFix: 'Reload the Passkeys page.' });
  const decision: OwnerDecision = { kind: 'passkey.reset_cancel', owner_id: ownerId, reset_id: resetId };
  const evidence = await proveDecision(services, ownerId, decision, assertion, 'dashboard');
  const now = services.now().getTime();
  await services.db.transaction(async () => {
    if (!(await cancelReset(services.db, resetId, now))) throw new AppError('INVALID_STATUS', 'The reset is no longer open.');
    await logToOwnerWallets(services, ownerId, 'owner.passkey_reset_cancelled', { reset_id: resetId, passkey: evidence }, now, 'dashboard');
  });
  return { reset_id: resetId, cancelled_at: iso(now) };
}

// ---- the check before co-signing ---------------------------------------------------------------

/** The decision an approval's passkey assertion must be over. */
export function approvalDecision(ownerId: string, a: Pick<ApprovalRow, 'approval_id' | 'wallet_id' | 'subject_type' | 'amount' | 'recipient'>): OwnerDecision {
  return { kind: 'approval.approve', owner_id: ownerId, wallet_id: a.wallet_id, approval_id: a.approval_id, subject_type: a.subject_type, amount: String(a.amount ?? ''), recipient: a.recipient ?? '' };
}

/**
 * Why the daemon must not co-sign the approved transaction `tx`, or null. While its owner has a
 * passkey (or had one when the approval was decided), the transaction must be the subject of an
 * approval — same wallet, a total no higher and the same payee as approved — that carries the
 * owner's valid assertion over exactly it. An approval written into the ledger by anyone else (an
 * operator with database access), or a transaction pointed at or grown past a real one, has none.
 */
export async function approvalUnsigned(
  services: Services,
  ownerId: string,
  tx: Pick<TxRow, 'transaction_id' | 'wallet_id' | 'amount' | 'fee' | 'setup_fee' | 'counterparty'>,
  approval: (ApprovalRow & { evidence?: string | null }) | null,
): Promise<string | null> {
  const guarded = (await activePasskeys(services.db, ownerId)).length > 0 || (approval?.decided_at != null && (await hadPasskeyAt(services.db, ownerId, Number(approval.decided_at))));
  if (!guarded) return null;
  if (!approval || approval.status !== 'approved') return 'the transaction has no approval its owner decided';
  if (approval.subject_id !== tx.transaction_id || approval.wallet_id !== tx.wallet_id) return 'the approval is for another transaction';
  if (approval.amount === null || tx.amount + tx.fee + tx.setup_fee > BigInt(approval.amount)) return 'the transaction costs more than the owner approved';
  if ((approval.recipient ?? '') !== (tx.counterparty ?? '')) return 'the transaction pays another payee than the owner approved';
  const evidence = approval.evidence ? evidenceOf(JSON.parse(approval.evidence)) : null;
  if (!evidence) return 'the approval carries no passkey assertion of its owner, who has a passkey';
  const key = (await allPasskeys(services.db, ownerId)).find((k) => k.credential_id === evidence.credential_id);
  if (!key) return "the approval's assertion is by a key its owner never enrolled";
  const checked = await checkAssertion(evidence, approvalDecision(ownerId, approval), keyOf(key));
  return checked.ok ? null : `the approval's passkey assertion does not check: ${checked.reason}`;
}
