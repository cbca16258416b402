/**
 * Claiming a wallet (DESIGN §7). The owner enters the claim code and an e-mail (claim page or the
 * public `claim` action); a right code mails a one-time magic link (15 minutes); opening it only
 * shows its page, and that page's button claims the wallet for the owner with that e-mail
 * (created on first claim) and starts a browser session. Five wrong codes in a row lock the wallet's claim for 15 minutes. The code is compared
 * as SHA-256 of its normalised form, in constant time.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import type { Address } from '@solana/kit';
import { AppError, invalid } from '../errors.ts';
import { CLAIM } from '../contract/claim.ts';
import { newId } from '../contract/ids.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import {
  clearClaimAttempts,
  countMagicLinksSince,
  ensureOwner,
  findOwnerByEmail,
  getClaimAttempts,
  getMagicLink,
  insertMagicLink,
  insertSession,
  recordClaimFailure,
  useMagicLink,
  type MagicLinkRow,
} from '../db/owners.ts';
import { setupFeeHolder } from '../db/transactions.ts';
import { getWallet, markClaimed, type WalletRow } from '../db/wallets.ts';
import { ensurePayeeReady } from '../earning/payee-ready.ts';
import { sameHash } from '../domain/api-keys.ts';
import { checkEmail, maskEmail, normalizeClaimCode } from '../domain/identity.ts';
import { hashToken, newToken, TOKEN_PATTERN } from '../mail/links.ts';
import { queueMail } from '../mail/outbox.ts';
import { claimMail, loginMail } from '../mail/templates.ts';
import type { Services } from '../services.ts';
import { ownerActor } from '../domain/owner-actor.ts';
import { implement } from './registry.ts';
import type { OwnerDecision } from '../domain/owner-decision.ts';
import type { PasskeyEvidence } from '../domain/passkey-assertion.ts';
import { carryPasskeysInto, hasPasskey, proveDecision, startReset } from '../owner/passkeys.ts';

/** Life of a magic link (claim or sign-in). */
export const MAGIC_LINK_MINUTES = 15;
/** Wrong claim codes in a row that lock the claim. */
export const MAX_WRONG_CLAIM_CODES = 5;
/** How long the lock lasts. */
export const CLAIM_LOCK_MINUTES = 15;
/** Sign-in links per e-mail per hour (so the login form cannot be used to flood a mailbox). */
const LOGIN_LINKS_PER_HOUR = 5;

const MINUTE = 60_000;

const walletNotFound = () => new AppError('NOT_FOUND', 'Wallet not found.', { howToFix: 'Check the claim URL: it ends in the wallet_id the agent received from register.' });

/** Public claim information: nothing secret, the pledged e-mail masked. */
export async function claimInfo(services: Services, walletId: string) {
  const w = await getWallet(services.db, walletId);
  if (!w) throw walletNotFound();
  const attempts = await getClaimAttempts(services.db, walletId);
  const lockedUntil = attempts?.locked_until && Number(attempts.locked_until) > services.now().getTime() ? new Date(Number(attempts.locked_until)).toISOString() : null;
  return {
    wallet_id: w.wallet_id,
    name: w.name,
    username: w.username,
    status: w.status,
    owner_email_masked: w.owner_email ? maskEmail(w.owner_email) : null,
    claimed_at: w.claimed_at === null ? null : new Date(Number(w.claimed_at)).toISOString(),
    claim_locked_until: w.status === 'unclaimed' ? lockedUntil : null,
  };
}

/**
 * Checks the claim code and, when right, mails a one-time claim link to `rawEmail`. A wrong code
 * counts towards the lock (the count is committed before the error is thrown).
 */
