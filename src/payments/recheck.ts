/**
 * Guard rails at signing time. Rails that tighten apply at once (DESIGN §5), so a payment
 * created under looser rails is checked again before the server takes part in signing it. Its
 * budget was reserved when it was created, so only the per-payment rules are evaluated here
 * (with no other usage counted).
 */
import type { Address } from '@solana/kit';
import { loadEffectiveRails } from '../db/guard-rails.ts';
import type { TxRow } from '../db/transactions.ts';
import { CATEGORIES, decide, type Category, type Decision, type Usage } from '../domain/guardrails.ts';
import type { Services } from '../services.ts';

const NO_USAGE: Usage = {
  daily: 0n,
  weekly: 0n,
  monthly: 0n,
  total: 0n,
  by_category: Object.fromEntries(CATEGORIES.map((c) => [c, { daily: 0n, monthly: 0n }])) as Usage['by_category'],
  payments_today: 0,
  recipient_known: true,
};

/** 'reject': a hard rule now blocks it; 'needs_approval': a pre-approved intent now needs the owner. */
export function recheckRails(services: Services, tx: TxRow, host?: string): { verdict: 'ok' | 'reject' | 'needs_approval'; decision: Decision } {
  const now = services.now();
  const rails = loadEffectiveRails(services.db, tx.wallet_id, now);
  const decision = decide(
    rails,
    { category: (tx.category ?? 'wallet') as Category, amount: tx.amount + tx.fee + tx.setup_fee, recipient: { username: tx.counterparty ?? undefined, address: (tx.to_address ?? '') as Address }, host },
    NO_USAGE,
    now,
  );
  if (decision.outcome === 'rejected') return { verdict: 'reject', decision };
  if (decision.outcome === 'awaiting_approval' && tx.status === 'pre_approved') return { verdict: 'needs_approval', decision };
  return { verdict: 'ok', decision };
}
