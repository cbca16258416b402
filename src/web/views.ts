/** The page bodies. Pure functions of their data: every value goes through `html` (escaped). */
import { DEFAULT_LOOSEN_DELAY_HOURS, type GuardRailsJson } from '../contract/guard-rails.ts';
import { delayWords, railsInWords } from '../domain/rails-words.ts';
import type { HistoryRow } from '../db/owners.ts';
import { formatUsdc } from '../domain/money.ts';
import { amountFeeTotal, type BudgetBar, type MoneyParts, type SpendDay } from '../domain/spending.ts';
import { html, SafeHtml } from './html.ts';
import { transactionReceiptSection, type TransactionReceipt } from './receipt-views.ts';
import { allowCliSection, passkeyRisk } from './passkey-views.ts';

type Approval = {
  approval_id: string;
  wallet_id: string;
  subject_type: string;
  transaction_id: string;
  amount: number | null;
  recipient: string | null;
  reason: string;
  status: string;
  created_at: string | null;
  wallet_name?: string;
  /** The transaction's amount and fees (db/owner-views.ts approvalSubjects); absent: only the approval's total is known. */
  money?: MoneyParts | null;
  /** The agent's note or reason, in its own words; null or absent when it gave none. */
  agent_reason?: string | null;
};

/** An approval's amount as every owner page writes it: amount + fee = total (one formatter, domain/spending.ts). */
export function approvalAmount(a: Pick<Approval, 'amount' | 'money'>): string {
  if (a.money) return amountFeeTotal(a.money);
  return a.amount === null ? '—' : `${a.amount} USDC`;
}

/** The total an approval moves, for button labels: "45.0625 USDC". */
function approvalTotal(a: Pick<Approval, 'amount' | 'money'>): string {
  if (a.money) return `${formatUsdc(a.money.amount + a.money.fee + a.money.setup_fee)} USDC`;
  return a.amount === null ? '' : `${a.amount} USDC`;
}

/** A compact UTC time for tables: 2026-05-01 14:03 UTC. */
export function when(isoTime: string | null | undefined): string {
  if (!isoTime) return '—';
  return `${isoTime.slice(0, 10)} ${isoTime.slice(11, 16)} UTC`;
}

const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`;

export const status = (s: string) => html`<span class="status status-${s.replace(/[^a-z_]/g, '')}">${s.replace(/_/g, ' ')}</span>`;

/** A list of problems, announced to screen readers. */
export function errorList(title: string, errors: string[]): SafeHtml {
  if (errors.length === 0) return html``;
  return html`<div class="errors" role="alert" id="form-errors"><strong>${title}</strong><ul>${errors.map((e) => html`<li>${e}</li>`)}</ul></div>`;
}

export function notice(text: string | null): SafeHtml {
  return text ? html`<p class="notice" role="status">${text}</p>` : html``;
}

// ---------------------------------------------------------------------------------------------
// Claim and sign-in

export interface ClaimView {
  wallet_id: string;
  name: string;
  username: string;
  status: string;
  owner_email_masked: string | null;
  claim_locked_until: string | null;
}

export function claimForm(info: ClaimView, csrf: string, values: { claim_code?: string; email?: string }, errors: string[]): SafeHtml {
  if (info.status === 'claimed') {
    return html`<h1>“${info.name}” is already claimed</h1>
<p>The wallet <span class="mono">@${info.username}</span> has an owner. If that is you, <a href="/login">sign in with your e-mail</a> to open the dashboard.</p>`;
  }
  return html`<h1>Claim the agent wallet “${info.name}”</h1>
<dl class="facts">
  <dt>Username</dt><dd class="mono">@${info.username}</dd>
  <dt>Wallet id</dt><dd class="mono">${info.wallet_id}</dd>
  <dt>Status</dt><dd>${status(info.status)}</dd>
  ${info.owner_email_masked ? html`<dt>Owner named by the agent</dt><dd>${info.owner_email_masked}</dd>` : ''}
</dl>
<p>Enter the claim code your agent received when it registered, and your e-mail address. We mail you a one-time link; opening it makes you the owner and opens your dashboard, where you set the wallet's spending limits.</p>
${info.claim_locked_until ? html`<p class="warning" role="status">Too many wrong codes: claiming is locked until ${when(info.claim_locked_until)}.</p>` : ''}
${errorList('The claim did not go through:', errors)}
<form method="post" action="/claim/${info.wallet_id}" class="stack" novalidate>
  ${csrfField(csrf)}
  <div class="field">
    <label for="claim_code">Claim code</label>
    <input type="text" id="claim_code" name="claim_code" required autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="32" aria-describedby="claim_code_hint" value="${values.claim_code ?? ''}">
    <span class="hint" id="claim_code_hint">Like K7QM-4TZP. Case, spaces and dashes do not matter.</span>
  </div>
  <div class="field">
    <label for="email">Your e-mail address</label>
    <input type="email" id="email" name="email" required autocomplete="email" maxlength="254" value="${values.email ?? ''}">
  </div>
  <div><button type="submit">Send me the claim link</button></div>
</form>`;
}

export function claimSent(name: string, email: string, minutes: number): SafeHtml {
  return html`<h1>Check your e-mail</h1>
<p class="notice" role="status">We sent a one-time link to <strong>${email}</strong>.</p>
<p>Open it within ${minutes} minutes to become the owner of “${name}”. The link works once.</p>
<p class="muted">No mail? Check the spam folder. On a local installation without SMTP, the operator sees the mail with <code>agent-wallet admin mail</code>.</p>`;
}

export function loginForm(csrf: string, email: string, errors: string[], message: string | null): SafeHtml {
  return html`<h1>Sign in</h1>
${notice(message)}
<p>Owners sign in with a one-time link sent to the e-mail address they claimed their wallets with.</p>
${errorList('Check the form:', errors)}
<form method="post" action="/login" class="stack" novalidate>
  ${csrfField(csrf)}
  <div class="field">
    <label for="email">E-mail address</label>
    <input type="email" id="email" name="email" required autocomplete="email" maxlength="254" value="${email}">
  </div>
  <div><button type="submit">Send me a sign-in link</button></div>
</form>
<p class="muted">New here? Claim a wallet with the claim URL and code your agent gave you.</p>`;
}

export function loginSent(email: string, minutes: number): SafeHtml {
  return html`<h1>Check your e-mail</h1>
<p class="notice" role="status">If <strong>${email}</strong> owns wallets here, a sign-in link is on its way. It works once, for ${minutes} minutes.</p>`;
}

/**
 * The page a mailed claim or sign-in link opens: one button, nothing spent yet (mail scanners
 * open links too). The button posts the same link with the page's CSRF token.
 */
export function magicLinkPage(link: { purpose: 'claim'; emailMasked: string; wallet: { name: string; username: string } } | { purpose: 'login'; emailMasked: string }, token: string, csrf: string, minutes: number): SafeHtml {
  const form = (label: string) => html`<form method="post" action="/login/${token}" class="actions">
  ${csrfField(csrf)}
  <button type="submit">${label}</button>
