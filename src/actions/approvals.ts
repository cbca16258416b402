/**
 * The agent's view of the owner's rails and decisions: my_limits, pending_approvals and
 * approval_status (a long poll, DESIGN §7 "Push, not polling"). Also the budget summary that
 * `balance` shows.
 */
import { AppError } from '../errors.ts';
import { APPROVALS } from '../contract/approvals.ts';
import { railsToJson } from '../contract/guard-rails.ts';
import { getApproval, pendingApprovals, type ApprovalRow } from '../db/approvals.ts';
import { loadRailsState, saveRails } from '../db/guard-rails.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import { approvalStatusOf } from '../db/owners.ts';
import { computeUsage } from '../db/usage.ts';
import { getWallet, type WalletRow } from '../db/wallets.ts';
import { CATEGORIES, remaining, windowStarts, type Category, type GuardRails, type Remaining } from '../domain/guardrails.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { effectiveRails } from '../domain/rails-change.ts';
import type { Services } from '../services.ts';
import type { ActionContext } from '../action-context.ts';
import { implement } from './registry.ts';

/** How often a long poll re-reads the approval. */
const POLL_MS = 100;

const iso = (ms: bigint | number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
const usdcOrNull = (micro: bigint | null) => (micro === null ? null : toUsdcNumber(micro));

async function botWallet(ctx: ActionContext): Promise<WalletRow> {
  if (ctx.principal.kind !== 'bot') throw new AppError('UNAUTHORIZED');
  const wallet = await getWallet(ctx.services.db, ctx.principal.walletId);
  if (!wallet) throw new AppError('UNAUTHORIZED');
  return wallet;
}

/** An approval as the agent and the owner see it. */
export function approvalView(a: ApprovalRow) {
  return {
    approval_id: a.approval_id,
    wallet_id: a.wallet_id,
    subject_type: a.subject_type,
    transaction_id: a.subject_id,
    amount: usdcOrNull(a.amount),
    recipient: a.recipient,
    reason: a.reason,
    status: a.status,
    created_at: iso(a.created_at),
    decided_at: iso(a.decided_at),
  };
}

const CONFIRM: Record<ApprovalRow['subject_type'], string> = { payment: 'confirm_payment', withdrawal: 'confirm_withdrawal', x402: 'x402_confirm' };

/** What the agent should do next for an approval in its current status. */
export function approvalNextStep(a: ApprovalRow): string {
  switch (a.status) {
    case 'pending':
      return `Wait for the owner: call approval_status {"approval_id":"${a.approval_id}","wait_seconds":30} until the status changes.`;
    case 'approved':
      return `The owner approved it: continue with ${CONFIRM[a.subject_type]} {"transaction_id":"${a.subject_id}"}.`;
    case 'rejected':
      return 'The owner rejected it: nothing will be paid. Ask the owner before trying again.';
    default:
      return `The approval is ${a.status}: nothing will be paid. Create a new ${a.subject_type} if it is still needed.`;
  }
}

/** The tightest budget window: the configured one with the least remaining (ties: the shorter window). */
export function tightestBudget(rails: GuardRails, rem: Remaining): { budget: { window: string; amount: number } | null; remaining_allowance: number | null } {
  let best: { window: 'daily' | 'weekly' | 'monthly' | 'total'; left: bigint } | null = null;
  for (const window of ['daily', 'weekly', 'monthly', 'total'] as const) {
    const left = rem[window];
    if (left === null || rails.budgets?.[window] === undefined) continue;
    if (best === null || left < best.left) best = { window, left };
  }
  if (!best) return { budget: null, remaining_allowance: null };
  return { budget: { window: best.window, amount: toUsdcNumber(rails.budgets![best.window]!) }, remaining_allowance: toUsdcNumber(best.left) };
}

/** Rails in force, usage and what remains for a wallet at the services' current time. */
export async function walletAllowance(services: Services, walletId: string) {
  const now = services.now();
  const state = await loadRailsState(services.db, walletId);
  const rails = effectiveRails(state.current, state.pending, now);
  const pending = state.pending && now.getTime() < state.pending.apply_at.getTime() ? state.pending : null;
  const timezone = rails.active_hours?.timezone ?? 'UTC';
  const starts = windowStarts(now, timezone);
  const usage = await computeUsage(services.db, walletId, starts, { address: '' });
  const rem = remaining(rails, usage);
  return { now, rails, pending, timezone, starts, usage, remaining: rem, ...tightestBudget(rails, rem) };
}

/** The windows of a Usage or a Remaining as JSON numbers (`usdc` converts one amount). */
function windowsJson<T>(w: { daily: T; weekly: T; monthly: T; total: T; payments_today: number | null; by_category: Record<Category, { daily: T; monthly: T }> }, usdc: (v: T) => number | null) {
  return {
    daily: usdc(w.daily),
    weekly: usdc(w.weekly),
    monthly: usdc(w.monthly),
    total: usdc(w.total),
    payments_today: w.payments_today,
    by_category: Object.fromEntries(CATEGORIES.map((c) => [c, { daily: usdc(w.by_category[c].daily), monthly: usdc(w.by_category[c].monthly) }])),
  };
}

export const approvalActions = implement(APPROVALS, {
  my_limits: async (ctx) => {
    const w = await botWallet(ctx);
    const a = await walletAllowance(ctx.services, w.wallet_id);
    return {
      rails: railsToJson(a.rails),
      pending_change: a.pending ? { rails: railsToJson(a.pending.rails), apply_at: a.pending.apply_at.toISOString() } : null,
      timezone: a.timezone,
      windows: { daily_start: a.starts.daily.toISOString(), weekly_start: a.starts.weekly.toISOString(), monthly_start: a.starts.monthly.toISOString() },
      used: windowsJson(a.usage, toUsdcNumber),
      remaining: windowsJson(a.remaining, usdcOrNull),
      budget: a.budget,
      remaining_allowance: a.remaining_allowance,
      frozen: a.rails.frozen === true,
      note: 'Limits count amount + fees; withdrawals always need the owner. Remaining is null where no limit is set.',
    };
  },

  freeze: async (ctx, p) => {
    const w = await botWallet(ctx);
    const { db } = ctx.services;
    const nowDate = ctx.services.now();
    const now = nowDate.getTime();
    const reason = p.reason ?? null;
    const already = await db
      .transaction(async () => {
        const state = await loadRailsState(db, w.wallet_id);
        const current = effectiveRails(state.current, state.pending, nowDate);
        const pending = state.pending && now < state.pending.apply_at.getTime() ? state.pending : null;
        if (current.frozen && (!pending || pending.rails.frozen)) return true;
        // Tightening applies at once; a loosening the owner scheduled keeps its time but stays frozen.
        const frozen = { current: { ...current, frozen: true }, pending: pending && { ...pending, rails: { ...pending.rails, frozen: true } } };
        await saveRails(db, w.wallet_id, { ...frozen, now, by: 'agent' });
        await appendAudit(db, { walletId: w.wallet_id, actor: 'agent', kind: 'guard_rails.frozen', data: { reason }, now });
        await appendEvent(db, { walletId: w.wallet_id, type: 'guard_rails.updated', data: { rails: railsToJson(frozen.current), frozen_by: 'agent', reason }, now });
        return false;
      });
    return {
      frozen: true,
      already_frozen: already,
      reason,
      next_step: 'Every payment, withdrawal and x402 purchase is refused until the owner unfreezes the wallet (guard rails, frozen off).',
    };
  },

  pending_approvals: async (ctx) => {
    const w = await botWallet(ctx);
    const items = (await pendingApprovals(ctx.services.db, w.wallet_id)).map((a) => ({ ...approvalView(a), next_step: approvalNextStep(a) }));
    return { items, total: items.length };
  },

  approval_status: async (ctx, p) => {
    const w = await botWallet(ctx);
    const notFound = () => new AppError('NOT_FOUND', 'Approval not found.', { howToFix: 'Use an approval_id of this wallet, as pay, withdraw or pending_approvals returned it.' });
    const first = await getApproval(ctx.services.db, p.approval_id);
    if (!first || first.wallet_id !== w.wallet_id) throw notFound();
    // Wall-clock wait (not services.now()): this bounds how long the HTTP request is held.
    const deadline = performance.now() + (p.wait_seconds ?? 0) * 1000;
    let status = first.status as string | null;
    while (status === 'pending' && performance.now() < deadline) {
      await Bun.sleep(Math.min(POLL_MS, Math.max(1, deadline - performance.now())));
      status = await approvalStatusOf(ctx.services.db, p.approval_id);
    }
    const row = status === first.status ? first : await getApproval(ctx.services.db, p.approval_id);
    if (!row) throw notFound();
    return { ...approvalView(row), next_step: approvalNextStep(row) };
  },
});
