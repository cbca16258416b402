/**
 * The owner API (DESIGN §7) and the functions behind it. The dashboard pages (src/web) call the
 * same exported functions, so the API and the pages cannot disagree. An owner sees only their own
 * claimed wallets and what belongs to them: anything else is NOT_FOUND, never a hint it exists.
 */
import { railsVersion } from '../payments/intent.ts';
import { AppError } from '../errors.ts';
import { OWNER } from '../contract/owner.ts';
import { parseGuardRails, railsToJson } from '../contract/guard-rails.ts';
import { newId } from '../contract/ids.ts';
import { decideApproval, getApproval, type ApprovalRow } from '../db/approvals.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import { loadRailsState, saveRails } from '../db/guard-rails.ts';
import {
  auditEntries,
  getOwnerToken,
  insertOwnerToken,
  listOwnerTokens,
  ownerApproval,
  ownerApprovals,
  ownerWallet,
  ownerWallets,
  revokeOwnerToken,
} from '../db/owners.ts';
import type { WalletRow } from '../db/wallets.ts';
import { newApiKey } from '../domain/api-keys.ts';
import { checkName } from '../domain/identity.ts';
import { classifyChange, effectiveRails, type PendingRails } from '../domain/rails-change.ts';
import type { GuardRails } from '../domain/guardrails.ts';
import type { Services } from '../services.ts';
import { approvalView } from './approvals.ts';
import { ownerFundRequests } from '../db/fund-requests.ts';
import { ownerPaylinks } from '../db/paylinks.ts';
import { paylinkView } from '../earning/paylinks.ts';
import { fundRequestView, resolveAsOwner } from '../earning/funding.ts';
import type { ActionContext } from '../action-context.ts';
import { implement } from './registry.ts';
import { ownerActor, type Via } from '../domain/owner-actor.ts';
import { canonicalJson, railsLoosen, type OwnerDecision } from '../domain/owner-decision.ts';
import { approvalDecision, logToOwnerWallets, ownerProof } from '../owner/passkeys.ts';