export async function startClaim(services: Services, walletId: string, code: string, rawEmail: string) {
  const email = checkEmail(rawEmail);
  if (!email.ok) throw invalid('/email', email.reason);
  const wallet = await getWallet(services.db, walletId);
  if (!wallet) throw walletNotFound();
  if (wallet.status === 'claimed') {
    throw new AppError('INVALID_STATUS', 'This wallet is already claimed.', {
      howToFix: `If it is yours, sign in at ${services.publicUrl()}/login with the e-mail you claimed it with.`,
    });
  }
  const submitted = sha256(new TextEncoder().encode(normalizeClaimCode(code)));
  const now = services.now().getTime();
  const link = newToken();
  const expiresAt = now + MAGIC_LINK_MINUTES * MINUTE;
  const url = `${services.publicUrl()}/login/${link.token}`;
  const { db } = services;
  const outcome = await db
    .transaction(async () => {
      const attempts = await getClaimAttempts(db, walletId);
      if (attempts?.locked_until && Number(attempts.locked_until) > now) return { kind: 'locked' as const, until: Number(attempts.locked_until) };
      if (!sameHash(wallet.claim_code_hash, submitted)) {
        const failure = await recordClaimFailure(db, walletId, now, MAX_WRONG_CLAIM_CODES, CLAIM_LOCK_MINUTES * MINUTE);
        return failure.lockedUntil === null ? { kind: 'wrong' as const, left: MAX_WRONG_CLAIM_CODES - failure.failures } : { kind: 'locked' as const, until: failure.lockedUntil };
      }
      await clearClaimAttempts(db, walletId);
      await insertMagicLink(db, { link_hash: link.hash, purpose: 'claim', email: email.value, wallet_id: walletId, now, expires_at: expiresAt });
      await queueMail(services, claimMail(email.value, wallet, url, MAGIC_LINK_MINUTES));
      return { kind: 'sent' as const };
    });
  if (outcome.kind === 'locked') {
    const seconds = Math.max(1, Math.ceil((outcome.until - now) / 1000));
    throw new AppError('RATE_LIMITED', `Too many wrong claim codes: claiming this wallet is locked until ${new Date(outcome.until).toISOString()}.`, {
      howToFix: `Wait ${Math.ceil(seconds / 60)} minutes, then enter the claim code exactly as the agent got it from register (the agent can show it again with info).`,
      headers: { 'Retry-After': String(seconds) },
      details: { locked_until: new Date(outcome.until).toISOString() },
    });
  }
  if (outcome.kind === 'wrong') {
    throw new AppError('VALIDATION_ERROR', `/claim_code: does not match this wallet's claim code; ${outcome.left} ${outcome.left === 1 ? 'attempt' : 'attempts'} left before a ${CLAIM_LOCK_MINUTES}-minute lock.`, {
      howToFix: 'Enter the claim code exactly as the agent got it from register (for example K7QM-4TZP; case, spaces and dashes do not matter).',
      details: { field: '/claim_code', attempts_left: outcome.left },
    });
  }
  return {
    wallet_id: walletId,
    email: email.value,
    link_expires_at: new Date(expiresAt).toISOString(),
    next_step: `Open the link we mailed to ${email.value} within ${MAGIC_LINK_MINUTES} minutes to finish claiming the wallet.`,
  };
}

/**
 * Mails a sign-in link when an owner with this e-mail exists; says nothing either way (the
 * answer must not reveal who is an owner). At most a few links per e-mail per hour.
 */
export async function requestLogin(services: Services, rawEmail: string): Promise<{ email: string }> {
  const email = checkEmail(rawEmail);
  if (!email.ok) throw invalid('/email', email.reason);
  const now = services.now().getTime();
  const link = newToken();
  const { db } = services;
  await db.transaction(async () => {
    if (!(await findOwnerByEmail(db, email.value))) return;
    if ((await countMagicLinksSince(db, email.value, 'login', now - 60 * MINUTE)) >= LOGIN_LINKS_PER_HOUR) return;
    await insertMagicLink(db, { link_hash: link.hash, purpose: 'login', email: email.value, wallet_id: null, now, expires_at: now + MAGIC_LINK_MINUTES * MINUTE });
    await queueMail(services, loginMail(email.value, `${services.publicUrl()}/login/${link.token}`, MAGIC_LINK_MINUTES));
  });
  return { email: email.value };
}

/** Why a magic link did not work. */
/** Why a magic link did not sign in; `passkey`: its owner has a passkey, which the link alone cannot replace. */
export type LinkFailure = 'unknown' | 'used' | 'expired' | 'claimed' | 'passkey';

