/**
 * The owner's passkey pages and the passkey step of the decision forms (issue 44), through
 * app.handle as a browser would post them, with a software authenticator answering the real
 * ceremonies (test/helpers/soft-authenticator.ts): the scripts and the CSP that lets only them run,
 * the options step each decision form asks first (a passkey only where the decision moves or
 * loosens money), the 403 page of a form posted without the passkey (no scripts), enrolment of a
 * first and a second key, removal, the mailed link's passkey prompt and reset, the approval link,
 * the "allow the CLI once" grants, and the audit sentences of the new kinds.
 */
import { describe, expect, test } from 'bun:test';
import { getApproval } from '../../src/db/approvals.ts';
import { listMail, type MailLink } from '../../src/db/mail.ts';
import { queueApprovalMail } from '../../src/mail/approval-mail.ts';
import { auditSentence, type AuditNames } from '../../src/domain/audit-sentence.ts';
import { addPendingPayment, addWallet, ownerWorld, type OwnerWorld } from '../actions/fixtures.ts';
import { SoftAuthenticator } from '../helpers/soft-authenticator.ts';
import { type Answer, Browser, signedIn } from './browser.ts';
import { verifyOwnerSignatures } from '../../src/domain/owner-signatures.ts';

const origin = (w: OwnerWorld) => new URL(w.services.publicUrl()).origin;

/** The newest mail to `to` (of `kind`): its links by label, as paths. */
async function mailLinks(w: OwnerWorld, to: string, kind?: string): Promise<Record<string, string>> {
  const mail = (await listMail(w.services.db, 100)).find((m) => m.to_addr === to && (!kind || m.kind === kind))!;
  return Object.fromEntries((JSON.parse(mail.links) as MailLink[]).map((l) => [l.label, new URL(l.url).pathname]));
}

/** Adds a passkey through the Passkeys page's form; a later one confirmed by `under`. */
async function addPasskey(b: Browser, csrf: string, auth: SoftAuthenticator, name: string, under?: SoftAuthenticator): Promise<Answer> {
  const step = await b.options('/dashboard/passkeys', { csrf, name });
  expect(step).toMatchObject({ status: 200, passkey: true });
  const answer = await b.request('/dashboard/passkeys', { csrf, name, registration: JSON.stringify(await auth.register(step.options)) });
  if (!under) return answer;
  expect(answer.status).toBe(200);
  expect(answer.text).toContain('Confirm the new passkey');
  const attr = /data-passkey-options="([^"]+)"/.exec(answer.text)![1]!;
  const options = JSON.parse(attr.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#96;/g, '`').replace(/&amp;/g, '&'));
  return await b.request('/dashboard/passkeys/confirm', { csrf, passkey: JSON.stringify(await under.assert(options)) });
}