</form>`;
  if (link.purpose === 'claim') {
    return html`<h1>Claim “${link.wallet.name}”</h1>
<p>You are about to become the owner of the agent wallet <span class="mono">@${link.wallet.username}</span> as <strong>${link.emailMasked}</strong>, and open your dashboard.</p>
${form(`Claim “${link.wallet.name}”`)}
<p class="muted">The link works once, within ${minutes} minutes of being sent. Opening it did nothing yet: only the button claims the wallet.</p>`;
  }
  return html`<h1>Sign in</h1>
<p>Sign in to your owner dashboard as <strong>${link.emailMasked}</strong>.</p>
${form('Sign in')}
<p class="muted">The link works once, within ${minutes} minutes of being sent. Opening it did nothing yet: only the button signs you in.</p>`;
}

// ---------------------------------------------------------------------------------------------
// Dashboard

export interface WalletItem {
  wallet_id: string;
  name: string;
  username: string;
  status: string;
  claimed_at: string | null;
  pending_approvals: number;
  /** USDC on chain, formatted; null when the RPC did not answer. */
  balance: string | null;
}

function approvalRows(items: Approval[], csrf: string, showWallet: boolean): SafeHtml {
  return html`<div class="table-wrap"><table class="cards approvals">
<caption class="muted">${items.length} waiting</caption>
<thead><tr>${showWallet ? html`<th scope="col">Wallet</th>` : ''}<th scope="col" class="num">Amount</th><th scope="col">What</th><th scope="col">Why</th><th scope="col">Decide</th></tr></thead>
<tbody>
${items.map(
  (a) => html`<tr id="${a.approval_id}">
  ${showWallet ? html`<td data-label="Wallet"><a href="/dashboard/wallets/${a.wallet_id}">${a.wallet_name ?? a.wallet_id}</a></td>` : ''}
  <td data-label="Amount" class="num amount">${approvalAmount(a)}</td>
  <td data-label="What" class="to">${a.subject_type} to <span class="mono">${a.recipient ?? '—'}</span><br><span class="muted">since ${when(a.created_at)}</span></td>
  <td data-label="Why" class="why"><p class="said"><strong>The agent's reason:</strong> ${a.agent_reason ?? html`<span class="muted">none given</span>`}</p><p class="muted">Why it waits: ${a.reason}</p></td>
  <td data-label="Decide"><div class="actions">
    <form method="post" action="/dashboard/approvals/${a.approval_id}/approve" class="inline" data-passkey>${csrfField(csrf)}<button type="submit" aria-label="Approve ${a.subject_type} of ${approvalTotal(a)} to ${a.recipient ?? ''}">Approve</button></form>
    <form method="post" action="/dashboard/approvals/${a.approval_id}/reject" class="inline">${csrfField(csrf)}<button type="submit" class="secondary" aria-label="Reject ${a.subject_type} of ${approvalTotal(a)} to ${a.recipient ?? ''}">Reject</button></form>
  </div></td>
</tr>`,
)}
</tbody></table></div>`;
}

export function walletsPage(wallets: WalletItem[], pending: Approval[], alarms: SweepAlarm[], csrf: string, message: string | null, asks: { fundRequests: FundRequestItem[]; paylinks: PaylinkItem[]; faucet?: boolean; /** The owner has no passkey: say what that risks. */ noPasskey?: boolean } = { fundRequests: [], paylinks: [] }): SafeHtml {
  const waiting = (n: number) => (n > 0 ? html`<a class="badge" href="#pending">${n} waiting</a>` : html`<span class="muted">—</span>`);
  return html`${sweepAlarm(alarms, csrf)}<h1>Your wallets</h1>
${notice(message)}
${asks.noPasskey ? passkeyRisk() : ''}
${
  wallets.length === 0
    ? html`<p>You have no wallets yet. Open the claim URL your agent gave you to claim one.</p>`
    : html`<div class="table-wrap"><table class="cards">
<thead><tr><th scope="col">Wallet</th><th scope="col" class="num">Balance</th><th scope="col">Waiting for you</th><th scope="col">Status</th><th scope="col">Claimed</th></tr></thead>
<tbody>${wallets.map(
        (w) => html`<tr><td data-label="Wallet"><a href="/dashboard/wallets/${w.wallet_id}"><strong>${w.name}</strong></a><br><span class="mono muted">@${w.username}</span></td><td data-label="Balance" class="num">${w.balance === null ? html`<span class="muted" title="The Solana RPC did not answer">unavailable</span>` : html`<strong>${w.balance}</strong> USDC`}</td><td data-label="Waiting for you">${waiting(w.pending_approvals)}</td><td data-label="Status">${status(w.status)}</td><td data-label="Claimed">${when(w.claimed_at)}</td></tr>`,
      )}</tbody>
</table></div>`
}
<h2 id="pending">Waiting for your approval</h2>
${pending.length === 0 ? (alarms.length === 0 ? html`<p class="muted">Nothing waits for you.</p>` : html`<p class="muted">No payment waits for you; the sweep above does.</p>`) : approvalRows(pending, csrf, true)}
${fundRequestsSection(asks.fundRequests, csrf, asks.faucet ?? false)}
${paylinksSection(asks.paylinks)}`;
}

const RAIL_LABELS: Record<string, string> = {
  max_per_payment: 'Max per payment',
  approval_above: 'Approval above',
  budgets: 'Budgets',
  max_payments_per_day: 'Max payments per day',
  on_budget_exceeded: 'When a budget is exceeded',
  category_caps: 'Category caps',
  allowed_recipients: 'Allowed recipients',
  blocked_recipients: 'Blocked recipients',
  approve_new_recipients: 'Approve new recipients',
  x402_max_per_request: 'x402 max per request',
  x402_daily_per_host: 'x402 per host per day',
  x402_sign_in_disabled: 'x402 sign-in off',
  x402_allowed_hosts: 'x402 allowed hosts',
  active_hours: 'Active hours',
  valid_until: 'Valid until',
  frozen: 'Frozen',
  withdrawal_allowlist: 'Withdrawal allowlist',
  loosen_delay_hours: 'Loosening delay (hours)',
};
const MONEY_RAILS = new Set(['max_per_payment', 'approval_above', 'x402_max_per_request', 'x402_daily_per_host']);

function railValue(key: string, value: unknown): string {
  if (MONEY_RAILS.has(key)) return `${value} USDC`;
  if (key === 'budgets') return Object.entries(value as Record<string, number>).map(([w, v]) => `${w} ${v} USDC`).join(', ');
  if (Array.isArray(value)) return value.length === 0 ? '(none: nobody allowed)' : value.join(', ');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

/** A readable list of a guard-rails document. */
export function railsSummary(rails: GuardRailsJson): SafeHtml {
  const entries = Object.entries(rails);
  if (entries.length === 0) return html`<p class="muted">No guard rails: every payment the balance covers is pre-approved (withdrawals still need you).</p>`;
  return html`<dl class="facts">${entries.map(([k, v]) => html`<dt>${RAIL_LABELS[k] ?? k}</dt><dd>${railValue(k, v)}</dd>`)}</dl>`;
}

/** The values the common guard-rails form shows. */
export interface RailsFormValues {
  max_per_payment: string;
  approval_above: string;
  daily: string;
  weekly: string;
  monthly: string;
  total: string;
  max_payments_per_day: string;
  on_budget_exceeded: string;
  approve_new_recipients: boolean;
  frozen: boolean;
  allowed_recipients: string;
  blocked_recipients: string;
  loosen_delay_hours: string;
}

/** The form values of a guard-rails document. */
export function railsFormValues(doc: GuardRailsJson): RailsFormValues {
  const s = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  return {
    max_per_payment: s(doc.max_per_payment),
    approval_above: s(doc.approval_above),
    daily: s(doc.budgets?.daily),
    weekly: s(doc.budgets?.weekly),
    monthly: s(doc.budgets?.monthly),
    total: s(doc.budgets?.total),
    max_payments_per_day: s(doc.max_payments_per_day),
    on_budget_exceeded: s(doc.on_budget_exceeded),
    approve_new_recipients: doc.approve_new_recipients === true,
    frozen: doc.frozen === true,
    allowed_recipients: (doc.allowed_recipients ?? []).join('\n'),
    blocked_recipients: (doc.blocked_recipients ?? []).join('\n'),
    loosen_delay_hours: s(doc.loosen_delay_hours),
  };
}

/** The default loosening delay as the form's hint says it. */
function defaultDelay(): string {
  return DEFAULT_LOOSEN_DELAY_HOURS > 0 ? `${DEFAULT_LOOSEN_DELAY_HOURS} hours` : '0 hours (looser values apply at once)';
}

const AMOUNT_PATTERN = '[0-9]{1,15}([.][0-9]{1,6})?';

function amountField(id: string, label: string, value: string, hint: string, invalid: boolean): SafeHtml {
  return html`<div class="field">
  <label for="${id}">${label}</label>
  <input type="text" id="${id}" name="${id}" inputmode="decimal" pattern="${AMOUNT_PATTERN}" autocomplete="off" value="${value}" aria-describedby="${id}_hint"${invalid ? new SafeHtml(' aria-invalid="true"') : ''}>
  <span class="hint" id="${id}_hint">${hint}</span>