type LinkCheck = { ok: true; link: MagicLinkRow; wallet: WalletRow | null } | { ok: false; reason: LinkFailure; walletId: string | null };

async function checkMagicLink(db: Services['db'], hash: Uint8Array, now: number): Promise<LinkCheck> {
  const link = await getMagicLink(db, hash);
  if (!link || !sameHash(link.link_hash, hash)) return { ok: false, reason: 'unknown', walletId: null };
  if (link.used_at !== null) return { ok: false, reason: 'used', walletId: link.wallet_id };
  if (Number(link.expires_at) <= now) return { ok: false, reason: 'expired', walletId: link.wallet_id };
  const wallet = link.wallet_id ? await getWallet(db, link.wallet_id) : null;
  if (link.purpose === 'claim' && (!wallet || wallet.status === 'claimed')) return { ok: false, reason: 'claimed', walletId: link.wallet_id };
  return { ok: true, link, wallet };
}

/** What a live magic link would do, for the page that asks to confirm it. */
export type MagicLinkInfo =
  | { ok: true; purpose: 'claim'; emailMasked: string; wallet: { wallet_id: string; name: string; username: string }; passkey: PasskeyStep | null }
  | { ok: true; purpose: 'login'; emailMasked: string; passkey: PasskeyStep | null }
  | { ok: false; reason: LinkFailure; walletId: string | null };

/** What a link of an owner who has a passkey leads to: the prompt for this decision (DESIGN §7.1). */
export interface PasskeyStep {
  ownerId: string;
  decision: OwnerDecision;
}

/** The sign-in decision a link needs the owner's passkey for, or null when the owner has none (or is new). */
async function passkeyStepOf(services: Services, link: { email: string; purpose: string; wallet_id: string | null }): Promise<PasskeyStep | null> {
  const owner = await findOwnerByEmail(services.db, link.email);
  if (!owner || !(await hasPasskey(services, owner.owner_id))) return null;
  return { ownerId: owner.owner_id, decision: { kind: 'sign_in', owner_id: owner.owner_id, wallet_id: link.purpose === 'claim' ? link.wallet_id : null } };
}

/**
 * Reads a magic link and spends nothing: mail scanners open links before the person does, so
 * only the confirming POST (`followMagicLink`) may use it.
 */
export async function magicLinkInfo(services: Services, token: string): Promise<MagicLinkInfo> {
  if (!TOKEN_PATTERN.test(token)) return { ok: false, reason: 'unknown', walletId: null };
  const state = await checkMagicLink(services.db, hashToken(token), services.now().getTime());
  if (!state.ok) return state;
  const { link, wallet } = state;
  const emailMasked = maskEmail(link.email);
  const passkey = await passkeyStepOf(services, link);
  if (link.purpose === 'claim' && wallet) return { ok: true, purpose: 'claim', emailMasked, wallet: { wallet_id: wallet.wallet_id, name: wallet.name, username: wallet.username }, passkey };
  return { ok: true, purpose: 'login', emailMasked, passkey };
}

export type FollowResult = { ok: true; ownerId: string; walletId: string | null; claimed: boolean } | { ok: false; reason: LinkFailure; walletId: string | null };

/**
 * Follows a magic link: spends it, creates or finds the owner by e-mail, claims the wallet (claim
 * links; emits `wallet.claimed` and an audit entry) and stores the session `session.hash` — all in
 * one transaction, so a link that fails changes nothing.
 */
