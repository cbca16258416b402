/**
 * The web pages (DESIGN §7): claim, magic-link landing, sign-in, owner dashboard, API tokens and
 * the confirmation page of approval links, plus the stylesheet. A mailed link's GET spends
 * nothing (mail scanners open links before the person does): it shows one button, and the POST
 * of that button, with the same token and a CSRF token, claims, signs in or decides.
 * Server-rendered; the flows work without JavaScript. The pages are a thin layer over the functions the API actions use
 * (src/actions/owner.ts, src/actions/claim.ts), so both answer alike. Every POST carries a CSRF
 * token; form bodies are read with a size cap (routes use `parse: 'none'`).
 */
import { Elysia } from 'elysia';
import type { Address } from '@solana/kit';
import { claimInfo, followMagicLink, MAGIC_LINK_MINUTES, magicLinkInfo, requestLogin, resetByLink, startClaim, type LinkFailure } from '../actions/claim.ts';
import {
  decideAsOwner,
  desiredRails,
  guardRailsView,
  listOwnerApprovals,
  listOwnerWallets,
  listTokens,
  mintOwnerToken,
  railsChangeDecision,
  requireOwnerWallet,
  revokeToken,
  setGuardRails,
  walletAuditLog,
} from '../actions/owner.ts';
import { approvalView, walletAllowance } from '../actions/approvals.ts';
import { approvalSubjects, spendBuckets } from '../db/owner-views.ts';
import { ownerFundRequest, ownerFundRequests } from '../db/fund-requests.ts';
import { listPaylinks } from '../db/paylinks.ts';
import { declineReason, resolveAsOwner } from '../earning/funding.ts';
import { simnetFaucet } from '../simnet/faucet-client.ts';
import { ownerActor } from '../domain/owner-actor.ts';
import { budgetBars, dayStarts, spendByDay } from '../domain/spending.ts';
import { listWalletExports, revokeOwnerExport, rotateBotKey } from '../actions/wallet-keys.ts';
import { recoveryStatus } from '../actions/recovery-enroll.ts';
import { cancelSweep, openSweepOf, sweepLinkInfo, type SweepLinkFailure } from '../actions/recovery-sweep.ts';
import { AppError } from '../errors.ts';
import { railsToJson, type GuardRailsJson } from '../contract/guard-rails.ts';
import { walletHistory } from '../db/owners.ts';
import { auditNames } from '../db/audit-names.ts';
import { auditSentence } from '../domain/audit-sentence.ts';
import { formatUsdc, toUsdcNumber } from '../domain/money.ts';
import { explorerTxUrl } from '../domain/explorer.ts';
import { getTx } from '../db/transactions.ts';
import { getApproval, type ApprovalRow } from '../db/approvals.ts';
import { usdcAta } from '../solana/ata.ts';
import { approvalLinkInfo, decideByLink, type ApprovalLinkFailure } from '../mail/approval-mail.ts';
import type { Services } from '../services.ts';
import { checkName } from '../domain/identity.ts';
import { approvalDecision, hasPasskey } from '../owner/passkeys.ts';
import { allPasskeys } from '../db/passkeys.ts';
import { passkeyOptions, passkeyRoutes } from './passkey-routes.ts';
import { assertionOf, csrfRefused, ownerNav as nav, ownerPage, wantsPasskeyOptions } from './owner-page.ts';
import { passkeySignInPage, resetStartedPage } from './passkey-views.ts';
import { html, pageResponse, problemPage, redirect, type Nav } from './html.ts';
import { errorPage, page, type Ctx } from './page-handler.ts';
import {
  anonymousCsrf,
  currentOwner,
  endSession,
  newSession,
  readForm,
  validAnonymousCsrf,
  validSessionCsrf,
  type OwnerSession,
} from './session.ts';
import { FAVICON_SVG, STYLE_CSS } from './style.ts';
import { transactionReceipt } from './receipt-views.ts';
import {
  approvalConfirmPage,
  approvalDonePage,
  claimForm,
  claimSent,
  loginForm,
  loginSent,
  magicLinkPage,
  railsFormValues,
  rotatedKeyPage,
  sweepCancelConfirmPage,
  sweepCancelledPage,
  tokensPage,
  transactionPage,
  walletPage,
  walletsPage,
  type FundRequestItem,
  type PaylinkItem,
  type RailsFormValues,
  type SpendingView,
  type SweepAlarm,
} from './views.ts';