const iso = (ms: bigint | number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

const walletNotFound = () =>
  new AppError('NOT_FOUND', 'Wallet not found among your wallets.', { howToFix: 'Use a wallet_id from the wallets action; a wallet appears there once you have claimed it.' });
const approvalNotFound = () =>
  new AppError('NOT_FOUND', 'Approval not found among your wallets.', { howToFix: 'Use an approval_id from the approvals action.' });

/** The owner's claimed wallet, or NOT_FOUND. */
export async function requireOwnerWallet(services: Services, ownerId: string, walletId: string): Promise<WalletRow> {
  const wallet = await ownerWallet(services.db, ownerId, walletId);
  if (!wallet) throw walletNotFound();
  return wallet;
}

/** The owner's wallets, newest claim first. */
export async function listOwnerWallets(services: Services, ownerId: string, limit = 20, offset = 0) {
  const { rows, total } = await ownerWallets(services.db, ownerId, limit, offset);
  return {
    items: rows.map((w) => ({
      wallet_id: w.wallet_id,
      name: w.name,
      username: w.username,
      status: w.status,
      address: w.address,
      claimed_at: iso(w.claimed_at),
      pending_approvals: Number(w.pending_approvals),
    })),
    total,
    limit,
    offset,
  };
}

/** Guard rails of one wallet: in force now, and a pending loosening with its time. */
export async function guardRailsView(services: Services, walletId: string) {
  const now = services.now();
  const state = await loadRailsState(services.db, walletId);
  const inForce = effectiveRails(state.current, state.pending, now);
  const pending = state.pending && now.getTime() < state.pending.apply_at.getTime() ? state.pending : null;
  return {
    wallet_id: walletId,
    rails: railsToJson(inForce),
    pending: pending ? { rails: railsToJson(pending.rails), apply_at: pending.apply_at.toISOString() } : null,
    updated_at: state.updatedAt?.toISOString() ?? null,
    updated_by: state.updatedBy,
  };
}

/** The guard rails an owner would edit: the pending document when there is one, else those in force. */
export async function desiredRails(services: Services, walletId: string): Promise<GuardRails> {
  const now = services.now();
  const state = await loadRailsState(services.db, walletId);
  if (state.pending && now.getTime() < state.pending.apply_at.getTime()) return state.pending.rails;
  return effectiveRails(state.current, state.pending, now);
}

const sameRails = (a: GuardRails, b: GuardRails) => JSON.stringify(railsToJson(a)) === JSON.stringify(railsToJson(b));

/**
 * Replaces a wallet's guard rails with `doc` (the whole desired document). What tightens applies
 * now; what loosens waits `loosen_delay_hours` of the rails in force (none: applies now), replacing
 * an earlier pending change (saving the same pending document again keeps its time). Writes the
 * row, an audit entry and a `guard_rails.updated` event in one transaction.
 */
export async function setGuardRails(services: Services, ownerId: string, walletId: string, doc: unknown, via: Via, assertion?: unknown) {
  const parsed = parseGuardRails(doc);
  if (!parsed.ok) {
    throw new AppError('VALIDATION_ERROR', `/rails: ${parsed.errors.map((e) => e.message).join('; ')}`, {
      howToFix: 'Correct the named guard-rail fields and send the whole document again.',
      details: { field: '/rails', errors: parsed.errors.map((e) => ({ field: `/rails${e.path}`, message: e.message })) },
    });
  }
  const next = parsed.rails;
  const nowDate = services.now();
  const now = nowDate.getTime();
  const actor = ownerActor(ownerId, via);
  const { db } = services;
  // A loosening (unfreezing included) needs the owner's passkey over exactly this change, once they have one.
  const loosen = await railsChangeDecision(services, ownerId, walletId, doc);
  const proof = loosen ? await ownerProof(services, ownerId, loosen, assertion, via) : null;
  const done = await db
    .transaction(async () => {
      if (!(await ownerWallet(db, ownerId, walletId))) return false;
      const state = await loadRailsState(db, walletId);
      const current = effectiveRails(state.current, state.pending, nowDate);
      if (proof && loosen && canonicalJson(railsToJson(current)) !== canonicalJson(loosen.from)) {
        throw new AppError('INVALID_STATUS', 'The guard rails changed while you confirmed with your passkey.', { howToFix: 'Reload the page, check the rails and save again.' });
      }
      const stillPending = state.pending && now < state.pending.apply_at.getTime() ? state.pending : null;
      const { tightening, loosening } = classifyChange(current, next);
      const delayMs = Math.round((current.loosen_delay_hours ?? 0) * 3_600_000);
      let inForce = tightening;
      let pending: PendingRails | null = null;
      if (loosening && delayMs === 0) inForce = loosening;
      else if (loosening) {
        const keepTime = stillPending !== null && sameRails(stillPending.rails, loosening);
        pending = { rails: loosening, apply_at: keepTime ? stillPending.apply_at : new Date(now + delayMs) };
      }
      await saveRails(db, walletId, { current: inForce, pending, now, by: actor });
      const data = {
        rails: railsToJson(inForce),
        pending: pending ? railsToJson(pending.rails) : null,
        apply_at: pending?.apply_at.toISOString() ?? null,
      };
      // rails_version names the rails in force as the decisions made under them do (pending ones get theirs when they apply).
      await appendAudit(db, { walletId, actor, kind: 'guard_rails.set', data: { previous: railsToJson(current), requested: railsToJson(next), ...data, rails_version: railsVersion(inForce), pending_rails_version: pending ? railsVersion(pending.rails) : null, ...(proof ? { passkey: proof } : {}) }, now });
      await appendEvent(db, { walletId, type: 'guard_rails.updated', data, now });
      return true;
    });
  if (!done) throw walletNotFound();
  const view = await guardRailsView(services, walletId);
  return {
    ...view,
    next_step: view.pending
      ? `Tightening applies now; the loosening applies at ${view.pending.apply_at} (loosen_delay_hours of the rails in force).`
      : 'The new guard rails are in force.',
  };
}

/**
 * The decision the owner's passkey must sign to set `doc` as the wallet's rails: a loosening
 * (unfreezing included) from the rails in force, or null when the change only tightens (or the
 * document is invalid: saving it then answers the validation error).
 */
export async function railsChangeDecision(services: Services, ownerId: string, walletId: string, doc: unknown): Promise<Extract<OwnerDecision, { kind: 'guard_rails.loosen' }> | null> {
  await requireOwnerWallet(services, ownerId, walletId);
  const parsed = parseGuardRails(doc);
  if (!parsed.ok) return null;
  const state = await loadRailsState(services.db, walletId);
  const from = railsToJson(effectiveRails(state.current, state.pending, services.now()));
  const to = railsToJson(parsed.rails);
  return railsLoosen(from, to) ? { kind: 'guard_rails.loosen', owner_id: ownerId, wallet_id: walletId, from, to } : null;
}

/** Approvals of the owner's wallets as the owner sees them. */
export async function listOwnerApprovals(services: Services, ownerId: string, filter: { walletId?: string; status?: ApprovalRow['status'] }, limit = 20, offset = 0) {
  if (filter.walletId) await requireOwnerWallet(services, ownerId, filter.walletId);
  const { rows, total } = await ownerApprovals(services.db, ownerId, filter, limit, offset);
  return {
    items: rows.map((a) => ({ ...approvalView(a), wallet_name: a.wallet_name, wallet_username: a.wallet_username, decided_by: a.decided_by })),
    total,
    limit,
    offset,
  };
}

/**
 * Approves or rejects one of the owner's pending approvals through `decideApproval`, which moves
 * the payment or withdrawal and writes its events and audit entry. NOT_FOUND for another owner's
 * approval; INVALID_STATUS when it was already decided or its transaction no longer waits.
 */
export async function decideAsOwner(services: Services, ownerId: string, approvalId: string, decision: 'approved' | 'rejected', via: Via, assertion?: unknown) {
  const { db } = services;
  const seen = await ownerApproval(db, ownerId, approvalId);
  if (!seen) throw approvalNotFound();
  // Rejecting tightens: no passkey. Approving needs the owner's passkey over this approval, once they have one.
  const proof = decision === 'approved' && seen.status === 'pending' ? await ownerProof(services, ownerId, approvalDecision(ownerId, seen), assertion, via) : null;
  const now = services.now().getTime();
  const outcome = await db
    .transaction(async () => {
      if (!(await ownerApproval(db, ownerId, approvalId))) return 'not_found' as const;
      return (await decideApproval(db, approvalId, decision, ownerActor(ownerId, via), now, proof)) ? ('decided' as const) : ('refused' as const);
    });
  if (outcome === 'not_found') throw approvalNotFound();
  const row = (await getApproval(db, approvalId))!;
  if (outcome === 'refused') {
    const why = row.status === 'pending' ? 'its transaction no longer waits for approval (cancelled or expired)' : `it is already ${row.status}`;
    throw new AppError('INVALID_STATUS', `The approval cannot be ${decision}: ${why}.`, {
      howToFix: 'List approvals with status "pending" and decide one of those.',
      details: { status: row.status },
    });
  }
  return { ...approvalView(row), decided_by: row.decided_by };
}

/** The audit log of one of the owner's wallets, newest first. */
export async function walletAuditLog(services: Services, ownerId: string, walletId: string, limit = 20, offset = 0) {
  await requireOwnerWallet(services, ownerId, walletId);
  const { rows, total } = await auditEntries(services.db, walletId, limit, offset);
  return {
    items: rows.map((r) => ({ seq: Number(r.seq), kind: r.kind, actor: r.actor, data: JSON.parse(r.data) as unknown, created_at: iso(r.created_at) })),
    total,
    limit,
    offset,
  };
}

/** Mints an owner API token; the token is returned once and stored hashed. */
export async function mintOwnerToken(services: Services, ownerId: string, rawLabel: string, assertion?: unknown) {
  const checked = checkName(rawLabel || 'owner token');
  if (!checked.ok) throw new AppError('VALIDATION_ERROR', `/label: ${checked.reason}`, { details: { field: '/label' } });
  // A token reads and tightens, but whoever holds it acts as the owner: minting one needs the passkey, once there is one.
  const proof = await ownerProof(services, ownerId, { kind: 'token.mint', owner_id: ownerId, label: checked.value }, assertion, 'dashboard');
  const key = newApiKey('owner');
  const tokenId = newId('ownerToken');
  const now = services.now().getTime();
  await services.db.transaction(async () => {
    await insertOwnerToken(services.db, { token_id: tokenId, owner_id: ownerId, token_hash: key.hash, label: checked.value, now });
    await logToOwnerWallets(services, ownerId, 'owner.token_minted', { token_id: tokenId, label: checked.value, ...(proof ? { passkey: proof } : {}) }, now, 'dashboard');
  });
  return {
    token_id: tokenId,
    token: key.key,
    label: checked.value,
    created_at: iso(now),
    next_step: 'Store the token now: it is shown once. Send it as "Authorization: Bearer <token>" to POST /v1/owner.',
  };
}

/** The owner's tokens (never the secret); `current` marks the token of this call. */
export async function listTokens(services: Services, ownerId: string, currentTokenId?: string) {
  const items = (await listOwnerTokens(services.db, ownerId)).map((t) => ({
    token_id: t.token_id,
    label: t.label,
    created_at: iso(t.created_at),
    revoked_at: iso(t.revoked_at),
    active: t.revoked_at === null,
    current: t.token_id === currentTokenId,
  }));
  return { items, total: items.length };
}

/** Revokes one of the owner's tokens; NOT_FOUND for another owner's, INVALID_STATUS when already revoked. */
export async function revokeToken(services: Services, ownerId: string, tokenId: string) {
  const now = services.now().getTime();
  const revoked = await services.db.transaction(async () => await revokeOwnerToken(services.db, ownerId, tokenId, now));
  if (!revoked) {
    const row = await getOwnerToken(services.db, ownerId, tokenId);
    if (!row) throw new AppError('NOT_FOUND', 'Token not found among your tokens.', { howToFix: 'Use a token_id from the tokens action.' });
    throw new AppError('INVALID_STATUS', 'The token is already revoked.', { howToFix: 'Nothing to do.' });
  }
  return { token_id: tokenId, revoked_at: iso(now) };
}

/** The owner of the calling owner token (the dispatcher authenticated it). */
export function callerOwner(ctx: ActionContext): { ownerId: string; tokenId: string } {
  if (ctx.principal.kind !== 'owner') throw new AppError('UNAUTHORIZED');
  return { ownerId: ctx.principal.ownerId, tokenId: ctx.principal.tokenId };
}

export const ownerActions = implement(OWNER, {
  wallets: async (ctx, p) => await listOwnerWallets(ctx.services, callerOwner(ctx).ownerId, p.limit, p.offset),

  get_guard_rails: async (ctx, p) => {
    await requireOwnerWallet(ctx.services, callerOwner(ctx).ownerId, p.wallet_id);
    return await guardRailsView(ctx.services, p.wallet_id);
  },

  set_guard_rails: async (ctx, p) => await setGuardRails(ctx.services, callerOwner(ctx).ownerId, p.wallet_id, p.rails, 'api'),

  approvals: async (ctx, p) => await listOwnerApprovals(ctx.services, callerOwner(ctx).ownerId, { walletId: p.wallet_id, status: p.status }, p.limit, p.offset),

  approve: async (ctx, p) => await decideAsOwner(ctx.services, callerOwner(ctx).ownerId, p.approval_id, 'approved', 'api'),

  reject: async (ctx, p) => await decideAsOwner(ctx.services, callerOwner(ctx).ownerId, p.approval_id, 'rejected', 'api'),

  fund_requests: async (ctx, p) => {
    const { ownerId } = callerOwner(ctx);
    if (p.wallet_id) await requireOwnerWallet(ctx.services, ownerId, p.wallet_id);
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const { items, total } = await ownerFundRequests(ctx.services.db, ownerId, { walletId: p.wallet_id, status: p.status }, limit, offset);
    return { items: await Promise.all(items.map(async (r) => ({ ...(await fundRequestView(ctx.services, r)), wallet_name: r.wallet_name, wallet_username: r.wallet_username }))), total, limit, offset };
  },

  paylinks: async (ctx, p) => {
    const { ownerId } = callerOwner(ctx);
    if (p.wallet_id) await requireOwnerWallet(ctx.services, ownerId, p.wallet_id);
    const limit = p.limit ?? 20;
    const offset = p.offset ?? 0;
    const filter = { walletId: p.wallet_id, status: p.status };
    const { items, total } = await ownerPaylinks(ctx.services.db, ownerId, filter, ctx.services.now().getTime(), limit, offset);
    return { items: await Promise.all(items.map(async (r) => ({ ...(await paylinkView(ctx.services, r)), wallet_id: r.wallet_id, wallet_name: r.wallet_name, wallet_username: r.wallet_username }))), total, limit, offset };
  },

  resolve_fund_request: async (ctx, p) => {
    const { ownerId } = callerOwner(ctx);
    return await resolveAsOwner(ctx.services, ownerId, p.fund_request_id, p.decision, ownerActor(ownerId, 'api'), p.reason);
  },

  audit_log: async (ctx, p) => await walletAuditLog(ctx.services, callerOwner(ctx).ownerId, p.wallet_id, p.limit, p.offset),

  tokens: async (ctx) => {
    const { ownerId, tokenId } = callerOwner(ctx);
    return await listTokens(ctx.services, ownerId, tokenId);
  },

  revoke_token: async (ctx, p) => await revokeToken(ctx.services, callerOwner(ctx).ownerId, p.token_id),
});