describe('the passkey scripts', () => {
  test('/static/webauthn.js is the embedded @simplewebauthn/browser bundle and /static/passkey.js the glue, both JavaScript from this origin', async () => {
    const b = new Browser(ownerWorld());
    const lib = await b.request('/static/webauthn.js');
    expect(lib.status).toBe(200);
    expect(lib.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(lib.headers.get('x-content-type-options')).toBe('nosniff');
    expect(lib.text).toContain('SimpleWebAuthnBrowser');
    expect(lib.text).toContain('@simplewebauthn/browser@14');
    const glue = await b.request('/static/passkey.js');
    expect(glue.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(glue.text).toContain("body.set('passkey_step', 'options')");
    expect(glue.text).toContain('startAuthentication({ optionsJSON: answer.options })');
  });

  test("owner pages load them under script-src 'self' (no inline script); public pages without a passkey form keep no script at all", async () => {
    const w = ownerWorld();
    const { b } = await signedIn(w, 'csp@example.com', 'Passkey Bot');
    const dashboard = await b.request('/dashboard');
    const csp = dashboard.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(dashboard.text).toContain('<script src="/static/webauthn.js" defer></script>');
    expect(dashboard.text).toContain('<script src="/static/passkey.js" defer></script>');
    expect(dashboard.text).not.toMatch(/<script>(?!<\/)/);
    const wallet = await addWallet(w.services);
    const claim = await new Browser(w).request(`/claim/${wallet.walletId}`);
    expect(claim.headers.get('content-security-policy')).not.toContain('script-src');
    expect(claim.text).not.toContain('<script');
  });
});

describe('an owner without a passkey', () => {
  test('sees the risk plainly on the dashboard and the wallet page, and the Passkeys page in the navigation', async () => {
    const w = ownerWorld();
    const { b, wallet } = await signedIn(w, 'nokey@example.com', 'Passkey Bot');
    const risk = 'Anyone who can read your mail can approve payments and loosen the rails: <a href="/dashboard/passkeys">add a passkey</a>';
    expect((await b.request('/dashboard')).text).toContain(risk);
    const page = (await b.request(`/dashboard/wallets/${wallet.walletId}`)).text;
    expect(page).toContain(risk);
    expect(page).toContain('<a href="/dashboard/passkeys">Passkeys</a>');
    expect(page).not.toContain('Allow the CLI once');
    const passkeys = await b.request('/dashboard/passkeys');
    expect(passkeys.text).toContain('You have no passkey yet.');
    expect(passkeys.text).toContain('aria-current="page">Passkeys</a>');
  });

  test('decides as before: every options step answers passkey: false and the forms post as they are', async () => {
    const w = ownerWorld();
    const { b, wallet, csrf } = await signedIn(w, 'plain@example.com', 'Passkey Bot');
    const { approvalId } = await addPendingPayment(w.services, wallet.walletId);
    expect(await b.options(`/dashboard/approvals/${approvalId}/approve`, { csrf })).toEqual({ status: 200, passkey: false });
    expect(await b.options('/dashboard/tokens', { csrf, label: 'bot' })).toEqual({ status: 200, passkey: false });
    expect(await b.options(`/dashboard/wallets/${wallet.walletId}/rails`, { csrf, approval_above: '900' })).toEqual({ status: 200, passkey: false });
    const approved = await b.request(`/dashboard/approvals/${approvalId}/approve`, { csrf });
    expect(approved.status).toBe(303);
    expect((await getApproval(w.services.db, approvalId))!.status).toBe('approved');
  });
});

describe('an owner with a passkey', () => {
  test('adds a first passkey at once and a second only under the first; both are listed, and the log says which confirmed it', async () => {
    const w = ownerWorld();
    const { b, wallet, csrf } = await signedIn(w, 'enrol@example.com', 'Passkey Bot');
    const laptop = await SoftAuthenticator.create(origin(w));
    const phone = await SoftAuthenticator.create(origin(w));
    const first = await addPasskey(b, csrf, laptop, 'Laptop');
    expect(first.status).toBe(303);
    expect(first.location).toBe('/dashboard/passkeys?done=added');
    const second = await addPasskey(b, csrf, phone, 'Phone', laptop);
    expect(second.location).toBe('/dashboard/passkeys?done=added');
    const page = (await b.request('/dashboard/passkeys?done=added')).text;
    expect(page).toContain('Passkey added.');
    expect(page).toContain('<strong>Laptop</strong>');
    expect(page).toContain('<strong>Phone</strong>');
    expect((await b.request('/dashboard')).text).not.toContain('id="passkey-risk"');
    const walletPage = (await b.request(`/dashboard/wallets/${wallet.walletId}`)).text;
    expect(walletPage).toContain('added the passkey “Laptop” from the dashboard');
    expect(walletPage).toContain('added the passkey “Phone” from the dashboard, confirmed with an earlier passkey');
  });

  test('a registration posted without the browser’s answer (no scripts) adds nothing and says why', async () => {
    const w = ownerWorld();
    const { b, csrf } = await signedIn(w, 'noscript@example.com', 'Passkey Bot');
    const res = await b.request('/dashboard/passkeys', { csrf, name: 'Laptop' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('No passkey was added');
    expect(res.text).toContain("Allow this site's scripts");
  });

  test('approving asks the passkey over exactly that approval (rejecting does not); a form posted without it is a 403 page that changes nothing; with it the approval is signed and the audit names the passkey', async () => {
    const w = ownerWorld();
    const { b, wallet, csrf } = await signedIn(w, 'approve@example.com', 'Passkey Bot');
    const laptop = await SoftAuthenticator.create(origin(w));
    await addPasskey(b, csrf, laptop, 'Laptop');
    const { approvalId } = await addPendingPayment(w.services, wallet.walletId);

    expect(await b.options(`/dashboard/approvals/${approvalId}/reject`, { csrf })).toEqual({ status: 200, passkey: false });
    const bare = await b.request(`/dashboard/approvals/${approvalId}/approve`, { csrf });
    expect(bare.status).toBe(403);
    expect(bare.text).toContain('<h1>Your passkey is needed</h1>');
    expect(bare.text).toContain('allow this site&#39;s (it loads no others)');
    expect((await getApproval(w.services.db, approvalId))!.status).toBe('pending');

    const step = await b.options(`/dashboard/approvals/${approvalId}/approve`, { csrf });
    expect(step).toMatchObject({ status: 200, passkey: true, decision: `approve payment ${approvalId}` });
    expect(step.options).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
    // An answer without user verification is refused, and nothing changes.
    const unverified = await b.request(`/dashboard/approvals/${approvalId}/approve`, { csrf, passkey: JSON.stringify(await laptop.assert(step.options, { userVerified: false })) });
    expect(unverified.status).toBe(403);
    expect((await getApproval(w.services.db, approvalId))!.status).toBe('pending');

    const again = await b.options(`/dashboard/approvals/${approvalId}/approve`, { csrf });
    const done = await b.request(`/dashboard/approvals/${approvalId}/approve`, { csrf, passkey: JSON.stringify(await laptop.assert(again.options)) });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/dashboard/wallets/${wallet.walletId}?done=approved#approvals`);
    const row = (await getApproval(w.services.db, approvalId)) as { status: string; evidence?: string | null };
    expect(row.status).toBe('approved');
    expect(JSON.parse(row.evidence!).credential_id).toBe(Buffer.from(laptop.credentialId).toString('base64url'));
    expect((await b.request(`/dashboard/wallets/${wallet.walletId}`)).text).toMatch(/approved the payment of [^<]*, signed with passkey “Laptop”/);
  });

  test('the rails ask the passkey only to loosen (common form and JSON); a token mint asks it; the wallet page offers the CLI grants', async () => {
    const w = ownerWorld();
    const { b, wallet, csrf } = await signedIn(w, 'rails@example.com', 'Passkey Bot');
    const laptop = await SoftAuthenticator.create(origin(w));
    await addPasskey(b, csrf, laptop, 'Laptop');
    const rails = `/dashboard/wallets/${wallet.walletId}/rails`;
    const json = `/dashboard/wallets/${wallet.walletId}/rails-json`;
    // From no rails, a threshold tightens; raising it later loosens.
    expect(await b.options(rails, { csrf, approval_above: '20' })).toEqual({ status: 200, passkey: false });
    expect((await b.request(rails, { csrf, approval_above: '20' })).status).toBe(303);
    expect(await b.options(rails, { csrf, approval_above: '10' })).toEqual({ status: 200, passkey: false });
    const loosen = await b.options(rails, { csrf, approval_above: '200' });
    expect(loosen).toMatchObject({ passkey: true, decision: 'loosen the guard rails' });
    expect((await b.request(rails, { csrf, approval_above: '200' })).status).toBe(403);
    const saved = await b.request(rails, { csrf, approval_above: '200', passkey: JSON.stringify(await laptop.assert(loosen.options)) });
    expect(saved.location).toBe(`/dashboard/wallets/${wallet.walletId}?done=rails#rails`);
    expect(await b.options(json, { csrf, rails_json: '{"approval_above": 200, "frozen": true}' })).toEqual({ status: 200, passkey: false });
    expect(await b.options(json, { csrf, rails_json: '{not json' })).toEqual({ status: 200, passkey: false });
    // The document replaces the rails: one without the threshold loosens.
    expect(await b.options(json, { csrf, rails_json: '{}' })).toMatchObject({ passkey: true });

    const mint = await b.options('/dashboard/tokens', { csrf, label: 'approval bot' });
    expect(mint).toMatchObject({ passkey: true, decision: 'mint the owner API token "approval bot"' });
    expect((await b.request('/dashboard/tokens', { csrf, label: 'approval bot' })).status).toBe(403);
    const minted = await b.request('/dashboard/tokens', { csrf, label: 'approval bot', passkey: JSON.stringify(await laptop.assert(mint.options)) });
    expect(minted.status).toBe(200);
    expect(minted.text).toMatch(/id="new-token">wallet_owner_/);

    const page = (await b.request(`/dashboard/wallets/${wallet.walletId}`)).text;
    expect(page).toContain('Allow the CLI once');
    const cli = `/dashboard/wallets/${wallet.walletId}/allow-cli`;
    expect(await b.options(cli, { csrf, kind: 'recovery.sweep', to_address: 'not an address' })).toMatchObject({ status: 400, error: { code: 'VALIDATION_ERROR' } });
    const enroll = await b.options(cli, { csrf, kind: 'recovery.enroll' });
    expect(enroll).toMatchObject({ passkey: true, decision: 'start a recovery-kit enrolment' });
    const granted = await b.request(cli, { csrf, kind: 'recovery.enroll', passkey: JSON.stringify(await laptop.assert(enroll.options)) });
    expect(granted.status).toBe(200);
    expect(granted.text).toContain(`agent-wallet owner recovery start ${wallet.walletId}`);
    expect(granted.text).toContain('Allowed once');
  });

  test('removes a passkey under a passkey; a bare remove is refused', async () => {
    const w = ownerWorld();
    const { b, csrf } = await signedIn(w, 'remove@example.com', 'Passkey Bot');
    const laptop = await SoftAuthenticator.create(origin(w));
    const phone = await SoftAuthenticator.create(origin(w));
    await addPasskey(b, csrf, laptop, 'Laptop');
    await addPasskey(b, csrf, phone, 'Phone', laptop);
    const id = Buffer.from(phone.credentialId).toString('base64url');
    expect((await b.request(`/dashboard/passkeys/${id}/remove`, { csrf })).status).toBe(403);
    const step = await b.options(`/dashboard/passkeys/${id}/remove`, { csrf });
    expect(step).toMatchObject({ passkey: true, decision: 'remove a passkey' });
    const removed = await b.request(`/dashboard/passkeys/${id}/remove`, { csrf, passkey: JSON.stringify(await phone.assert(step.options)) });
    expect(removed.location).toBe('/dashboard/passkeys?done=removed');
    const page = (await b.request('/dashboard/passkeys')).text;
    expect(page).toContain('<strong>Laptop</strong>');
    expect(page).not.toContain('<strong>Phone</strong>');
  });
});

describe('mailed links of an owner with a passkey', () => {
  test('a sign-in link opens the passkey prompt: without the passkey it signs nobody in; with it, it does', async () => {
    const w = ownerWorld();
    const email = 'prompt@example.com';
    const { b, csrf } = await signedIn(w, email, 'Passkey Bot');
    const laptop = await SoftAuthenticator.create(origin(w));
    await addPasskey(b, csrf, laptop, 'Laptop');
    const other = new Browser(w);
    const login = await other.request('/login');
    await other.request('/login', { csrf: Browser.csrf(login.text), email });
    const link = (await mailLinks(w, email, 'login'))['sign in']!;
    const page = await other.request(link);
    expect(page.text).toContain('<h1>Sign in with your passkey</h1>');
    expect(page.text).toContain('data-passkey id="passkey-sign-in"');
    expect(page.text).toContain('I lost my passkey');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const linkCsrf = Browser.csrf(page.text);
    const bare = await other.request(link, { csrf: linkCsrf });
    expect(bare.status).toBe(403);
    expect(bare.text).toContain('Your passkey is needed');
    expect(other.jar.has('aw_session')).toBe(false);
    const step = await other.options(link, { csrf: linkCsrf });
    expect(step).toMatchObject({ passkey: true, decision: 'sign in' });
    const signed = await other.request(link, { csrf: linkCsrf, passkey: JSON.stringify(await laptop.assert(step.options)) });
    expect(signed.status).toBe(303);
    expect(signed.location).toBe('/dashboard');
    expect(other.jar.has('aw_session')).toBe(true);
  });

  test('a claim link of an owner with a passkey claims only with the passkey, and the new wallet’s log gets the owner’s keys', async () => {
    const w = ownerWorld();
    const email = 'second@example.com';
    const { b, csrf } = await signedIn(w, email, 'Passkey Bot');
    const laptop = await SoftAuthenticator.create(origin(w));
    await addPasskey(b, csrf, laptop, 'Laptop');
    const wallet = await addWallet(w.services, { name: 'Second Bot' });
    const other = new Browser(w);
    const claimPage = await other.request(`/claim/${wallet.walletId}`);
    expect((await other.request(`/claim/${wallet.walletId}`, { csrf: Browser.csrf(claimPage.text), claim_code: wallet.code, email })).status).toBe(200);
    const link = Object.values(await mailLinks(w, email, 'claim'))[0]!;
    const page = await other.request(link);
    expect(page.text).toContain('<h1>Claim “Second Bot” with your passkey</h1>');
    const linkCsrf = Browser.csrf(page.text);
    expect((await other.request(link, { csrf: linkCsrf })).status).toBe(403);
    const step = await other.options(link, { csrf: linkCsrf });
    expect(step).toMatchObject({ passkey: true, decision: `claim wallet ${wallet.walletId} and sign in` });
    const claimed = await other.request(link, { csrf: linkCsrf, passkey: JSON.stringify(await laptop.assert(step.options)) });
    expect(claimed.location).toBe(`/dashboard/wallets/${wallet.walletId}?done=claimed`);
    const walletPage = (await other.request(`/dashboard/wallets/${wallet.walletId}`)).text;
    expect(walletPage).toContain('brought 1 passkey to this wallet on claiming it: it signs its decisions too');
    expect(walletPage).not.toContain('id="passkey-risk"');
    // The new wallet's log holds the key with the owner's signed claim of this wallet: verify-log's owner check accepts it.
    const rows = await w.services.db.all<{ seq: bigint; at: bigint; kind: string; data: string }>('SELECT seq, at, kind, data FROM decision_log WHERE wallet_id = ? ORDER BY seq', wallet.walletId);
    const lines = rows.map((r) => JSON.stringify({ type: 'row', wallet_id: wallet.walletId, seq: Number(r.seq), at: Number(r.at), kind: r.kind, data: JSON.parse(r.data) }));
    expect(await verifyOwnerSignatures(wallet.walletId, lines)).toMatchObject({ ok: true, keys_added: 1 });
  });

  test('"I lost my passkey" starts a reset that takes effect after the delay, mailed, shown on the Passkeys page and cancelled there with a passkey', async () => {
    const w = ownerWorld();
    const email = 'lost@example.com';
    const { b, csrf } = await signedIn(w, email, 'Passkey Bot');
    const laptop = await SoftAuthenticator.create(origin(w));
    await addPasskey(b, csrf, laptop, 'Laptop');
    const other = new Browser(w);
    const login = await other.request('/login');
    await other.request('/login', { csrf: Browser.csrf(login.text), email });
    const link = (await mailLinks(w, email, 'login'))['sign in']!;
    const page = await other.request(link);
    const reset = await other.request(`${link}/reset`, { csrf: Browser.csrf(page.text) });
    expect(reset.status).toBe(200);
    expect(reset.text).toContain('Passkey reset started');
    const at = new Date(w.clock.ms + 72 * 3_600_000).toISOString();
    expect(reset.text).toContain(`${at.slice(0, 10)} ${at.slice(11, 16)} UTC`);
    expect(reset.text).toContain('We mailed you about it.');
    expect(other.jar.has('aw_session')).toBe(false);
    expect((await listMail(w.services.db, 10)).some((m) => m.to_addr === email && m.kind === 'passkey_reset')).toBe(true);

    const passkeys = (await b.request('/dashboard/passkeys')).text;
    expect(passkeys).toContain('A reset of your passkeys is under way');
    const resetId = /action="\/dashboard\/passkeys\/reset\/([^/]+)\/cancel"/.exec(passkeys)![1]!;
    const cancel = `/dashboard/passkeys/reset/${resetId}/cancel`;
    expect((await b.request(cancel, { csrf })).status).toBe(403);
    const step = await b.options(cancel, { csrf });
    expect(step).toMatchObject({ passkey: true, decision: 'cancel the passkey reset' });
    const cancelled = await b.request(cancel, { csrf, passkey: JSON.stringify(await laptop.assert(step.options)) });
    expect(cancelled.location).toBe('/dashboard/passkeys?done=reset_cancelled');
    expect((await b.request('/dashboard/passkeys')).text).not.toContain('A reset of your passkeys is under way');
  });

  test('the approval link page asks the passkey to approve, not to reject', async () => {
    const w = ownerWorld();
    const email = 'link@example.com';
    const { b, wallet, csrf } = await signedIn(w, email, 'Passkey Bot');
    const laptop = await SoftAuthenticator.create(origin(w));
    await addPasskey(b, csrf, laptop, 'Laptop');
    const { approvalId } = await addPendingPayment(w.services, wallet.walletId);
    await w.services.db.transaction(async () => await queueApprovalMail(w.services, (await getApproval(w.services.db, approvalId))!));
    const links = await mailLinks(w, email, 'approval');
    const mailbox = new Browser(w);
    const approvePage = await mailbox.request(links.approve!);
    expect(approvePage.text).toMatch(/class="actions" data-passkey>/);
    const rejectPage = await mailbox.request(links.reject!);
    expect(rejectPage.text).not.toContain('data-passkey');
    const linkCsrf = Browser.csrf(approvePage.text);
    expect((await mailbox.request(links.approve!, { csrf: linkCsrf })).status).toBe(403);
    expect((await getApproval(w.services.db, approvalId))!.status).toBe('pending');
    expect(await mailbox.options(links.reject!, { csrf: linkCsrf })).toEqual({ status: 200, passkey: false });
    const step = await mailbox.options(links.approve!, { csrf: linkCsrf });
    expect(step).toMatchObject({ passkey: true, decision: `approve payment ${approvalId}` });
    const done = await mailbox.request(links.approve!, { csrf: linkCsrf, passkey: JSON.stringify(await laptop.assert(step.options)) });
    expect(done.status).toBe(200);
    expect((await getApproval(w.services.db, approvalId))!.status).toBe('approved');
  });
});

describe('audit sentences of the passkey kinds', () => {
  const names: AuditNames = { owners: new Map([['own_1', 'o@example.com']]), transactions: new Map(), wallet: { name: 'Bot' }, passkeys: new Map([['cred1', 'Laptop']]) };
  const say = (kind: string, data: unknown, actor = 'owner:own_1 via dashboard') => auditSentence({ kind, actor, data }, names);
  test('each kind reads as a sentence, and a decision signed with a passkey names it', () => {
    expect(say('owner.passkey_added', { name: 'Laptop', credential_id: 'cred1' })).toBe('The owner (o@example.com) added the passkey “Laptop” from the dashboard');
    expect(say('owner.passkey_removed', { name: 'Phone', credential_id: 'cred2', passkey: { credential_id: 'cred1' } })).toBe('The owner (o@example.com) removed the passkey “Phone” from the dashboard, signed with passkey “Laptop”');
    expect(say('owner.passkeys_carried', { keys: [{}, {}] }, 'owner:own_1 via email')).toBe('The owner (o@example.com) brought 2 passkeys to this wallet on claiming it: they sign its decisions too');
    expect(say('owner.passkey_reset_started', { effective_at: '2030-01-18T10:00:00.000Z' }, 'owner:own_1 via email')).toBe('The owner (o@example.com) started a reset of the passkeys by e-mail: every passkey is removed at 2030-01-18T10:00:00.000Z unless one cancels it');
    expect(say('owner.passkey_reset_cancelled', { passkey: { credential_id: 'cred1' } })).toBe('The owner (o@example.com) cancelled the passkey reset from the dashboard, signed with passkey “Laptop”');
    expect(say('owner.passkeys_reset', { removed: 2 }, 'owner:own_1 via email')).toBe('The passkey reset took effect: 2 passkeys of the owner removed; mailed links alone decide again');
    expect(say('owner.token_minted', { label: 'ci', passkey: { credential_id: 'cred9' } })).toBe('The owner (o@example.com) minted the owner API token “ci” from the dashboard, signed with a passkey');
    expect(say('guard_rails.set', { passkey: { credential_id: 'cred1' } })).toBe('The owner (o@example.com) set the guard rails from the dashboard, signed with passkey “Laptop”');
    expect(say('guard_rails.set', {})).toBe('The owner (o@example.com) set the guard rails from the dashboard');
  });
});