/** Fixed notices after a redirect (never text from the query string). */
const favicon = () => new Response(FAVICON_SVG, { headers: { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' } });

const NOTICES: Record<string, string> = {
  rails: 'Guard rails saved and in force.',
  rails_pending: 'Guard rails saved: stricter values apply now, looser ones after the loosening delay.',
  approved: 'Approved. The agent can now confirm the payment.',
  rejected: 'Rejected. The agent is told.',
  revoked: 'Token revoked.',
  export_revoked: 'Export revoked: its file can no longer be imported.',
  sweep_cancelled: 'Sweep cancelled: nothing moves. Rotate the agent\'s API key below to let it work again.',
  claimed: 'The wallet is yours. Set its guard rails below.',
  signed_out: 'You are signed out.',
  fund_declined: 'Fund request declined. The agent is told.',
  fund_faucet: 'Test USDC sent from the simnet faucet. The request is fulfilled when the deposit is seen, as any deposit that covers it (a few seconds); reload to see it.',
};

/** The simnet faucet answers here: a simnet daemon that knows its simnet's RPC (as the fund page's button). */
const simnetFaucetOn = (services: Services) => services.config.solana.network === 'simnet' && Boolean(services.simnetRpcUrl);

/** Days the wallet page's spending chart shows. */
const CHART_DAYS = 30;

/**
 * The wallet page's spending: the budget bars from `walletAllowance` (the rails in force, their
 * time zone's window starts and computeUsage — what the next payment's decision reads) and the
 * last 30 local days from the same trigger-kept buckets.
 */
async function spendingOf(services: Services, walletId: string): Promise<SpendingView> {
  const a = await walletAllowance(services, walletId);
  const starts = dayStarts(a.now, a.timezone, CHART_DAYS);
  const points = await spendBuckets(services.db, walletId, starts[0]!.getTime());
  return { bars: budgetBars(a.rails, a.usage), days: spendByDay(starts, points, a.timezone), timezone: a.timezone };
}

/** Approvals with their transaction's amount and fees and the agent's own words (one read for the page). */
/** The wallet's latest audit entries as sentences, with names for the ids they hold. */
async function auditLines(services: Services, ownerId: string, walletId: string, walletName: string) {
  const items = (await walletAuditLog(services, ownerId, walletId, 10, 0)).items;
  const names = { ...(await auditNames(services.db, walletId, walletName, items)), passkeys: new Map((await allPasskeys(services.db, ownerId)).map((k) => [k.credential_id, k.name])) };
  return items.map((a) => ({ sentence: auditSentence(a, names), kind: a.kind, created_at: a.created_at }));
}

async function withSubjects<A extends { approval_id: string }>(services: Services, items: A[]): Promise<(A & { money: { amount: bigint; fee: bigint; setup_fee: bigint } | null; agent_reason: string | null })[]> {
  const subjects = await approvalSubjects(services.db, items.map((a) => a.approval_id));
  return items.map((a) => {
    const s = subjects.get(a.approval_id);
    return { ...a, money: s ? { amount: s.amount, fee: s.fee, setup_fee: s.setup_fee } : null, agent_reason: s?.agent_reason ?? null };
  });
}

function noticeOf(request: Request): string | null {
  const key = new URL(request.url).searchParams.get('done');
  return key ? (NOTICES[key] ?? null) : null;
}


function withCookie(res: Response, setCookie: string | null): Response {
  if (setCookie) res.headers.append('Set-Cookie', setCookie);
  return res;
}

const LINK_PAGES: Record<LinkFailure, { status: number; title: string; text: string }> = {
  unknown: { status: 404, title: 'This link is not valid', text: 'The link is incomplete or was never issued.' },
  used: { status: 410, title: 'This link was already used', text: 'Each sign-in and claim link works once.' },
  expired: { status: 410, title: 'This link has expired', text: `Sign-in and claim links work for ${MAGIC_LINK_MINUTES} minutes.` },
  claimed: { status: 410, title: 'This wallet is already claimed', text: 'The wallet this link was for has an owner now.' },
  passkey: { status: 403, title: 'Your passkey is needed', text: 'This account has a passkey: a mailed link alone does not sign in.' },
};

function linkFailurePage(reason: LinkFailure, walletId: string | null): Response {
  const p = LINK_PAGES[reason];
  const todo =
    reason === 'passkey'
      ? html`Open the link again in a browser that runs this site's own scripts and confirm with your passkey when it asks (the link still works: nothing was spent). Lost your passkey? The same page offers to start a reset.`
      : reason === 'claimed'
      ? html`If you are the owner, <a href="/login">sign in with your e-mail</a>.`
      : walletId
        ? html`Open the <a href="/claim/${walletId}">claim page</a> again and enter the claim code to get a new link, or <a href="/login">sign in</a> if you already claimed the wallet.`
        : html`<a href="/login">Ask for a new sign-in link</a>.`;
  return problemPage(p.status, p.title, p.text, todo);
}

const APPROVAL_LINK_PAGES: Record<ApprovalLinkFailure, { status: number; title: string; text: string }> = {
  unknown: { status: 404, title: 'This approval link is not valid', text: 'The link is incomplete or was never issued.' },
  used: { status: 410, title: 'This approval link was already used', text: 'Approve and reject links work once.' },
  expired: { status: 410, title: 'This approval link has expired', text: 'Approve and reject links work for 48 hours.' },
  decided: { status: 410, title: 'Already decided', text: 'This request is no longer waiting for you.' },
};

function approvalFailurePage(reason: ApprovalLinkFailure, status: string | null, walletId: string | null): Response {
  const p = APPROVAL_LINK_PAGES[reason];
  const text = reason === 'decided' && status ? `${p.text} Its status is: ${status}.` : p.text;
  const todo = walletId
    ? html`See the current state on <a href="/dashboard/wallets/${walletId}">your dashboard</a> (sign in if asked).`
    : html`Open <a href="/dashboard">your dashboard</a> to see what waits for you.`;
  return problemPage(p.status, p.title, text, todo);
}

const SWEEP_LINK_PAGES: Record<SweepLinkFailure, { status: number; title: string; text: string }> = {
  unknown: { status: 404, title: 'This cancel link is not valid', text: 'The link is incomplete or was never issued.' },
  cancelled: { status: 410, title: 'This sweep is already cancelled', text: 'Nothing moves: the recovery kit cannot sign it any more.' },
  signed: { status: 410, title: 'This sweep can no longer be cancelled', text: 'It was signed with the recovery kit and sent to Solana.' },
};

function sweepLinkFailurePage(reason: SweepLinkFailure, walletId: string | null): Response {
  const p = SWEEP_LINK_PAGES[reason];
  const todo = walletId
    ? html`See the wallet on <a href="/dashboard/wallets/${walletId}">your dashboard</a> (sign in if asked).`
    : html`Open <a href="/dashboard">your dashboard</a> to see your wallets' sweeps.`;
  return problemPage(p.status, p.title, p.text, todo, {}, { 'X-Robots-Tag': 'noindex' });
}

/** USDC of one address on chain, formatted; null when the RPC does not answer (the page still renders). */
async function balanceOf(services: Services, address: string): Promise<string | null> {
  const [amount] = (await balancesOf(services, [address])) ?? [];
  return amount === undefined ? null : formatUsdc(amount);
}

/** Lines of a textarea as a list; none → undefined (the field is left out: no restriction). */
function lines(value: string | null): string[] | undefined {
  const items = (value ?? '')
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return items.length > 0 ? items : undefined;
}

/** The whole-number or decimal fields: a number when it looks like one, else the text (so validation names it). */
function numeric(value: string | null, integer: boolean): number | string | undefined {
  const v = (value ?? '').trim();
  if (v === '') return undefined;
  if (integer ? /^[0-9]{1,9}$/.test(v) : /^[0-9]{1,9}(\.[0-9]+)?$/.test(v)) return Number(v);
  return v;
}

/**
 * The document the common form asks for: the fields of the form replace those of `base` (the
 * document being edited), the rules the form does not show are kept.
 */
function railsFromForm(form: URLSearchParams, base: GuardRailsJson): { doc: Record<string, unknown>; values: RailsFormValues } {
  const text = (k: string) => (form.get(k) ?? '').trim();
  const doc: Record<string, unknown> = { ...base };
  const set = (k: string, v: unknown) => {
    if (v === undefined || v === '') delete doc[k];
    else doc[k] = v;
  };
  set('max_per_payment', text('max_per_payment'));
  set('approval_above', text('approval_above'));
  const budgets = Object.fromEntries((['daily', 'weekly', 'monthly', 'total'] as const).map((w) => [w, text(w)]).filter(([, v]) => v !== ''));
  set('budgets', Object.keys(budgets).length > 0 ? budgets : undefined);
  set('max_payments_per_day', numeric(form.get('max_payments_per_day'), true));
  set('on_budget_exceeded', text('on_budget_exceeded'));
  set('allowed_recipients', lines(form.get('allowed_recipients')));
  set('blocked_recipients', lines(form.get('blocked_recipients')));
  set('approve_new_recipients', form.get('approve_new_recipients') ? true : undefined);
  set('frozen', form.get('frozen') ? true : undefined);
  set('loosen_delay_hours', numeric(form.get('loosen_delay_hours'), false));
  const values: RailsFormValues = {
    max_per_payment: text('max_per_payment'),
    approval_above: text('approval_above'),
    daily: text('daily'),
    weekly: text('weekly'),
    monthly: text('monthly'),
    total: text('total'),
    max_payments_per_day: text('max_payments_per_day'),
    on_budget_exceeded: text('on_budget_exceeded'),
    approve_new_recipients: Boolean(form.get('approve_new_recipients')),
    frozen: Boolean(form.get('frozen')),
    allowed_recipients: form.get('allowed_recipients') ?? '',
    blocked_recipients: form.get('blocked_recipients') ?? '',
    loosen_delay_hours: text('loosen_delay_hours'),
  };
  return { doc, values };
}

async function renderWallet(
  services: Services,
  s: OwnerSession,
  walletId: string,
  opts: { status?: number; form?: RailsFormValues; advanced?: string; errors?: { field: string; message: string }[]; message?: string | null } = {},
): Promise<Response> {
  const wallet = await requireOwnerWallet(services, s.ownerId, walletId);
  let balance: number | null = null;
  try {
    balance = toUsdcNumber(await services.chain.getTokenBalance(wallet.address as Address, services.config.usdcMint as Address));
  } catch {
    balance = null; // shown as unavailable; the rest of the page still works
  }
  const desired = railsToJson(await desiredRails(services, walletId));
  const history = await walletHistory(services.db, walletId, 20, 0);
  const body = walletPage({
    wallet: { wallet_id: wallet.wallet_id, name: wallet.name, username: wallet.username, address: wallet.address, claimed_at: wallet.claimed_at === null ? null : new Date(Number(wallet.claimed_at)).toISOString() },
    balance,
    rails: await guardRailsView(services, walletId),
    form: opts.form ?? railsFormValues(desired),
    advanced: opts.advanced ?? JSON.stringify(desired, null, 2),
    errors: opts.errors ?? [],
    pending: await withSubjects(services, (await listOwnerApprovals(services, s.ownerId, { walletId, status: 'pending' }, 100, 0)).items),
    history: history.rows,
    historyTotal: history.total,
    spending: await spendingOf(services, walletId),
    editRails: opts.form !== undefined || opts.advanced !== undefined || (opts.errors?.length ?? 0) > 0 || Object.keys(desired).length === 0,
    audit: await auditLines(services, s.ownerId, walletId, wallet.name),
    exports: (await listWalletExports(services, s.ownerId, walletId, 50, 0)).items,
    recovery: { ...(await recoveryStatus(services, s.ownerId, walletId)), sweep: await openSweepOf(services, walletId) },
    csrf: s.csrf,
    message: opts.message ?? null,
    hasPasskey: await hasPasskey(services, s.ownerId),
  });
  return pageResponse(opts.status ?? 200, wallet.name, body, nav(s, 'wallets'));
}

/** The owner's wallet, or null when it is not theirs (or does not exist). */
async function ownerWalletOrNull(services: Services, ownerId: string, walletId: string) {
  try {
    return await requireOwnerWallet(services, ownerId, walletId);
  } catch (err) {
    if (err instanceof AppError && err.errorCode === 'NOT_FOUND') return null;
    throw err;
  }
}

/** USDC balances of `addresses` on chain, in one batched read; null when the RPC does not answer (the list still renders). */
async function balancesOf(services: Services, addresses: string[]): Promise<bigint[] | null> {
  try {
    const mint = services.config.usdcMint as Address;
    const accounts = await Promise.all(addresses.map((a) => usdcAta(a as Address, mint)));
    const { amounts } = await services.chain.getTokenAmounts(accounts);
    return amounts.map((a) => a ?? 0n);
  } catch {
    return null;
  }
}

/** Saves guard rails from a page; on a validation error the page comes back with the errors and the input. */
async function saveRailsFromPage(services: Services, s: OwnerSession, walletId: string, doc: unknown, redisplay: { form?: RailsFormValues; advanced?: string }, assertion?: string): Promise<Response> {
  try {
    const result = await setGuardRails(services, s.ownerId, walletId, doc, 'dashboard', assertion);
    return redirect(`/dashboard/wallets/${walletId}?done=${result.pending ? 'rails_pending' : 'rails'}#rails`);
  } catch (err) {
    if (err instanceof AppError && err.errorCode === 'VALIDATION_ERROR') {
      const errors = (err.details.errors as { field: string; message: string }[] | undefined) ?? [{ field: '/rails', message: err.message }];
      return renderWallet(services, s, walletId, { status: 400, ...redisplay, errors });
    }
    throw err;
  }
}

/** The pages as an Elysia plugin; mounted by createApp with `.use(webRoutes(services))`. */
export function webRoutes(services: Services) {
  const noParse = { parse: 'none' as const };
  return (
    new Elysia({ name: 'web' })
      .get('/static/style.css', () => new Response(STYLE_CSS, { headers: { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' } }))
      .get('/favicon.svg', () => favicon())
      .get('/favicon.ico', () => favicon())
      .get('/', () => redirect('/dashboard'))

      // ---- claim -------------------------------------------------------------------------
      .get(
        '/claim/:wallet_id',
        page(services, async ({ request, params }) => {
          const info = await claimInfoOrNull(services, params.wallet_id!);
          if (!info) return problemPage(404, 'Wallet not found', 'No wallet has this claim URL.', 'Check the claim URL your agent gave you: it ends in the wallet id (wal_…).');
          const csrf = anonymousCsrf(services, request);
          return withCookie(pageResponse(200, `Claim ${info.name}`, claimForm(info, csrf.token, {}, [])), csrf.setCookie);
        }),
      )
      .post(
        '/claim/:wallet_id',
        page(services, async ({ request, params }) => {
          const info = await claimInfoOrNull(services, params.wallet_id!);
          if (!info) return problemPage(404, 'Wallet not found', 'No wallet has this claim URL.', 'Check the claim URL your agent gave you.');
          const form = await readForm(request);
          if (!validAnonymousCsrf(request, form.get('csrf'))) return csrfRefused();
          const values = { claim_code: form.get('claim_code') ?? '', email: form.get('email') ?? '' };
          try {
            const sent = await startClaim(services, info.wallet_id, values.claim_code, values.email);
            return pageResponse(200, 'Check your e-mail', claimSent(info.name, sent.email, MAGIC_LINK_MINUTES));
          } catch (err) {
            if (!(err instanceof AppError) || err.errorCode === 'NOT_FOUND') throw err;
            const fresh = await claimInfo(services, info.wallet_id);
            const errors = [err.message.replace(/^\/(claim_code|email): /, (_m, f: string) => (f === 'email' ? 'E-mail: ' : 'Claim code: ')), err.howToFix];
            return pageResponse(err.status, `Claim ${info.name}`, claimForm(fresh, form.get('csrf') ?? '', { email: values.email }, errors), {}, err.headers);
          }
        }),
        noParse,
      )

      // ---- sign-in -----------------------------------------------------------------------
      .get(
        '/login',
        page(services, async ({ request }) => {
          // A signed-in owner may switch: one browser holds one owner's session at a time.
          const signedIn = await currentOwner(services, request);
          const csrf = anonymousCsrf(services, request);
          const message = signedIn
            ? `You are signed in as ${signedIn.email}. Sign in with another e-mail to switch this browser to that owner: a browser holds one owner's session at a time, and the new sign-in ends this one.`
            : noticeOf(request);
          return withCookie(pageResponse(200, 'Sign in', loginForm(csrf.token, '', [], message), signedIn ? nav(signedIn) : {}), csrf.setCookie);
        }),
      )
      .post(
        '/login',
        page(services, async ({ request }) => {
          const form = await readForm(request);
          if (!validAnonymousCsrf(request, form.get('csrf'))) return csrfRefused();
          const email = form.get('email') ?? '';
          try {
            const done = await requestLogin(services, email);
            return pageResponse(200, 'Check your e-mail', loginSent(done.email, MAGIC_LINK_MINUTES));
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            return pageResponse(err.status, 'Sign in', loginForm(form.get('csrf') ?? '', email, [err.message.replace(/^\/email: /, 'E-mail: ')], null));
          }
        }),
        noParse,
      )
      .get(
        '/login/:token',
        page(services, async ({ request, params }) => {
          const link = await magicLinkInfo(services, params.token!);
          if (!link.ok) return linkFailurePage(link.reason, link.walletId);
          const csrf = anonymousCsrf(services, request);
          const title = link.purpose === 'claim' ? `Claim ${link.wallet.name}` : 'Sign in';
          // An owner with a passkey: the link opens the passkey prompt (and the way out of a lost passkey).
          const body = link.passkey ? passkeySignInPage(link, params.token!, csrf.token, MAGIC_LINK_MINUTES) : magicLinkPage(link, params.token!, csrf.token, MAGIC_LINK_MINUTES);
          return withCookie(pageResponse(200, title, body, { passkey: link.passkey !== null }, { 'X-Robots-Tag': 'noindex' }), csrf.setCookie);
        }),
      )
      .post(
        '/login/:token',
        page(services, async ({ request, params }) => {
          const form = await readForm(request);
          if (!validAnonymousCsrf(request, form.get('csrf'))) return csrfRefused();
          if (wantsPasskeyOptions(form)) {
            const link = await magicLinkInfo(services, params.token!);
            return await passkeyOptions(services, link.ok ? (link.passkey?.ownerId ?? null) : null, async () => (link.ok && link.passkey ? link.passkey.decision : null));
          }
          const session = newSession(services, request);
          const result = await followMagicLink(services, params.token!, { hash: session.hash, expiresAt: session.expiresAt }, assertionOf(form));
          if (!result.ok) return linkFailurePage(result.reason, result.walletId);
          // The session this browser held (another owner's, or an older one) ends: its cookie is replaced.
          const previous = await currentOwner(services, request);
          if (previous) await endSession(services, request, previous);
          const target = result.claimed && result.walletId ? `/dashboard/wallets/${result.walletId}?done=claimed` : '/dashboard';
          return redirect(target, { 'Set-Cookie': session.setCookie });
        }),
        noParse,
      )
      .post(
        '/login/:token/reset',
        page(services, async ({ request, params }) => {
          // A lost passkey: the mailbox starts a reset that takes effect after a delay, mailed at once, cancellable by any passkey.
          const form = await readForm(request);
          if (!validAnonymousCsrf(request, form.get('csrf'))) return csrfRefused();
          const result = await resetByLink(services, params.token!);
          if (!result.ok) return linkFailurePage(result.reason, result.walletId);
          return pageResponse(200, 'Passkey reset started', resetStartedPage(result.reset), {}, { 'X-Robots-Tag': 'noindex' });
        }),
        noParse,
      )
      .post(
        '/logout',
        page(services, async ({ request }) => {
          const session = await currentOwner(services, request);
          if (!session) return redirect('/login');
          const form = await readForm(request);
          if (!validSessionCsrf(session, form.get('csrf'))) return csrfRefused(nav(session));
          return redirect('/login?done=signed_out', { 'Set-Cookie': await endSession(services, request, session) });
        }),
        noParse,
      )

      // ---- dashboard ---------------------------------------------------------------------
      .get(
        '/dashboard',
        ownerPage(services, async ({ request }, s) => {
          const wallets = (await listOwnerWallets(services, s.ownerId, 100, 0)).items;
          const pending = await withSubjects(services, (await listOwnerApprovals(services, s.ownerId, { status: 'pending' }, 100, 0)).items);
          const balances = await balancesOf(services, wallets.map((w) => w.address));
          const items = wallets.map((w, i) => ({ ...w, balance: balances === null ? null : formatUsdc(balances[i]!) }));
          const alarms: SweepAlarm[] = [];
          for (const w of items) {
            const sweep = await openSweepOf(services, w.wallet_id);
            if (sweep) alarms.push({ wallet_id: w.wallet_id, wallet_name: w.name, balance: w.balance, sweep });
          }
          const iso = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
          const fundRequests: FundRequestItem[] = (await ownerFundRequests(services.db, s.ownerId, { status: 'open' }, 50, 0)).items.map((f) => ({
            fund_request_id: f.fund_request_id,
            wallet_id: f.wallet_id,
            wallet_name: f.wallet_name,
            amount: f.amount,
            reason: f.reason,
            created_at: iso(f.created_at),
          }));
          const paylinks: PaylinkItem[] = [];
          for (const w of wallets) {
            for (const p of (await listPaylinks(services.db, { kind: 'wallet', id: w.wallet_id }, 'open', 20, 0)).items) {
              paylinks.push({ request_id: p.request_id, wallet_id: w.wallet_id, wallet_name: w.name, description: p.description, amount: p.amount, short_code: p.short_code, expires_at: iso(p.expires_at) });
            }
          }
          return pageResponse(200, 'Your wallets', walletsPage(items, pending, alarms, s.csrf, noticeOf(request), { fundRequests, paylinks, faucet: simnetFaucetOn(services), noPasskey: !(await hasPasskey(services, s.ownerId)) }), nav(s, 'wallets'));
        }),
      )
      .get(
        '/dashboard/transactions/:transaction_id',
        ownerPage(services, async ({ params }, s) => {
          const tx = await getTx(services.db, params.transaction_id!);
          // Another owner's transaction is as unknown as a made-up id.
          const wallet = tx ? await ownerWalletOrNull(services, s.ownerId, tx.wallet_id) : null;
          if (!tx || !wallet) return problemPage(404, 'Not found', 'There is no such transaction among your wallets.', html`Go to <a href="/dashboard">your wallets</a>.`, nav(s));
          const approval = tx.approval_id ? await getApproval(services.db, tx.approval_id) : null;
          const iso = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
          const detail = transactionPage({
            ...tx,
            wallet: { wallet_id: wallet.wallet_id, name: wallet.name },
            explorer_url: tx.signature && tx.status === 'completed' ? explorerTxUrl(services.config.solana.network, tx.signature) : null,
            approval: approval ? { status: approval.status, decided_by: approval.decided_by, decided_at: iso(approval.decided_at) } : null,
            created_at: iso(tx.created_at)!,
            completed_at: iso(tx.completed_at),
            receipt: await transactionReceipt(services, tx, wallet),
          });
          return pageResponse(200, `Transaction ${tx.transaction_id}`, detail, nav(s, 'wallets'));
        }),
      )
      .get(
        '/dashboard/wallets/:wallet_id',
        ownerPage(services, ({ request, params }, s) => renderWallet(services, s, params.wallet_id!, { message: noticeOf(request) })),
      )
      .post(
        '/dashboard/wallets/:wallet_id/rails',
        ownerPage(services, async (c, s, form) => {
          const walletId = c.params.wallet_id!;
          await requireOwnerWallet(services, s.ownerId, walletId);
          const { doc, values } = railsFromForm(form!, railsToJson(await desiredRails(services, walletId)));
          // Only a loosening (unfreezing included) asks the passkey: railsChangeDecision is null for a tightening.
          if (wantsPasskeyOptions(form)) return await passkeyOptions(services, s.ownerId, () => railsChangeDecision(services, s.ownerId, walletId, doc));
          return saveRailsFromPage(services, s, walletId, doc, { form: values }, assertionOf(form));
        }),
        noParse,
      )
      .post(
        '/dashboard/wallets/:wallet_id/rails-json',
        ownerPage(services, async (c, s, form) => {
          const walletId = c.params.wallet_id!;
          await requireOwnerWallet(services, s.ownerId, walletId);
          const text = form!.get('rails_json') ?? '';
          let doc: unknown;
          try {
            doc = text.trim() === '' ? {} : JSON.parse(text);
          } catch (err) {
            // Invalid JSON decides nothing: the options step lets it through to the error below.
            if (wantsPasskeyOptions(form)) return await passkeyOptions(services, s.ownerId, async () => null);
            return renderWallet(services, s, walletId, { status: 400, advanced: text, errors: [{ field: '/rails', message: `The document is not valid JSON: ${(err as Error).message}` }] });
          }
          if (wantsPasskeyOptions(form)) return await passkeyOptions(services, s.ownerId, () => railsChangeDecision(services, s.ownerId, walletId, doc));
          return saveRailsFromPage(services, s, walletId, doc, { advanced: text }, assertionOf(form));
        }),
        noParse,
      )
      .post(
        '/dashboard/approvals/:approval_id/:decision',
        ownerPage(services, async (c, s, form) => {
          const decision = c.params.decision === 'approve' ? 'approved' : c.params.decision === 'reject' ? 'rejected' : null;
          if (!decision) return problemPage(404, 'Not found', 'There is no such page.', html`Go to <a href="/dashboard">your wallets</a>.`, nav(s));
          if (wantsPasskeyOptions(form)) {
            // Rejecting tightens (no passkey); approving signs exactly this approval: amount, payee, wallet, id.
            return await passkeyOptions(services, s.ownerId, async () => {
              const row = decision === 'approved' ? await getApproval(services.db, c.params.approval_id!) : null;
              if (!row || row.status !== 'pending') return null;
              await requireOwnerWallet(services, s.ownerId, row.wallet_id);
              return approvalDecision(s.ownerId, row);
            });
          }
          const decided = await decideAsOwner(services, s.ownerId, c.params.approval_id!, decision, 'dashboard', assertionOf(form));
          return redirect(`/dashboard/wallets/${decided.wallet_id}?done=${decision}#approvals`);
        }),
        noParse,
      )
      .post(
        '/dashboard/fund-requests/:fund_request_id/decline',
        ownerPage(services, async (c, s, form) => {
          // The owner API's resolve_fund_request, as the dashboard; an empty reason field is no reason.
          const reason = declineReason('declined', form!.get('reason'), { emptyIsNone: true });
          await resolveAsOwner(services, s.ownerId, c.params.fund_request_id!, 'declined', ownerActor(s.ownerId, 'dashboard'), reason);
          return redirect('/dashboard?done=fund_declined#fund-requests');
        }),
        noParse,
      )
      .post(
        '/dashboard/fund-requests/:fund_request_id/faucet',
        ownerPage(services, async (c, s) => {
          // Simnet only: the faucet sends the requested amount to the wallet, and the deposit watch
          // fulfils the request as it does for any deposit that covers it (earning/funding.ts fulfilFromDeposit).
          if (!simnetFaucetOn(services)) {
            return problemPage(404, 'No faucet here', 'Sending test USDC from a faucet exists only on simnet, the local test chain.', html`Fund the request with real USDC from its <a href="/fund/${c.params.fund_request_id!}">fund page</a>, or decline it on <a href="/dashboard#fund-requests">your wallets</a>.`, nav(s));
          }
          const row = await ownerFundRequest(services.db, s.ownerId, c.params.fund_request_id!);
          const wallet = row ? await ownerWalletOrNull(services, s.ownerId, row.wallet_id) : null;
          if (!row || !wallet) return problemPage(404, 'Not found', 'There is no such fund request among your wallets.', html`Go to <a href="/dashboard#fund-requests">your wallets</a>.`, nav(s));
          if (row.status !== 'open') return redirect('/dashboard#fund-requests');
          try {
            const signature = await simnetFaucet(services.simnetRpcUrl!, wallet.address, row.amount);
            services.log.info('simnet faucet for a fund request from the dashboard', { fund_request_id: row.fund_request_id, signature });
          } catch (err) {
            services.log.warn('simnet faucet failed', { fund_request_id: row.fund_request_id, error: (err as Error).message });
            return problemPage(503, 'Faucet unavailable', 'The simnet faucet did not take the request; nothing was sent.', html`Try again in a moment from <a href="/dashboard#fund-requests">your wallets</a>.`, nav(s));
          }
          return redirect('/dashboard?done=fund_faucet#fund-requests');
        }),
        noParse,
      )
      .post(
        '/dashboard/exports/:export_id/revoke',
        ownerPage(services, async (c, s) => {
          const revoked = await revokeOwnerExport(services, s.ownerId, c.params.export_id!, 'dashboard');
          return redirect(`/dashboard/wallets/${revoked.wallet_id}?done=export_revoked#keys`);
        }),
        noParse,
      )
      .post(
        '/dashboard/sweeps/:sweep_id/cancel',
        ownerPage(services, async (c, s) => {
          const cancelled = await cancelSweep(services, s.ownerId, c.params.sweep_id!, 'dashboard');
          return redirect(`/dashboard/wallets/${cancelled.wallet_id}?done=sweep_cancelled#recovery`);
        }),
        noParse,
      )
      .post(
        '/dashboard/wallets/:wallet_id/rotate-key',
        ownerPage(services, async (c, s, form) => {
          const wallet = await requireOwnerWallet(services, s.ownerId, c.params.wallet_id!);
          if (!form!.get('confirm')) {
            return problemPage(400, 'The API key was not rotated', 'Rotating stops the agent until it gets the new key, so the form asks you to confirm that.', html`Go back to <a href="/dashboard/wallets/${wallet.wallet_id}#keys">the wallet</a>, tick the box and press the button again.`, nav(s));
          }
          const rotated = await rotateBotKey(services, s.ownerId, wallet.wallet_id, 'dashboard');
          return pageResponse(200, 'New API key', rotatedKeyPage(wallet, rotated), nav(s, 'wallets'));
        }),
        noParse,
      )
      .get(
        '/dashboard/tokens',
        ownerPage(services, async ({ request }, s) => pageResponse(200, 'API tokens', tokensPage((await listTokens(services, s.ownerId)).items, s.csrf, null, [], noticeOf(request)), nav(s, 'tokens'))),
      )
      .post(
        '/dashboard/tokens',
        ownerPage(services, async (_c, s, form) => {
          if (wantsPasskeyOptions(form)) {
            return await passkeyOptions(services, s.ownerId, async () => {
              const label = checkName(form!.get('label') || 'owner token');
              return label.ok ? { kind: 'token.mint', owner_id: s.ownerId, label: label.value } : null;
            });
          }
          try {
            const minted = await mintOwnerToken(services, s.ownerId, form!.get('label') ?? '', assertionOf(form));
            return pageResponse(200, 'API tokens', tokensPage((await listTokens(services, s.ownerId)).items, s.csrf, minted, [], null), nav(s, 'tokens'));
          } catch (err) {
            if (!(err instanceof AppError) || err.errorCode !== 'VALIDATION_ERROR') throw err;
            return pageResponse(400, 'API tokens', tokensPage((await listTokens(services, s.ownerId)).items, s.csrf, null, [err.message.replace(/^\/label: /, 'Label: ')], null), nav(s, 'tokens'));
          }
        }),
        noParse,
      )
      .post(
        '/dashboard/tokens/:token_id/revoke',
        ownerPage(services, async (c, s) => {
          await revokeToken(services, s.ownerId, c.params.token_id!);
          return redirect('/dashboard/tokens?done=revoked');
        }),
        noParse,
      )
      .use(passkeyRoutes(services))
      .get(
        '/dashboard/*',
        ownerPage(services, (_c, s) => problemPage(404, 'Not found', 'There is no such page.', html`Go to <a href="/dashboard">your wallets</a>.`, nav(s))),
      )

      // ---- approval links from e-mail ----------------------------------------------------
      .get(
        '/approval/:token',
        page(services, async ({ request, params }) => {
          const state = await approvalLinkInfo(services, params.token!);
          if (!state.ok) return approvalFailurePage(state.reason, state.approval?.status ?? null, state.approval?.wallet_id ?? null);
          const csrf = anonymousCsrf(services, request);
          const view = await approvalViewOf(services, state.approval, state.wallet);
          return withCookie(pageResponse(200, 'Confirm your decision', approvalConfirmPage(view, state.link.decision, params.token!, csrf.token), { passkey: state.link.decision === 'approved' }), csrf.setCookie);
        }),
      )
      .post(
        '/approval/:token',
        page(services, async ({ request, params }) => {
          const form = await readForm(request);
          if (!validAnonymousCsrf(request, form.get('csrf'))) return csrfRefused();
          if (wantsPasskeyOptions(form)) {
            // The mailbox alone may reject; approving asks the owner's passkey over exactly this approval.
            const seen = await approvalLinkInfo(services, params.token!);
            const ownerId = seen.ok && seen.link.decision === 'approved' ? seen.wallet.owner_id : null;
            return await passkeyOptions(services, ownerId, async () => (seen.ok && ownerId ? approvalDecision(ownerId, seen.approval) : null));
          }
          const state = await decideByLink(services, params.token!, assertionOf(form));
          if (!state.ok) return approvalFailurePage(state.reason, state.approval?.status ?? null, state.approval?.wallet_id ?? null);
          return pageResponse(200, state.link.decision === 'approved' ? 'Approved' : 'Rejected', approvalDonePage(await approvalViewOf(services, state.approval, state.wallet), state.link.decision));
        }),
        noParse,
      )

      // ---- sweep cancel links from e-mail ------------------------------------------------
      .get(
        '/sweep-cancel/:sweep_id/:token',
        page(services, async ({ request, params }) => {
          const state = await sweepLinkInfo(services, params.sweep_id!, params.token!);
          if (!state.ok) return sweepLinkFailurePage(state.reason, state.walletId);
          const csrf = anonymousCsrf(services, request);
          const alarm = { wallet_id: state.wallet.wallet_id, wallet_name: state.wallet.name, balance: await balanceOf(services, state.wallet.address), sweep: state.sweep };
          const body = sweepCancelConfirmPage(alarm, `/sweep-cancel/${params.sweep_id}/${params.token}`, csrf.token);
          return withCookie(pageResponse(200, 'Cancel the sweep', body, {}, { 'X-Robots-Tag': 'noindex' }), csrf.setCookie);
        }),
      )
      .post(
        '/sweep-cancel/:sweep_id/:token',
        page(services, async ({ request, params }) => {
          const form = await readForm(request);
          if (!validAnonymousCsrf(request, form.get('csrf'))) return csrfRefused();
          const state = await sweepLinkInfo(services, params.sweep_id!, params.token!);
          if (!state.ok) return sweepLinkFailurePage(state.reason, state.walletId);
          // The link's token was checked just above: the sweep's owner cancels it, by e-mail (audit).
          const cancelled = await cancelSweep(services, state.ownerId, params.sweep_id!, 'email');
          return pageResponse(200, 'Sweep cancelled', sweepCancelledPage({ wallet_id: state.wallet.wallet_id, wallet_name: state.wallet.name, to_address: cancelled.to_address }));
        }),
        noParse,
      )
  );
}

async function claimInfoOrNull(services: Services, walletId: string) {
  try {
    return await claimInfo(services, walletId);
  } catch (err) {
    if (err instanceof AppError && err.errorCode === 'NOT_FOUND') return null;
    throw err;
  }
}

async function approvalViewOf(services: Services, a: ApprovalRow, w: { name: string; username: string }) {
  const [view] = await withSubjects(services, [approvalView(a)]);
  return { ...view!, wallet_name: w.name, wallet_username: w.username };
}