export async function followMagicLink(services: Services, token: string, session: { hash: Uint8Array; expiresAt: number }, assertion?: unknown): Promise<FollowResult> {
  if (!TOKEN_PATTERN.test(token)) return { ok: false, reason: 'unknown', walletId: null };
  const { db } = services;
  const hash = hashToken(token);
  // Once the owner has a passkey, the mailbox alone signs nobody in: the link leads to the passkey prompt.
  const seen = await checkMagicLink(db, hash, services.now().getTime());
  const step = seen.ok ? await passkeyStepOf(services, seen.link) : null;
  let signedIn: PasskeyEvidence | null = null;
  if (step) {
    if (assertion === undefined || assertion === null || assertion === '') return { ok: false, reason: 'passkey', walletId: seen.ok ? seen.link.wallet_id : null };
    signedIn = await proveDecision(services, step.ownerId, step.decision, assertion, 'email');
  }
  const now = services.now().getTime();
  const result = await db
    .transaction(async (): Promise<FollowResult> => {
      const state = await checkMagicLink(db, hash, now);
      if (!state.ok) return state;
      const { link, wallet } = state;
      if (!(await useMagicLink(db, hash, now))) return { ok: false, reason: 'used', walletId: link.wallet_id };
      const { owner } = await ensureOwner(db, link.email, newId('owner'), now);
      let claimed = false;
      if (link.purpose === 'claim' && wallet) {
        if (!(await markClaimed(db, wallet.wallet_id, owner.owner_id, now))) throw new Error('wallet claimed concurrently inside a write transaction');
        await clearClaimAttempts(db, wallet.wallet_id);
        const data = { wallet_id: wallet.wallet_id, owner_id: owner.owner_id, owner_email: maskEmail(owner.email) };
        await appendEvent(db, { walletId: wallet.wallet_id, type: 'wallet.claimed', data, now });
        await appendAudit(db, { walletId: wallet.wallet_id, actor: ownerActor(owner.owner_id, 'email'), kind: 'wallet.claimed', data, now });
        await carryPasskeysInto(services, owner.owner_id, wallet.wallet_id, now, signedIn);
        claimed = true;
      }
      await insertSession(db, { session_hash: session.hash, owner_id: owner.owner_id, now, expires_at: session.expiresAt });
      return { ok: true, ownerId: owner.owner_id, walletId: link.wallet_id, claimed };
    });
  if (result.ok && result.claimed && result.walletId) await prepareClaimedWallet(services, result.walletId);
  return result;
}

/**
 * A lost passkey: the sign-in link (the mailbox) starts a reset that removes the owner's passkeys
 * after owner.passkey_reset_hours, mailed at once and cancellable with any passkey. Spends the link.
 */
export async function resetByLink(services: Services, token: string): Promise<{ ok: true; reset: Awaited<ReturnType<typeof startReset>> } | { ok: false; reason: LinkFailure; walletId: string | null }> {
  if (!TOKEN_PATTERN.test(token)) return { ok: false, reason: 'unknown', walletId: null };
  const hash = hashToken(token);
  const now = services.now().getTime();
  const seen = await checkMagicLink(services.db, hash, now);
  if (!seen.ok) return seen;
  const step = await passkeyStepOf(services, seen.link);
  if (!step) return { ok: false, reason: 'unknown', walletId: seen.link.wallet_id };
  const spent = await services.db.transaction(async () => await useMagicLink(services.db, hash, now));
  if (!spent) return { ok: false, reason: 'used', walletId: seen.link.wallet_id };
  return { ok: true, reset: await startReset(services, step.ownerId) };
}

/**
 * A claimed wallet gets its USDC token account from the operator (as a paylink payee does), so
 * its payers never pay an account-setup fee. In the background: the owner's page does not wait
 * for the chain, and a failure is made good before the wallet's first incoming payment is built
 * (src/payments/recipient-account.ts).
 */
async function prepareClaimedWallet(services: Services, walletId: string): Promise<void> {
  const wallet = await getWallet(services.db, walletId);
  // A payment signed while the wallet was unclaimed already carries the create and its fee: creating the account first would make that fee pay for nothing.
  if (!wallet || (await setupFeeHolder(services.db, wallet.address))?.signed_tx) return;
  ensurePayeeReady(services, wallet.address as Address).catch((err: Error) =>
    services.log.warn('claimed wallet: token account not created yet; it is created before its first incoming payment', { wallet_id: walletId, error: err.message }),
  );
}

export const claimActions = implement(CLAIM, {
  claim_info: async ({ services }, p) => await claimInfo(services, p.wallet_id),
  claim: async ({ services }, p) => await startClaim(services, p.wallet_id, p.claim_code, p.email),
});
