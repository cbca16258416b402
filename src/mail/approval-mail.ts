/**
 * The approval e-mail (DESIGN §7): when a payment or withdrawal waits for the owner, the owner
 * gets one mail with one-time approve and reject links. Each link opens a confirmation page
 * (`/approval/<token>`, src/web/routes.ts) before anything happens, works once (using either
 * spends both) and expires after 48 hours. Deciding goes through `decideApproval` like the API.
 */
import { approvalDecision, ownerProof } from '../owner/passkeys.ts';
import { decideApproval, getApproval, type ApprovalRow } from '../db/approvals.ts';
import { getApprovalLink, getOwner, insertApprovalLink, spendApprovalLinks, type ApprovalLinkRow } from '../db/owners.ts';
import { getWallet, type WalletRow } from '../db/wallets.ts';
import { approvalSubjects } from '../db/owner-views.ts';
import { sameHash } from '../domain/api-keys.ts';
import { ownerActor } from '../domain/owner-actor.ts';
import type { Services } from '../services.ts';
import { hashToken, newToken, TOKEN_PATTERN } from './links.ts';
import { queueMail } from './outbox.ts';
import { approvalMail } from './templates.ts';

/** How long approve/reject links work. */
export const APPROVAL_LINK_HOURS = 48;

/**
 * Creates the approve/reject links of `approval` and queues the mail to the wallet owner's
 * e-mail. With no transaction of its own: call it inside the write transaction
 * that creates the approval, so both commit or neither does. A wallet without an owner (never
 * the case for a claimed wallet) gets no mail.
 */
export async function queueApprovalMail(services: Services, approval: ApprovalRow): Promise<void> {
  const { db } = services;
  const wallet = await getWallet(db, approval.wallet_id);
  const owner = wallet?.owner_id ? await getOwner(db, wallet.owner_id) : null;
  if (!wallet || !owner) {
    services.log.warn('approval mail not sent: the wallet has no owner', { approval_id: approval.approval_id, wallet_id: approval.wallet_id });
    return;
  }
  const now = services.now().getTime();
  const expiresAt = now + APPROVAL_LINK_HOURS * 60 * 60 * 1000;
  const approve = newToken();
  const reject = newToken();
  await insertApprovalLink(db, { link_hash: approve.hash, approval_id: approval.approval_id, decision: 'approved', now, expires_at: expiresAt });
  await insertApprovalLink(db, { link_hash: reject.hash, approval_id: approval.approval_id, decision: 'rejected', now, expires_at: expiresAt });
  const base = services.publicUrl();
  // The agent's words and amount + fee = total, as the approval page and the dashboard show them.
  const subject = (await approvalSubjects(db, [approval.approval_id])).get(approval.approval_id);
  await queueMail(
    services,
    approvalMail(
      owner.email,
      wallet,
      { ...approval, agent_reason: subject?.agent_reason ?? null, money: subject ? { amount: subject.amount, fee: subject.fee, setup_fee: subject.setup_fee } : null },
      { approve: `${base}/approval/${approve.token}`, reject: `${base}/approval/${reject.token}`, dashboard: `${base}/dashboard/wallets/${wallet.wallet_id}` },
      APPROVAL_LINK_HOURS,
    ),
  );
}


/** Why an approval link cannot be used. */
export type ApprovalLinkFailure = 'unknown' | 'used' | 'expired' | 'decided';

/** What an approval link points at, or why it does not work. */
export type ApprovalLinkState =
  | { ok: true; link: ApprovalLinkRow; approval: ApprovalRow; wallet: WalletRow }
  | { ok: false; reason: ApprovalLinkFailure; approval: ApprovalRow | null };

async function inspect(services: Services, hash: Uint8Array, now: number): Promise<ApprovalLinkState> {
  const { db } = services;
  const link = await getApprovalLink(db, hash);
  if (!link || !sameHash(link.link_hash, hash)) return { ok: false, reason: 'unknown', approval: null };
  const approval = await getApproval(db, link.approval_id);
  const wallet = approval ? await getWallet(db, approval.wallet_id) : null;
  if (!approval || !wallet) return { ok: false, reason: 'unknown', approval: null };
  if (approval.status !== 'pending') return { ok: false, reason: 'decided', approval };
  if (link.used_at !== null) return { ok: false, reason: 'used', approval };
  if (Number(link.expires_at) <= now) return { ok: false, reason: 'expired', approval };
  return { ok: true, link, approval, wallet };
}

/** Reads an approval link for its confirmation page; changes nothing. */
export async function approvalLinkInfo(services: Services, token: string): Promise<ApprovalLinkState> {
  if (!TOKEN_PATTERN.test(token)) return { ok: false, reason: 'unknown', approval: null };
  return await inspect(services, hashToken(token), services.now().getTime());
}

/**
 * Acts on a confirmed approval link: decides the approval through `decideApproval` (moving the
 * payment or withdrawal, with events and audit) and spends every link of the approval, in one
 * transaction. The actor is the wallet's owner, via e-mail.
 */
export async function decideByLink(services: Services, token: string, assertion?: unknown): Promise<ApprovalLinkState> {
  if (!TOKEN_PATTERN.test(token)) return { ok: false, reason: 'unknown', approval: null };
  const { db } = services;
  const hash = hashToken(token);
  const seen = await inspect(services, hash, services.now().getTime());
  if (!seen.ok) return seen;
  // The mailbox alone may reject, never approve, once the owner has a passkey: the link then opens the passkey prompt.
  const ownerId = seen.wallet.owner_id;
  const proof = seen.link.decision === 'approved' && ownerId ? await ownerProof(services, ownerId, approvalDecision(ownerId, seen.approval), assertion, 'email') : null;
  const now = services.now().getTime();
  return await db
    .transaction(async (): Promise<ApprovalLinkState> => {
      const state = await inspect(services, hash, now);
      if (!state.ok) return state;
      const actor = ownerActor(state.wallet.owner_id ?? 'unknown', 'email');
      if (!(await decideApproval(db, state.approval.approval_id, state.link.decision, actor, now, proof))) return { ok: false, reason: 'decided', approval: await getApproval(db, state.approval.approval_id) };
      await spendApprovalLinks(db, hash, state.approval.approval_id, now);
      return { ok: true, link: state.link, approval: (await getApproval(db, state.approval.approval_id))!, wallet: state.wallet };
    });
}
