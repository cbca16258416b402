/**
 * What a wallet's guard rails allow, in plain words, derived from the rails in force (never
 * hard-coded): a freshly claimed wallet with no rails says the agent may spend up to the balance.
 * Input is the JSON form of the rails (amounts in USDC), as the owner's pages hold it.
 */

/** The fields of the rails document the summary reads. */
export interface RailsWordsInput {
  max_per_payment?: number | string;
  approval_above?: number | string;
  budgets?: { daily?: number | string; weekly?: number | string; monthly?: number | string; total?: number | string };
  max_payments_per_day?: number;
  on_budget_exceeded?: 'require_approval' | 'reject';
  allowed_recipients?: string[];
  approve_new_recipients?: boolean;
  frozen?: boolean;
  loosen_delay_hours?: number;
}

const WINDOW_WORDS: Record<string, string> = { daily: 'a day', weekly: 'a week', monthly: 'a month', total: 'in all' };

const hours = (h: number) => (h === 1 ? '1 hour' : `${h} hours`);

/** The loosening delay in words: "Looser settings wait 24 hours before they apply." */
export function delayWords(delayHours: number | undefined, defaultHours: number): string {
  const h = delayHours ?? defaultHours;
  const origin = delayHours === undefined ? ' (the default)' : '';
  return h > 0 ? `Looser settings wait ${hours(h)} before they apply${origin}.` : `Looser settings apply at once: no loosening delay is set${origin}.`;
}

/**
 * Sentences saying what the rails allow, most important first. `balance` (USDC, null when
 * unknown) makes the no-budget sentence concrete.
 */
export function railsInWords(r: RailsWordsInput, balance: string | number | null, defaultDelayHours: number): string[] {
  const out: string[] = [];
  if (r.frozen) out.push('The wallet is frozen: every payment and withdrawal is refused until you unfreeze it.');
  const windows = Object.entries(r.budgets ?? {}).filter(([, v]) => v !== undefined);
  const beyond = r.on_budget_exceeded === 'reject' ? 'is refused' : 'waits for your approval';
  const upTo = balance === null ? "the wallet's balance" : `the wallet's balance (${balance} USDC)`;
  if (windows.length === 0) out.push(`No budget set: the agent may spend up to ${upTo}.`);
  else out.push(`Budgets: ${windows.map(([w, v]) => `${v} USDC ${WINDOW_WORDS[w] ?? w}`).join(', ')}; a payment beyond them ${beyond}.`);
  if (r.max_payments_per_day !== undefined) out.push(`At most ${r.max_payments_per_day} payments a day; more ${beyond === 'is refused' ? 'are refused' : 'wait for your approval'}.`);
  if (r.max_per_payment !== undefined) out.push(`A payment above ${r.max_per_payment} USDC (amount + fees) is refused.`);
  if (r.approval_above !== undefined) out.push(`Payments above ${r.approval_above} USDC (amount + fees) need your approval.`);
  else out.push('No approval threshold: no payment waits for your approval because of its size.');
  if (r.allowed_recipients !== undefined) {
    const n = r.allowed_recipients.length;
    out.push(n === 0 ? 'No recipient is allowed: every payment is refused.' : `Only ${n} listed recipient${n === 1 ? '' : 's'} can be paid.`);
  }
  if (r.approve_new_recipients) out.push('The first payment to a new recipient waits for your approval.');
  out.push('Withdrawals to an external address always need your approval.');
  out.push(delayWords(r.loosen_delay_hours, defaultDelayHours));
  return out;
}