</div>`;
}

export interface WalletPageData {
  wallet: { wallet_id: string; name: string; username: string; address: string; claimed_at: string | null };
  balance: number | null;
  rails: { rails: GuardRailsJson; pending: { rails: GuardRailsJson; apply_at: string } | null; updated_at: string | null };
  form: RailsFormValues;
  advanced: string;
  errors: { field: string; message: string }[];
  pending: Approval[];
  history: HistoryRow[];
  historyTotal: number;
  spending: SpendingView;
  /** The change form starts open: nothing is set yet, or it comes back with errors. */
  editRails: boolean;
  /** The latest audit entries, each as a sentence (domain/audit-sentence.ts), newest first. */
  audit: { sentence: string; kind: string; created_at: string | null }[];
  exports: ExportItem[];
  recovery: RecoveryItem;
  csrf: string;
  message: string | null;
  /** Whether the owner has a passkey: without one the page says what that risks; with one it offers the "allow the CLI once" forms. */
  hasPasskey?: boolean;
}

/** What the dashboard knows of a wallet's recovery kit: whether one is enrolled, its fingerprint and date — never the kit. */
export interface RecoveryItem {
  enrolled: boolean;
  fingerprint: string | null;
  enrolled_at: string | null;
  in_progress: { enrollment_id: string; status: string; expires_at: string | null } | null;
  /** An announced sweep not completed: what the owner may cancel until it is signed. */
  sweep: { sweep_id: string; to_address: string; status: string; executes_at: string | null; created_at: string | null; transaction: { status: string; signature: string | null } | null } | null;
}

/** The owner's recovery kit: enrolled or not, with the fingerprint to compare with the kit's. */
function recoverySection(walletId: string, r: RecoveryItem): SafeHtml {
  return html`<h2 id="recovery">Recovery kit</h2>
<p class="hint">A recovery kit is your own third share of this wallet's key, made on your machine with the agent-wallet CLI and never shown here. With it you can move the whole balance to an address you name if the agent's key is lost, or, with the agent, if this service disappears.</p>
${
  r.enrolled
    ? html`<p>${status('enrolled')} ${when(r.enrolled_at)} — fingerprint <code class="mono" id="recovery-fingerprint">${r.fingerprint ?? ''}</code>. It should match the fingerprint your CLI printed for the kit.</p>`
    : html`<p class="muted">No kit enrolled. On your own machine: <code>agent-wallet owner recovery start ${walletId}</code>.</p>`
}
${r.in_progress ? html`<p class="muted">An enrollment is in progress (${r.in_progress.status}, until ${when(r.in_progress.expires_at)}).</p>` : ''}
${r.sweep ? sweepNotice(r.sweep) : ''}`;
}

/** An announced sweep in the Recovery section: what it is, and what to do after cancelling (the Cancel button is the alarm's, atop the page). */
function sweepNotice(sw: NonNullable<RecoveryItem['sweep']>): SafeHtml {
  const signed = sw.transaction !== null && sw.transaction.signature !== null;
  return html`<div class="panel" role="status" id="sweep"><p><strong>A sweep of this wallet's whole USDC balance to <code class="mono">${sw.to_address}</code> was announced.</strong> ${
    signed ? html`It is signed and ${sw.transaction!.status}.` : html`It can be signed with the recovery kit from ${when(sw.executes_at)} on; the agent's API key is revoked.`
  }</p>${
    signed
      ? ''
      : html`<p class="hint">If you did not start it, cancel it with the button in the alarm at the top of this page; then rotate your owner tokens and, after a key refresh, enroll a new kit.</p>`
  }</div>`;
}

/** An announced sweep as the alarm shows it: the wallet, the balance it takes, where to, from when. */
export interface SweepAlarm {
  wallet_id: string;
  wallet_name: string;
  /** The wallet's USDC now, formatted; null when the RPC did not answer. */
  balance: string | null;
  sweep: NonNullable<RecoveryItem['sweep']>;
}

/**
 * The red banner atop dashboard home and the wallet page while a sweep of the whole balance is
 * announced: the 24 h delay protects only an owner who notices. A Cancel button until it is signed.
 */
export function sweepAlarm(alarms: SweepAlarm[], csrf: string): SafeHtml {
  if (alarms.length === 0) return html``;
  return html`${alarms.map((a) => {
    const signed = a.sweep.transaction !== null && a.sweep.transaction.signature !== null;
    const amount = a.balance === null ? 'The whole USDC balance' : html`The whole balance, <strong>${a.balance} USDC</strong> now,`;
    return html`<section class="alarm" role="alert" aria-labelledby="alarm-${a.sweep.sweep_id}">
<h2 id="alarm-${a.sweep.sweep_id}">A sweep of “${a.wallet_name}” is announced</h2>
<p>${amount} goes to <code class="mono">${a.sweep.to_address}</code> ${
      signed ? html`— it is signed and ${a.sweep.transaction!.status}: it can no longer be cancelled.` : html`once your recovery kit signs it, possible from <strong>${when(a.sweep.executes_at)}</strong> on. The agent's API key is revoked meanwhile.`
    }</p>
${
  signed
    ? ''
    : html`<form method="post" action="/dashboard/sweeps/${a.sweep.sweep_id}/cancel" class="actions">${csrfField(csrf)}<button type="submit">Cancel the sweep</button><span>If you did not start it, cancel it now${a.sweep.status === 'signing' ? ' (a signing round is open)' : ''}; nothing moves.</span></form>`
}
</section>`;
  })}`;
}

/** The page a mailed cancel link opens: what the sweep would do, and one button; nothing happened yet. */
export function sweepCancelConfirmPage(a: SweepAlarm, action: string, csrf: string): SafeHtml {
  return html`<h1>Cancel the sweep of “${a.wallet_name}”?</h1>
<dl class="facts">
  <dt>Wallet</dt><dd>${a.wallet_name}</dd>
  <dt>Amount</dt><dd><strong>${a.balance === null ? 'the whole USDC balance' : `${a.balance} USDC (the whole balance now)`}</strong></dd>
  <dt>To</dt><dd class="mono">${a.sweep.to_address}</dd>
  <dt>Signable from</dt><dd>${when(a.sweep.executes_at)}</dd>
  <dt>Announced</dt><dd>${when(a.sweep.created_at)}</dd>
</dl>
<p>Cancelling stops this sweep: nothing moves, and the kit cannot sign it any more. It is the safe choice if you did not start it. Opening this page did nothing yet.</p>
<form method="post" action="${action}" class="actions">
  ${csrfField(csrf)}
  <button type="submit" class="danger">Cancel the sweep</button>
</form>
<p class="muted">This link can only cancel this sweep; it does not sign you in. <a href="/dashboard/wallets/${a.wallet_id}">Open the wallet on your dashboard</a> (sign in if asked).</p>`;
}

/** After a cancel by mail link: what happened and what to do next. */
export function sweepCancelledPage(a: Pick<SweepAlarm, 'wallet_id' | 'wallet_name'> & { to_address: string }): SafeHtml {
  return html`<h1>Sweep cancelled</h1>
<p class="notice" role="status">The sweep of “${a.wallet_name}” to <span class="mono">${a.to_address}</span> is cancelled: nothing moves.</p>
<p>If you did not start it, someone used your owner account and your recovery kit: <a href="/dashboard/wallets/${a.wallet_id}">sign in to the dashboard</a>, rotate your owner tokens, and after a key refresh enroll a new kit. The agent's API key stays revoked until you rotate it there.</p>`;
}

export interface ExportItem {
  export_id: string;
  created_at: string | null;
  active: boolean;
  revoked_at: string | null;
  imports: number;
  last_import_at: string | null;
}

/** The wallet's .wlt exports with a revoke button each, and the bot API key rotation. */
function keysSection(walletId: string, exports: ExportItem[], csrf: string): SafeHtml {
  return html`<h2 id="keys">Exports and API key</h2>
<p class="hint">An export (.wlt file) holds the agent's key share and API key; it can be imported while it is active. Revoke an export you did not expect or whose file may have leaked.</p>
${
  exports.length === 0
    ? html`<p class="muted">No exports.</p>`
    : html`<div class="table-wrap"><table class="cards">
<thead><tr><th scope="col">Export</th><th scope="col">Created</th><th scope="col">Imports</th><th scope="col">Status</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
<tbody>${exports.map(
        (e) => html`<tr id="${e.export_id}"><td data-label="Export" class="mono">${e.export_id}</td><td data-label="Created">${when(e.created_at)}</td><td data-label="Imports">${e.imports}${e.last_import_at ? html` <span class="muted">(last ${when(e.last_import_at)})</span>` : ''}</td><td data-label="Status">${e.active ? status('active') : html`${status('revoked')} ${when(e.revoked_at)}`}</td>
<td data-label="Action">${e.active ? html`<form method="post" action="/dashboard/exports/${e.export_id}/revoke" class="inline">${csrfField(csrf)}<button type="submit" class="secondary" aria-label="Revoke export ${e.export_id}">Revoke</button></form>` : ''}</td></tr>`,
      )}</tbody>
</table></div>`
}
<form method="post" action="/dashboard/wallets/${walletId}/rotate-key" class="stack">
  ${csrfField(csrf)}
  <p class="hint">Rotating the agent's API key refuses the old key at once and revokes every export above. You get the new key once and hand it to the agent (<code>agent-wallet set-api-key</code>); until then the agent cannot reach its wallet.</p>
  <label class="check"><input type="checkbox" name="confirm" value="1" required> The agent stops working until I give it the new key</label>
  <div><button type="submit" class="danger">Rotate the API key</button></div>
</form>`;
}

/** The new bot API key after a rotation, shown once. */
export function rotatedKeyPage(wallet: { wallet_id: string; name: string }, rotated: { api_key: string; revoked_exports: string[] }): SafeHtml {
  return html`<p><a href="/dashboard/wallets/${wallet.wallet_id}">← ${wallet.name}</a></p>
<h1>New API key for ${wallet.name}</h1>
<div class="panel" role="status"><p>Copy it now: it is shown only once. The old key is refused from now on.</p><code class="token" id="new-api-key">${rotated.api_key}</code></div>
<p>Give it to the agent, which stores it with <code>agent-wallet set-api-key</code> (the key is read from stdin). ${rotated.revoked_exports.length === 0 ? 'No export was active.' : `Revoked exports: ${rotated.revoked_exports.length} (they carried the old key).`}</p>`;
}

/** The wallet's latest transactions; each row opens its detail page. */
function historySection(rows: HistoryRow[], total: number): SafeHtml {
  return html`<h2 id="history">History</h2>
${
  rows.length === 0
    ? html`<p class="muted">No transactions yet.</p>`
    : html`<div class="table-wrap"><table class="history">
<caption class="muted">${rows.length < total ? `The latest ${rows.length} of ${total}` : `${total} in all`}</caption>
<thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Counterparty</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Fees</th><th scope="col">Status</th></tr></thead>
<tbody>${rows.map(
        (t) => html`<tr><td class="h-when"><a href="/dashboard/transactions/${t.transaction_id}" aria-label="${t.type} of ${formatUsdc(t.amount)} USDC, ${when(new Date(Number(t.created_at)).toISOString())}: details">${when(new Date(Number(t.created_at)).toISOString())}</a></td><td class="h-what">${t.type}${t.direction === 'in' ? ' (in)' : ''}</td><td class="h-who mono">${t.counterparty ?? t.to_address ?? '—'}</td><td class="h-amount num">${t.direction === 'in' ? '+' : '−'}${formatUsdc(t.amount)} USDC</td><td class="h-fees num"><span class="phone-only">fees </span>${formatUsdc(t.fee + t.setup_fee)}</td><td class="h-status">${status(t.status)}</td></tr>`,
      )}</tbody>
</table></div>`
}`;
}

export interface TransactionDetail {
  transaction_id: string;
  wallet: { wallet_id: string; name: string };
  type: string;
  direction: string;
  status: string;
  amount: bigint;
  fee: bigint;
  setup_fee: bigint;
  counterparty: string | null;
  to_address: string | null;
  note: string | null;
  reference: string | null;
  signature: string | null;
  explorer_url: string | null;
  decision_rule: string | null;
  decision_reason: string | null;
  approval: { status: string; decided_by: string | null; decided_at: string | null } | null;
  error: string | null;
  created_at: string;
  completed_at: string | null;
  /** The signed receipt of a completed transaction (receipt-views.ts transactionReceipt); null: none. */
  receipt: TransactionReceipt | null;
}

/** One transaction as its owner checks it: money, parties, state on chain, the rule that decided it, and its signed receipt read out. */
export function transactionPage(t: TransactionDetail): SafeHtml {
  const out = t.direction === 'out';
  const total = out ? t.amount + t.fee + t.setup_fee : t.amount;
  const row = (label: string, value: SafeHtml | string | null) => (value === null || value === '' ? '' : html`<dt>${label}</dt><dd>${value}</dd>`);
  return html`<p><a href="/dashboard/wallets/${t.wallet.wallet_id}#history">← ${t.wallet.name}</a></p>
<h1>${out ? 'Sent' : 'Received'} ${formatUsdc(t.amount)} USDC ${status(t.status)}</h1>
<section class="money" aria-label="Amounts">
  <dl class="facts">
    <dt>Amount</dt><dd class="num">${formatUsdc(t.amount)} USDC</dd>
    ${out ? html`<dt>Platform fee</dt><dd class="num">${formatUsdc(t.fee)} USDC</dd>` : ''}
    ${out && t.setup_fee > 0n ? html`<dt>Account setup fee</dt><dd class="num">${formatUsdc(t.setup_fee)} USDC</dd>` : ''}
    <dt>${out ? 'Total debited' : 'Total credited'}</dt><dd class="num"><strong>${formatUsdc(total)} USDC</strong></dd>
  </dl>
</section>
<dl class="facts detail">
  ${row('Type', t.type)}
  ${row(out ? 'Recipient' : 'From', t.counterparty)}
  ${row(out ? 'Recipient address' : 'Sender address', t.to_address ? html`<span class="mono">${t.to_address}</span>` : null)}
  ${row('Status', status(t.status))}
  ${row('Why it failed', t.error)}
  ${row('Created', when(t.created_at))}
  ${row('Completed', t.completed_at ? when(t.completed_at) : null)}
  ${row('Note', t.note)}
  ${row('Reference', t.reference ? html`<span class="mono">${t.reference}</span>` : null)}
  ${row('Decided by', t.decision_rule ? html`<span class="mono">${t.decision_rule}</span>${t.decision_reason ? html` — ${t.decision_reason}` : ''}` : t.decision_reason)}
  ${row('Your approval', t.approval ? html`${status(t.approval.status)}${t.approval.decided_at ? html` ${when(t.approval.decided_at)}` : ''}${t.approval.decided_by ? html` <span class="muted">via ${t.approval.decided_by}</span>` : ''}` : null)}
  ${row(
    'Chain signature',
    t.signature
      ? html`<span class="mono">${t.signature}</span>${t.explorer_url ? html`<br><a href="${t.explorer_url}" rel="noreferrer">View on Solana Explorer</a>` : html`<br><span class="muted">This network has no public explorer.</span>`}`
      : null,
  )}
  ${row('Transaction id', html`<span class="mono">${t.transaction_id}</span>`)}
</dl>
${transactionReceiptSection(t.receipt, t.status)}`;
}

export function walletPage(d: WalletPageData): SafeHtml {
  const f = d.form;
  const bad = (name: string) => d.errors.some((e) => e.field.startsWith(`/rails/${name}`) || e.field.startsWith(`/rails/budgets/${name}`));
  const section = (href: string, label: string) => html`<a href="${href}">${label}</a>`;
  const alarm = d.recovery.sweep ? sweepAlarm([{ wallet_id: d.wallet.wallet_id, wallet_name: d.wallet.name, balance: d.balance === null ? null : String(d.balance), sweep: d.recovery.sweep }], d.csrf) : html``;
  return html`${alarm}<p><a href="/dashboard">← All wallets</a></p>
<h1>${d.wallet.name} <span class="mono muted handle">@${d.wallet.username}</span></h1>
${notice(d.message)}
${d.hasPasskey === false ? passkeyRisk() : ''}
<section class="money" aria-label="Balance">
  <div>
    <p class="label">Balance</p>
    <p class="amount">${d.balance === null ? html`<span class="muted">unavailable</span>` : html`${d.balance} <span class="unit">USDC</span>`}</p>
    ${d.balance === null ? html`<p class="hint">The Solana RPC did not answer; reload later.</p>` : ''}
  </div>
  <dl class="facts">
    <dt>Deposit address</dt><dd class="mono">${d.wallet.address}</dd>
    <dt>Wallet id</dt><dd class="mono">${d.wallet.wallet_id}</dd>
    <dt>Claimed</dt><dd>${when(d.wallet.claimed_at)}</dd>
  </dl>
</section>
<nav class="sections" aria-label="Wallet sections">
  ${section('#approvals', d.pending.length ? `Approvals (${d.pending.length})` : 'Approvals')}
  ${section('#spending', 'Spending')}
  ${section('#history', 'History')}
  ${section('#rails', 'Guard rails')}
  ${section('#keys', 'Keys')}
  ${section('#recovery', 'Recovery')}
  ${section('#audit', 'Audit log')}
</nav>

<h2 id="approvals">Waiting for your approval</h2>
${d.pending.length === 0 ? html`<p class="muted">Nothing waits for you.</p>` : approvalRows(d.pending, d.csrf, false)}

${spendingSection(d.spending)}

${historySection(d.history, d.historyTotal)}

<h2 id="rails">Guard rails</h2>
<p><strong>What the agent may do now</strong></p>
<ul id="rails-words">${railsInWords(d.rails.rails, d.balance, DEFAULT_LOOSEN_DELAY_HOURS).map((w) => html`<li>${w}</li>`)}</ul>
${railsSummary(d.rails.rails)}
${
  d.rails.pending
    ? html`<div class="warning"><h3>Loosening scheduled for ${when(d.rails.pending.apply_at)}</h3>${railsSummary(d.rails.pending.rails)}</div>`
    : ''
}
<details class="edit"${d.editRails ? new SafeHtml(' open') : ''}>
<summary>Change guard rails</summary>
<p class="hint">Stricter values apply at once. Looser values wait for the loosening delay in force, which keeps a stolen session from opening the wallet instantly. Now: ${delayWords(d.rails.rails.loosen_delay_hours, DEFAULT_LOOSEN_DELAY_HOURS)} Amounts are USDC and count amount + fees; leave a field empty for no limit.</p>
${errorList('The guard rails were not saved:', d.errors.map((e) => e.message))}
<form method="post" action="/dashboard/wallets/${d.wallet.wallet_id}/rails" class="stack" novalidate data-passkey>
  ${csrfField(d.csrf)}
  <fieldset><legend>Per payment</legend><div class="grid2">
    ${amountField('max_per_payment', 'Max per payment', f.max_per_payment, 'Above: rejected.', bad('max_per_payment'))}
    ${amountField('approval_above', 'Approval above', f.approval_above, 'Above: waits for you.', bad('approval_above'))}
  </div></fieldset>
  <fieldset><legend>Budgets</legend><div class="grid2">
    ${amountField('daily', 'Daily budget', f.daily, 'Per calendar day.', bad('daily'))}
    ${amountField('weekly', 'Weekly budget', f.weekly, 'Weeks start on Monday.', bad('weekly'))}
    ${amountField('monthly', 'Monthly budget', f.monthly, 'Per calendar month.', bad('monthly'))}
    ${amountField('total', 'Total budget', f.total, 'For the life of the wallet.', bad('total'))}
  </div>
  <div class="grid2">
    <div class="field">
      <label for="max_payments_per_day">Max payments per day</label>
      <input type="number" id="max_payments_per_day" name="max_payments_per_day" min="0" step="1" inputmode="numeric" value="${f.max_payments_per_day}"${bad('max_payments_per_day') ? new SafeHtml(' aria-invalid="true"') : ''}>
    </div>
    <div class="field">
      <label for="on_budget_exceeded">When a budget or the count is exceeded</label>
      <select id="on_budget_exceeded" name="on_budget_exceeded">
        <option value=""${f.on_budget_exceeded === '' ? new SafeHtml(' selected') : ''}>Ask me (default)</option>
        <option value="require_approval"${f.on_budget_exceeded === 'require_approval' ? new SafeHtml(' selected') : ''}>Ask me</option>
        <option value="reject"${f.on_budget_exceeded === 'reject' ? new SafeHtml(' selected') : ''}>Reject the payment</option>
      </select>
    </div>
  </div></fieldset>
  <fieldset><legend>Recipients</legend>
    <div class="field">
      <label for="allowed_recipients">Allowed recipients</label>
      <textarea id="allowed_recipients" name="allowed_recipients" rows="3" aria-describedby="allowed_hint"${bad('allowed_recipients') ? new SafeHtml(' aria-invalid="true"') : ''}>${f.allowed_recipients}</textarea>
      <span class="hint" id="allowed_hint">Usernames or Solana addresses, one per line. Empty: anyone.</span>
    </div>
    <div class="field">
      <label for="blocked_recipients">Blocked recipients</label>
      <textarea id="blocked_recipients" name="blocked_recipients" rows="3"${bad('blocked_recipients') ? new SafeHtml(' aria-invalid="true"') : ''}>${f.blocked_recipients}</textarea>
    </div>
    <label class="check"><input type="checkbox" name="approve_new_recipients" value="1"${f.approve_new_recipients ? new SafeHtml(' checked') : ''}> Ask me before the first payment to a new recipient</label>
  </fieldset>
  <fieldset><legend>Safety</legend>
    <label class="check"><input type="checkbox" name="frozen" value="1"${f.frozen ? new SafeHtml(' checked') : ''}> Freeze the wallet (every payment is rejected)</label>
    <div class="field">
      <label for="loosen_delay_hours">Loosening delay (hours)</label>
      <input type="number" id="loosen_delay_hours" name="loosen_delay_hours" min="0" max="720" step="any" inputmode="decimal" value="${f.loosen_delay_hours}" placeholder="${String(DEFAULT_LOOSEN_DELAY_HOURS)}" aria-describedby="delay_hint"${bad('loosen_delay_hours') ? new SafeHtml(' aria-invalid="true"') : ''}>
      <span class="hint" id="delay_hint">How long a looser setting waits before it applies. Empty: the default, ${defaultDelay()}.</span>
    </div>
  </fieldset>
  <div><button type="submit">Save guard rails</button></div>
</form>
<details>
  <summary>Edit every rule as JSON (category caps, active hours, x402 hosts, withdrawal allowlist, valid until)</summary>
  <form method="post" action="/dashboard/wallets/${d.wallet.wallet_id}/rails-json" class="stack" novalidate data-passkey>
    ${csrfField(d.csrf)}
    <div class="field">
      <label for="rails_json">Guard-rails document</label>
      <textarea id="rails_json" name="rails_json" rows="14" spellcheck="false">${d.advanced}</textarea>
    </div>
    <div><button type="submit">Save document</button></div>
  </form>
</details>
</details>

${keysSection(d.wallet.wallet_id, d.exports, d.csrf)}

${recoverySection(d.wallet.wallet_id, d.recovery)}
${d.hasPasskey ? allowCliSection(d.wallet.wallet_id, d.csrf) : ''}

<h2 id="audit">Audit log</h2>
${
  d.audit.length === 0
    ? html`<p class="muted">Nothing recorded yet.</p>`
    : html`<ul class="audit">${d.audit.map((a) => html`<li>${when(a.created_at)} · ${a.sentence}</li>`)}</ul>`
}
<p>Export: <a href="/dashboard/wallets/${d.wallet.wallet_id}/transactions.csv" download>transactions (CSV)</a> · <a href="/dashboard/wallets/${d.wallet.wallet_id}/decision-log.jsonl" download>decision log (JSONL)</a>. <span class="muted">Every decision is chained to the one before and signed by the daemon's log key; check the file on your own machine with <code>agent-wallet owner verify-log FILE</code>.</span></p>`;
}

export interface TokenItem {
  token_id: string;
  label: string;
  created_at: string | null;
  revoked_at: string | null;
  active: boolean;
}

export function tokensPage(tokens: TokenItem[], csrf: string, minted: { token: string; label: string } | null, errors: string[], message: string | null): SafeHtml {
  return html`<h1>Owner API tokens</h1>
${notice(message)}
<p>A token lets a program act as you on <code>POST /v1/owner</code> (list wallets, set guard rails, approve, reject). Send it as <code>Authorization: Bearer wallet_owner_…</code>.</p>
${
  minted
    ? html`<div class="panel" role="status"><h2>New token “${minted.label}”</h2><p>Copy it now: it is shown only once.</p><code class="token" id="new-token">${minted.token}</code></div>`
    : ''
}
<h2>Create a token</h2>
${errorList('The token was not created:', errors)}
<form method="post" action="/dashboard/tokens" class="stack" data-passkey>
  ${csrfField(csrf)}
  <div class="field">
    <label for="label">Label</label>
    <input type="text" id="label" name="label" maxlength="64" required placeholder="e.g. approval bot">
  </div>
  <div><button type="submit">Create token</button></div>
</form>
<h2>Your tokens</h2>
${
  tokens.length === 0
    ? html`<p class="muted">No tokens yet.</p>`
    : html`<div class="table-wrap"><table class="cards">
<thead><tr><th scope="col">Label</th><th scope="col">Id</th><th scope="col">Created</th><th scope="col">Status</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
<tbody>${tokens.map(
        (t) => html`<tr><td data-label="Label">${t.label}</td><td data-label="Id" class="mono">${t.token_id}</td><td data-label="Created">${when(t.created_at)}</td><td data-label="Status">${t.active ? status('active') : html`${status('revoked')} ${when(t.revoked_at)}`}</td>
<td data-label="Action">${t.active ? html`<form method="post" action="/dashboard/tokens/${t.token_id}/revoke" class="inline">${csrfField(csrf)}<button type="submit" class="secondary" aria-label="Revoke token ${t.label}">Revoke</button></form>` : ''}</td></tr>`,
      )}</tbody>
</table></div>`
}`;
}

// ---------------------------------------------------------------------------------------------
// Approval links

/** What an approval lets the agent do, in the words of its kind. */
const SUBJECT_WORDS: Record<string, string> = { payment: 'this payment', withdrawal: 'this withdrawal', x402: 'this purchase' };

export function approvalConfirmPage(a: Approval & { wallet_name: string; wallet_username: string }, decision: 'approved' | 'rejected', token: string, csrf: string): SafeHtml {
  const verb = decision === 'approved' ? 'Approve' : 'Reject';
  const what = SUBJECT_WORDS[a.subject_type] ?? 'this payment';
  return html`<h1>${verb} ${what}?</h1>
<dl class="facts">
  <dt>Wallet</dt><dd>${a.wallet_name} <span class="mono">@${a.wallet_username}</span></dd>
  <dt>Amount</dt><dd><strong>${approvalAmount(a)}</strong></dd>
  <dt>To</dt><dd class="mono">${a.recipient ?? '—'}</dd>
  <dt>The agent's reason</dt><dd>${a.agent_reason ?? html`<span class="muted">none given</span>`}</dd>
  <dt>Why it waits</dt><dd>${a.reason}</dd>
  <dt>Requested</dt><dd>${when(a.created_at)}</dd>
</dl>
<p>${decision === 'approved' ? `Approving lets the agent sign and send ${what}.` : `Rejecting stops ${what}; the agent is told.`} The link works once.</p>
<form method="post" action="/approval/${token}" class="actions"${decision === 'approved' ? new SafeHtml(' data-passkey') : ''}>
  ${csrfField(csrf)}
  <button type="submit"${decision === 'rejected' ? new SafeHtml(' class="danger"') : ''}>${verb} ${approvalTotal(a)}</button>
</form>
<p><a href="/dashboard/wallets/${a.wallet_id}">Decide on the dashboard instead</a></p>`;
}

export function approvalDonePage(a: Approval, decision: 'approved' | 'rejected'): SafeHtml {
  return html`<h1>${decision === 'approved' ? 'Approved' : 'Rejected'}</h1>
<p class="notice" role="status">The ${a.subject_type} of ${approvalAmount(a)} to ${a.recipient ?? '—'} is ${decision}.</p>
<p>${decision === 'approved' ? 'The agent can now confirm and send it.' : 'The agent learns that you rejected it.'} <a href="/dashboard/wallets/${a.wallet_id}">Open the wallet</a>.</p>`;
}

// ---------------------------------------------------------------------------------------------
// Spending at a glance (wallet page)

/** The wallet page's spending figures: the budget bars and the last 30 days, in the rails' time zone. */
export interface SpendingView {
  bars: BudgetBar[];
  days: SpendDay[];
  /** The time zone of the budget windows (the rails' active_hours zone, else UTC). */
  timezone: string;
}

/** Fill colours: the page's accent, the warning brown near the limit, the error red at or over it. */
const BAR_FILL = { ok: '#0b57d0', near: '#7d4e00', over: '#a40e26' } as const;
const CHART_FILL = { payments: '#0b57d0', x402: '#b35900' } as const;

/** A bar as a 100-unit-wide SVG (integer units; widths are attributes, so it draws with CSS off). The text beside it is what assistive technology reads. */
function barSvg(percent: number): SafeHtml {
  const filled = Math.min(100, Math.max(0, percent));
  const fill = percent >= 100 ? BAR_FILL.over : percent >= 80 ? BAR_FILL.near : BAR_FILL.ok;
  return html`<svg class="bar" viewBox="0 0 100 6" width="100%" height="12" preserveAspectRatio="none" aria-hidden="true" focusable="false"><rect width="100" height="6" fill="#e6e9ed"/><rect width="${filled}" height="6" fill="${fill}"/></svg>`;
}

function budgetItem(b: BudgetBar): SafeHtml {
  if (b.limit === null) {
    return html`<li><span class="bar-label"><strong>${b.label}</strong>: ${formatUsdc(b.used)} USDC spent</span> <span class="muted">— no ${b.window} budget set</span></li>`;
  }
  const figures = b.unit === 'payments' ? `${b.used} of ${b.limit} payments` : `${formatUsdc(b.used)} of ${formatUsdc(b.limit)} USDC`;
  return html`<li><span class="bar-label"><strong>${b.label}</strong>: ${figures} (${b.percent}%)</span> <span class="muted mono">${b.rule}</span>${barSvg(b.percent ?? 0)}</li>`;
}

/**
 * Chart geometry in SVG user units: 30 columns of 20, bars 14 wide, 100 high under a 14-unit
 * margin. The labels are HTML around the SVG (text inside a stretched SVG would shrink to nothing on a phone).
 */
const CHART = { col: 20, bar: 14, top: 14, height: 100, bottom: 2 } as const;

/** The last days as stacked columns (payments below, x402 above), scaled in integers to the busiest day. */
function spendChart(days: SpendDay[], timezone: string): SafeHtml {
  const totals = days.map((d) => d.payments + d.x402);
  const max = totals.reduce((m, t) => (t > m ? t : m), 0n);
  const sumPayments = days.reduce((s, d) => s + d.payments, 0n);
  const sumX402 = days.reduce((s, d) => s + d.x402, 0n);
  const width = days.length * CHART.col;
  const base = CHART.top + CHART.height;
  const h = (v: bigint) => (max === 0n ? 0 : Number((v * BigInt(CHART.height)) / max));
  const first = days[0]?.date ?? '';
  const last = days[days.length - 1]?.date ?? '';
  const busiest = days.find((d, i) => totals[i] === max && max > 0n);
  const desc = `${days.length} days from ${first} to ${last} (${timezone}): payments ${formatUsdc(sumPayments)} USDC, x402 ${formatUsdc(sumX402)} USDC${busiest ? `; the busiest day ${busiest.date} with ${formatUsdc(max)} USDC` : '; nothing spent'}.`;
  const columns = days.map((d, i) => {
    const hp = h(d.payments);
    const hx = h(d.payments + d.x402) - hp;
    const x = i * CHART.col + (CHART.col - CHART.bar) / 2;
    return html`${hp > 0 ? html`<rect x="${x}" y="${base - hp}" width="${CHART.bar}" height="${hp}" fill="${CHART_FILL.payments}"/>` : ''}${hx > 0 ? html`<rect x="${x}" y="${base - hp - hx}" width="${CHART.bar}" height="${hx}" fill="${CHART_FILL.x402}"/>` : ''}`;
  });
  return html`<figure class="chart">
<p class="chart-top" aria-hidden="true">${max === 0n ? 'Nothing spent' : `Top line: ${formatUsdc(max)} USDC`}</p>
<svg class="chart" viewBox="0 0 ${width} ${base + CHART.bottom}" width="${width}" height="${base + CHART.bottom}" preserveAspectRatio="none" role="img" aria-labelledby="chart-title chart-desc">
<title id="chart-title">Spending per day, last ${days.length} days</title>
<desc id="chart-desc">${desc}</desc>
<line x1="0" y1="${base}" x2="${width}" y2="${base}" stroke="#8c959f" stroke-width="1" vector-effect="non-scaling-stroke"/>
<line x1="0" y1="${CHART.top}" x2="${width}" y2="${CHART.top}" stroke="#d0d7de" stroke-width="1" stroke-dasharray="3 3" vector-effect="non-scaling-stroke"/>
${columns}
</svg>
<p class="chart-axis" aria-hidden="true"><span>${first}</span> <span>… ${last}</span></p>
<figcaption><span class="key"><svg width="12" height="12" aria-hidden="true" focusable="false"><rect width="12" height="12" fill="${CHART_FILL.payments}"/></svg> Payments ${formatUsdc(sumPayments)} USDC</span> <span class="key"><svg width="12" height="12" aria-hidden="true" focusable="false"><rect width="12" height="12" fill="${CHART_FILL.x402}"/></svg> x402 ${formatUsdc(sumX402)} USDC</span></figcaption>
</figure>
<details class="numbers"><summary>Spending per day as a table</summary>
<div class="table-wrap"><table class="daily">
<caption class="visually-hidden">Spending per day, last ${days.length} days (${timezone}), amount + fees in USDC</caption>
<thead><tr><th scope="col">Day</th><th scope="col" class="num">Payments</th><th scope="col" class="num">x402</th></tr></thead>
<tbody>${[...days].reverse().map((d) => html`<tr><th scope="row">${d.date}</th><td class="num">${formatUsdc(d.payments)}</td><td class="num">${formatUsdc(d.x402)}</td></tr>`)}</tbody>
</table></div>
</details>`;
}

/** Budgets as bars (what the rules will decide on) and the last 30 days as a chart, above the history. */
function spendingSection(s: SpendingView): SafeHtml {
  return html`<h2 id="spending">Spending</h2>
<ul class="budgets" aria-label="Spending against the budgets">${s.bars.map(budgetItem)}</ul>
<p class="hint">Amount + fees, as the guard rails count them: spent, and reserved by payments not yet settled. Days and weeks (from Monday) start at midnight ${s.timezone}.</p>
${spendChart(s.days, s.timezone)}`;
}

// ---------------------------------------------------------------------------------------------
// Fund requests and paylinks (dashboard home)

/** An open fund request as the dashboard lists it. */
export interface FundRequestItem {
  fund_request_id: string;
  wallet_id: string;
  wallet_name: string;
  amount: bigint;
  reason: string;
  created_at: string | null;
}

/** An open paylink of one of the owner's wallets. */
export interface PaylinkItem {
  request_id: string;
  wallet_id: string;
  wallet_name: string;
  description: string;
  amount: bigint | null;
  short_code: string;
  expires_at: string | null;
}

/**
 * The agents' open fund requests: what, why, a fund page to pay from, on simnet a button that sends
 * the amount from the simnet faucet, and Decline… (folded: a reason the agent is told, optional, and the button).
 */
export function fundRequestsSection(items: FundRequestItem[], csrf: string, faucet = false): SafeHtml {
  return html`<h2 id="fund-requests">Fund requests</h2>
${
  items.length === 0
    ? html`<p class="muted">No agent asks for money.</p>`
    : html`<div class="table-wrap"><table class="cards">
<caption class="muted">${items.length} open</caption>
<thead><tr><th scope="col">Wallet</th><th scope="col" class="num">Amount</th><th scope="col">The agent's reason</th><th scope="col">Since</th><th scope="col">Act</th></tr></thead>
<tbody>${items.map((f) => {
        const what = `the request of ${formatUsdc(f.amount)} USDC from ${f.wallet_name}`;
        return html`<tr id="${f.fund_request_id}"><td data-label="Wallet"><a href="/dashboard/wallets/${f.wallet_id}">${f.wallet_name}</a></td><td data-label="Amount" class="num">${formatUsdc(f.amount)} USDC</td><td data-label="The agent's reason">${f.reason}</td><td data-label="Since">${when(f.created_at)}</td>
<td data-label="Act"><div class="actions"><a class="button" href="/fund/${f.fund_request_id}">Fund</a>${
          faucet
            ? html`<form method="post" action="/dashboard/fund-requests/${f.fund_request_id}/faucet" class="inline">${csrfField(csrf)}<button type="submit" aria-label="Send ${formatUsdc(f.amount)} USDC from the simnet faucet to ${f.wallet_name}">Send from the simnet faucet</button></form>`
            : ''
        }</div>
<details class="decline"><summary>Decline…</summary><form method="post" action="/dashboard/fund-requests/${f.fund_request_id}/decline" class="field">${csrfField(csrf)}<label for="reason-${f.fund_request_id}">Reason for declining <span class="muted">(optional; the agent reads it)</span></label><input type="text" id="reason-${f.fund_request_id}" name="reason" maxlength="200" autocomplete="off"><div><button type="submit" class="secondary" aria-label="Decline ${what}">Decline</button></div></form></details></td></tr>`;
      })}</tbody>
</table></div>
<p class="hint">Fund opens the deposit address and QR code; a deposit that covers the request fulfils it by itself${faucet ? ' (the simnet faucet sends such a deposit)' : ''}. Decline… asks for an optional reason; declining tells the agent, with your reason if you give one.</p>`
}`;
}

/** The wallets' open paylinks (what the agent asks others to pay), each with its checkout page. */
export function paylinksSection(items: PaylinkItem[]): SafeHtml {
  return html`<h2 id="paylinks">Open paylinks</h2>
${
  items.length === 0
    ? html`<p class="muted">No open paylinks.</p>`
    : html`<div class="table-wrap"><table class="cards">
<caption class="muted">${items.length} open</caption>
<thead><tr><th scope="col">Wallet</th><th scope="col">For</th><th scope="col" class="num">Amount</th><th scope="col">Expires</th><th scope="col">Checkout</th></tr></thead>
<tbody>${items.map(
        (p) => html`<tr id="${p.request_id}"><td data-label="Wallet"><a href="/dashboard/wallets/${p.wallet_id}">${p.wallet_name}</a></td><td data-label="For">${p.description}</td><td data-label="Amount" class="num">${p.amount === null ? 'any amount' : `${formatUsdc(p.amount)} USDC`}</td><td data-label="Expires">${when(p.expires_at)}</td><td data-label="Checkout"><a href="/pay/${p.short_code}">/pay/${p.short_code}</a></td></tr>`,
      )}</tbody>
</table></div>`
}`;
}
