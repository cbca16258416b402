import { describe, expect, test } from 'bun:test';
import { getApproval } from '../../src/db/approvals.ts';
import { loadEffectiveRails } from '../../src/db/guard-rails.ts';
import { listMail, type MailLink } from '../../src/db/mail.ts';
import { queueApprovalMail } from '../../src/mail/approval-mail.ts';
import { insertWithdrawal } from '../../src/db/withdrawals.ts';
import { insertEnrollment, moveEnrollment } from '../../src/db/recovery.ts';
import { startSweep } from '../../src/actions/recovery-sweep.ts';
import { addPendingPayment, addWallet, claimFor, ownerCall, ownerWorld, type OwnerWorld } from '../actions/fixtures.ts';
import { Browser, claimedInBrowser } from './browser.ts';

describe('claim page', () => {
  test('renders the wallet with escaped values, labels, a viewport meta and a CSRF field', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services, { name: '<script>alert("x")</script>', ownerEmail: 'pledged@example.com' });
    const res = await new Browser(w).request(`/claim/${wallet.walletId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.text).not.toContain('<script>');
    expect(res.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(res.text).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(res.text).toContain('<label for="claim_code">');
    expect(res.text).toContain('<label for="email">');
    expect(res.text).toContain('pl***@example.com');
    expect(res.text).toMatch(/name="csrf" value="[A-Za-z0-9_-]{43}"/);
  });

  test('an unknown wallet is a friendly 404 page', async () => {
    const res = await new Browser(ownerWorld()).request('/claim/wal_00000000000000000000000000');
    expect(res.status).toBe(404);
    expect(res.text).toContain('What to do');
  });

  test('a claim form without the CSRF token is refused with 403 and sends nothing', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services);
    const b = new Browser(w);
    await b.request(`/claim/${wallet.walletId}`);
    const res = await b.request(`/claim/${wallet.walletId}`, { claim_code: wallet.code, email: 'o@example.com' });
    expect(res.status).toBe(403);
    const forged = await b.request(`/claim/${wallet.walletId}`, { csrf: 'A'.repeat(43), claim_code: wallet.code, email: 'o@example.com' });
    expect(forged.status).toBe(403);
    expect(await listMail(w.services.db, 10)).toHaveLength(0);
  });

  test('a wrong code shows the form again with the error and the attempts left', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services);
    const b = new Browser(w);
    const page = await b.request(`/claim/${wallet.walletId}`);
    const res = await b.request(`/claim/${wallet.walletId}`, { csrf: Browser.csrf(page.text), claim_code: 'NOPE-NOPE', email: 'o@example.com' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('role="alert"');
    expect(res.text).toContain('4 attempts left');
    expect(res.text).toContain('value="o@example.com"');
  });
});

describe('dashboard', () => {
  test('without a session the dashboard redirects to sign-in', async () => {
    const res = await new Browser(ownerWorld()).request('/dashboard');
    expect(res.status).toBe(303);
    expect(res.location).toBe('/login');
  });

  test('the wallet page shows balance, rails editor, approvals and history newest first', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'o@example.com');
    await addPendingPayment(w.services, wallet.walletId, { amount: 25_000_000n, recipient: 'older-1' });
    w.advance(60_000);
    await addPendingPayment(w.services, wallet.walletId, { amount: 7_000_000n, recipient: 'newer-2' });
    const res = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('<p class="amount">12.5 <span class="unit">USDC</span></p>');
    // The money first: balance, then what waits for the owner, then history, then the rails.
    const order = ['class="money"', 'id="approvals"', 'id="history"', 'id="rails"', 'id="keys"', 'id="recovery"', 'id="audit"'].map((m) => res.text.indexOf(m));
    expect(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    // Nothing set yet: the change form is open.
    expect(res.text).toContain('<details class="edit" open>');
    expect(res.text).toContain('<label for="daily">Daily budget</label>');
    expect(res.text.indexOf('newer-2')).toBeLessThan(res.text.indexOf('older-1'));
    expect(res.text).toContain('/approve"');
    const history = res.text.slice(res.text.indexOf('id="history"'));
    expect(history.indexOf('−7 USDC')).toBeLessThan(history.indexOf('−25 USDC'));
  });

  test('the wallet page shows whether a recovery kit is enrolled, with its fingerprint and date, never the kit', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'kit@example.com');
    const before = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(before.text).toContain('No kit enrolled');
    expect(before.text).toContain(`agent-wallet owner recovery start ${wallet.walletId}`);
    const ownerId = ((await w.services.db.get('SELECT owner_id FROM wallets WHERE wallet_id = ?', wallet.walletId)) as { owner_id: string }).owner_id;
    const now = Date.now();
    await w.services.db.transaction(async () => {
      await insertEnrollment(w.services.db, { enrollment_id: 'rce_0000000000000000000000000a', wallet_id: wallet.walletId, owner_id: ownerId, now, expires_at: now + 60_000 });
      await moveEnrollment(w.services.db, 'rce_0000000000000000000000000a', ['open'], 'enrolled', now, { fingerprint: 'ABCD-EF01-2345-6789-ABCD', enrolled_at: now });
    });
    const after = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(after.text).toContain('<code class="mono" id="recovery-fingerprint">ABCD-EF01-2345-6789-ABCD</code>');
    expect(after.text).not.toContain('No kit enrolled');
  });

  test('an announced sweep shows where the balance goes and when; its Cancel button (CSRF) cancels it and the page says so', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'sweep@example.com');
    const ownerId = ((await w.services.db.get('SELECT owner_id FROM wallets WHERE wallet_id = ?', wallet.walletId)) as { owner_id: string }).owner_id;
    const now = Date.now();
    await w.services.db.transaction(async () => {
      await insertEnrollment(w.services.db, { enrollment_id: 'rce_0000000000000000000000000b', wallet_id: wallet.walletId, owner_id: ownerId, now, expires_at: now + 60_000 });
      await moveEnrollment(w.services.db, 'rce_0000000000000000000000000b', ['open'], 'enrolled', now, { fingerprint: 'ABCD-EF01-2345-6789-ABCD', enrolled_at: now });
    });
    const to = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
    const sweep = await startSweep(w.services, ownerId, wallet.walletId, to);
    const page = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(page.text).toContain(`was announced`);
    expect(page.text).toContain(to);
    expect(page.text).toContain(`/dashboard/sweeps/${sweep.sweep_id}/cancel`);
    const forged = await b.request(`/dashboard/sweeps/${sweep.sweep_id}/cancel`, { csrf: 'not-the-token' });
    expect(forged.status).toBe(403);
    const done = await b.request(`/dashboard/sweeps/${sweep.sweep_id}/cancel`, { csrf: Browser.csrf(page.text) });
    expect(done.status).toBe(303);
    expect(await w.services.db.get('SELECT status FROM recovery_sweeps WHERE sweep_id = ?', sweep.sweep_id)).toEqual({ status: 'cancelled' });
    const after = await b.request(done.location!);
    expect(after.text).toContain('Sweep cancelled');
    expect(after.text).not.toContain('was announced');
  });

  test('setting a daily budget in the form stores the rails; invalid input comes back with the error and the input', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'o@example.com');
    const page = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    const csrf = Browser.csrf(page.text);
    const saved = await b.request(`/dashboard/wallets/${wallet.walletId}/rails`, { csrf, daily: '50', approval_above: '20', allowed_recipients: 'Bob-1\nalice-2', frozen: '' });
    expect(saved.status).toBe(303);
    expect(await loadEffectiveRails(w.services.db, wallet.walletId, w.services.now())).toEqual({
      approval_above: 20_000_000n,
      budgets: { daily: 50_000_000n },
      allowed_recipients: ['bob-1', 'alice-2'],
    });
    const after = await b.request(saved.location!);
    expect(after.text).toContain('Guard rails saved');

    const bad = await b.request(`/dashboard/wallets/${wallet.walletId}/rails`, { csrf, daily: '12.3456789', approval_above: '20' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('budgets.daily');
    expect(bad.text).toContain('value="12.3456789"');
    expect(bad.text).toContain('aria-invalid="true"');
    expect((await loadEffectiveRails(w.services.db, wallet.walletId, w.services.now())).budgets).toEqual({ daily: 50_000_000n });
  });

  test('the JSON editor keeps rules the simple form does not show', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'o@example.com');
    const csrf = Browser.csrf((await b.request(`/dashboard/wallets/${wallet.walletId}`)).text);
    const doc = { x402_allowed_hosts: ['api.example.com'], category_caps: { x402: { daily: 3 } } };
    expect((await b.request(`/dashboard/wallets/${wallet.walletId}/rails-json`, { csrf, rails_json: JSON.stringify(doc) })).status).toBe(303);
    expect((await b.request(`/dashboard/wallets/${wallet.walletId}/rails`, { csrf, daily: '5' })).status).toBe(303);
    const rails = await loadEffectiveRails(w.services.db, wallet.walletId, w.services.now());
    expect(rails).toEqual({ budgets: { daily: 5_000_000n }, x402_allowed_hosts: ['api.example.com'], category_caps: { x402: { daily: 3_000_000n } } });
    const broken = await b.request(`/dashboard/wallets/${wallet.walletId}/rails-json`, { csrf, rails_json: '{"frozen": ' });
    expect(broken.status).toBe(400);
    expect(broken.text).toContain('not valid JSON');
  });

  test('approve from the page decides through the same rules as the API', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'o@example.com');
    const p = await addPendingPayment(w.services, wallet.walletId);
    const csrf = Browser.csrf((await b.request('/dashboard')).text);
    const res = await b.request(`/dashboard/approvals/${p.approvalId}/approve`, { csrf });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/wallets/${wallet.walletId}?done=approved#approvals`);
    expect(await getApproval(w.services.db, p.approvalId)).toMatchObject({ status: 'approved', decided_by: expect.stringContaining('via dashboard') });
    const twice = await b.request(`/dashboard/approvals/${p.approvalId}/reject`, { csrf });
    expect(twice.status).toBe(409);
  });

  test('a dashboard form without the CSRF token is refused with a 403 page and changes nothing', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'o@example.com');
    const p = await addPendingPayment(w.services, wallet.walletId);
    const res = await b.request(`/dashboard/approvals/${p.approvalId}/approve`, {});
    expect(res.status).toBe(403);
    expect(res.text).toContain('security token');
    expect((await b.request(`/dashboard/wallets/${wallet.walletId}/rails`, { daily: '1' })).status).toBe(403);
    expect((await getApproval(w.services.db, p.approvalId))?.status).toBe('pending');
    expect(await loadEffectiveRails(w.services.db, wallet.walletId, w.services.now())).toEqual({});
  });

  test('the wallet list shows each wallet with its balance on chain and what waits for the owner', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'list@example.com', 'Listed Agent');
    await addPendingPayment(w.services, wallet.walletId);
    const list = await b.request('/dashboard');
    const row = list.text.slice(list.text.indexOf('Listed Agent'));
    expect(row).toContain('<td data-label="Balance" class="num"><strong>12.5</strong> USDC</td>');
    expect(row).toContain('<a class="badge" href="#pending">1 waiting</a>');
  });

  test('a history row opens the transaction detail: amounts, fee, recipient, status, the rule that decided it and the approval; no explorer link on simnet', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'detail@example.com');
    const p = await addPendingPayment(w.services, wallet.walletId, { amount: 30_000_000n, recipient: 'shop-9' });
    const page = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(page.text).toContain(`href="/dashboard/transactions/${p.transactionId}"`);
    const detail = await b.request(`/dashboard/transactions/${p.transactionId}`);
    expect(detail.status).toBe(200);
    for (const part of [
      'Sent 30 USDC',
      '<dt>Amount</dt><dd class="num">30 USDC</dd>',
      '<dt>Platform fee</dt><dd class="num">0.125 USDC</dd>',
      '<dt>Total debited</dt><dd class="num"><strong>30.125 USDC</strong></dd>',
      '<dt>Recipient</dt><dd>shop-9</dd>',
      '<dt>Decided by</dt><dd><span class="mono">approval_above</span> — above the approval limit</dd>',
      'awaiting approval',
      p.transactionId,
    ]) expect(detail.text).toContain(part);
    expect(detail.text).not.toContain('explorer.solana.com');
  });

  test("another owner's transaction, and an unknown one, is a 404 page that names nothing of it", async () => {
    const w = ownerWorld();
    const a = await claimedInBrowser(w, 'a2@example.com', 'Alpha Agent');
    const p = await addPendingPayment(w.services, a.wallet.walletId, { recipient: 'secret-shop' });
    const bob = await claimedInBrowser(w, 'b2@example.com', 'Beta Agent');
    const view = await bob.b.request(`/dashboard/transactions/${p.transactionId}`);
    expect(view.status).toBe(404);
    expect(view.text).not.toContain('secret-shop');
    expect(view.text).not.toContain('Alpha Agent');
    expect((await bob.b.request('/dashboard/transactions/tx_00000000000000000000000000')).status).toBe(404);
    expect((await a.b.request(`/dashboard/transactions/${p.transactionId}`)).status).toBe(200);
  });

  test('once guard rails are set the page shows them and keeps the change form folded', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'folded@example.com');
    const csrf = Browser.csrf((await b.request(`/dashboard/wallets/${wallet.walletId}`)).text);
    expect((await b.request(`/dashboard/wallets/${wallet.walletId}/rails`, { csrf, daily: '50' })).status).toBe(303);
    const page = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect(page.text).toContain('<details class="edit">');
    expect(page.text).not.toContain('<details class="edit" open>');
  });

  test('owner B cannot see or act on owner A’s wallet or approvals through the pages (404)', async () => {
    const w = ownerWorld();
    const a = await claimedInBrowser(w, 'a@example.com', 'Alpha Agent');
    const p = await addPendingPayment(w.services, a.wallet.walletId);
    const bob = await claimedInBrowser(w, 'b@example.com', 'Beta Agent');
    const csrf = Browser.csrf((await bob.b.request('/dashboard')).text);

    const view = await bob.b.request(`/dashboard/wallets/${a.wallet.walletId}`);
    expect(view.status).toBe(404);
    expect(view.text).not.toContain('Alpha Agent');
    const list = await bob.b.request('/dashboard');
    expect(list.text).not.toContain('Alpha Agent');
    expect(list.text).not.toContain(p.approvalId);
    expect((await bob.b.request(`/dashboard/approvals/${p.approvalId}/approve`, { csrf })).status).toBe(404);
    expect((await bob.b.request(`/dashboard/wallets/${a.wallet.walletId}/rails`, { csrf, frozen: '1' })).status).toBe(404);
    expect((await getApproval(w.services.db, p.approvalId))?.status).toBe('pending');
    expect(await loadEffectiveRails(w.services.db, a.wallet.walletId, w.services.now())).toEqual({});
  });

  test('tokens: minted on the page, shown once, usable on /v1/owner, revocable', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'o@example.com');
    const csrf = Browser.csrf((await b.request('/dashboard/tokens')).text);
    const minted = await b.request('/dashboard/tokens', { csrf, label: 'chat <bot>' });
    expect(minted.status).toBe(200);
    expect(minted.text).toContain('chat &lt;bot&gt;');
    const token = /id="new-token">(wallet_owner_[1-9A-HJ-NP-Za-km-z]+)</.exec(minted.text)![1]!;
    const wallets = await ownerCall(w, token, 'wallets');
    expect(wallets.body.data.items.map((i: any) => i.wallet_id)).toEqual([wallet.walletId]);
    const listed = await b.request('/dashboard/tokens');
    expect(listed.text).not.toContain(token);
    const tokenId = /action="\/dashboard\/tokens\/(otk_[0-9a-z]+)\/revoke"/.exec(listed.text)![1]!;
    expect((await b.request(`/dashboard/tokens/${tokenId}/revoke`, { csrf })).status).toBe(303);
    expect((await ownerCall(w, token, 'wallets')).status).toBe(401);
  });

  test('a signed-in browser switches owner from the sign-in page: the new sign-in replaces the session and ends the old one', async () => {
    const w = ownerWorld();
    await claimedInBrowser(w, 'beta@example.com', 'Beta Agent');
    const { b } = await claimedInBrowser(w, 'alpha@example.com', 'Alpha Agent');
    const oldCookie = b.jar.get('aw_session');
    const login = await b.request('/login');
    expect(login.status).toBe(200);
    expect(login.text).toContain('You are signed in as alpha@example.com. Sign in with another e-mail to switch this browser to that owner');
    const loginCsrf = /action="\/login" class="stack" novalidate>\s*<input type="hidden" name="csrf" value="([^"]+)"/.exec(login.text)![1]!;
    expect((await b.request('/login', { csrf: loginCsrf, email: 'beta@example.com' })).status).toBe(200);
    const link = new URL((JSON.parse((await listMail(w.services.db, 1))[0]!.links) as MailLink[])[0]!.url).pathname;
    const confirm = await b.request(link);
    const landing = await b.request(link, { csrf: Browser.csrf(confirm.text) });
    expect(landing.location).toBe('/dashboard');
    const now = await b.request('/dashboard');
    expect(now.text).toContain('Beta Agent');
    expect(now.text).not.toContain('Alpha Agent');
    // The old session is gone, not only its cookie: replaying it is signed out.
    const replay = new Browser(w);
    replay.jar.set('aw_session', oldCookie!);
    expect((await replay.request('/dashboard')).location).toBe('/login');
  });

  test('sign-out ends the session; sign-in by e-mail link starts a new one', async () => {
    const w = ownerWorld();
    const { b } = await claimedInBrowser(w, 'o@example.com');
    const csrf = Browser.csrf((await b.request('/dashboard')).text);
    expect((await b.request('/logout', { csrf })).location).toBe('/login?done=signed_out');
    expect((await b.request('/dashboard')).location).toBe('/login');

    const login = await b.request('/login');
    const sent = await b.request('/login', { csrf: Browser.csrf(login.text), email: 'o@example.com' });
    expect(sent.status).toBe(200);
    const mail = (await listMail(w.services.db, 1))[0]!;
    expect(mail).toMatchObject({ kind: 'login', to_addr: 'o@example.com' });
    const link = new URL((JSON.parse(mail.links) as MailLink[])[0]!.url).pathname;
    const confirm = await b.request(link);
    expect(confirm.text).toContain('Sign in to your owner dashboard as <strong>o***@example.com</strong>');
    const landing = await b.request(link, { csrf: Browser.csrf(confirm.text) });
    expect(landing.location).toBe('/dashboard');
    expect((await b.request('/dashboard')).status).toBe(200);
  });

  test('asking a sign-in link for an unknown e-mail looks the same and sends nothing', async () => {
    const w = ownerWorld();
    const b = new Browser(w);
    const login = await b.request('/login');
    const res = await b.request('/login', { csrf: Browser.csrf(login.text), email: 'stranger@example.com' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('If <strong>stranger@example.com</strong> owns wallets here');
    expect(await listMail(w.services.db, 10)).toHaveLength(0);
  });

  test('every page names its icon, and /favicon.ico and /favicon.svg serve it (no 404 on every page load)', async () => {
    const b = new Browser(ownerWorld());
    expect((await b.request('/login')).text).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    for (const path of ['/favicon.ico', '/favicon.svg']) {
      const res = await b.request(path);
      expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({ path, status: 200, type: 'image/svg+xml' });
      expect(res.text).toStartWith('<svg');
    }
  });

  test('the stylesheet is served with focus styles', async () => {
    const res = await new Browser(ownerWorld()).request('/static/style.css');
    expect(res.headers.get('content-type')).toContain('text/css');
    expect(res.text).toContain(':focus-visible');
  });
});

describe('approval links from e-mail', () => {
  async function pendingWithMail(w: OwnerWorld) {
    const wallet = await addWallet(w.services, { name: 'Mail Agent' });
    await claimFor(w.services, wallet.walletId, 'owner@example.com');
    const p = await addPendingPayment(w.services, wallet.walletId);
    await w.services.db.transaction(async () => await queueApprovalMail(w.services, (await getApproval(w.services.db, p.approvalId))!));
    const mail = (await listMail(w.services.db, 1))[0]!;
    const links = Object.fromEntries((JSON.parse(mail.links) as MailLink[]).map((l) => [l.label, new URL(l.url).pathname]));
    return { wallet, p, mail, links };
  }

  test('queueApprovalMail mails the owner approve and reject links', async () => {
    const w = ownerWorld();
    const { mail, links, wallet } = await pendingWithMail(w);
    expect(mail).toMatchObject({ kind: 'approval', to_addr: 'owner@example.com' });
    expect(mail.subject).toContain('25 USDC');
    expect(links.approve).toMatch(/^\/approval\/[A-Za-z0-9_-]{43}$/);
    expect(links.reject).toMatch(/^\/approval\/[A-Za-z0-9_-]{43}$/);
    expect(links.dashboard).toBe(`/dashboard/wallets/${wallet.walletId}`);
    expect(mail.body).toContain('confirmation page');
  });

  test('the link opens a confirmation page that changes nothing; confirming approves once; the other link is then spent', async () => {
    const w = ownerWorld();
    const { p, links } = await pendingWithMail(w);
    const b = new Browser(w);
    const confirm = await b.request(links.approve!);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Approve this payment?');
    expect((await getApproval(w.services.db, p.approvalId))?.status).toBe('pending');
    expect((await b.request(links.approve!, {})).status).toBe(403);
    const done = await b.request(links.approve!, { csrf: Browser.csrf(confirm.text) });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Approved');
    expect(await getApproval(w.services.db, p.approvalId)).toMatchObject({ status: 'approved', decided_by: expect.stringContaining('via email') });
    expect(await w.services.db.get('SELECT status FROM transactions WHERE transaction_id = ?', p.transactionId)).toEqual({ status: 'approved' });
    const replay = await b.request(links.approve!, { csrf: Browser.csrf(confirm.text) });
    expect(replay.status).toBe(410);
    expect((await b.request(links.reject!)).status).toBe(410);
  });

  test("a withdrawal's approval mail and page carry the agent's reason and say withdrawal; the one primary action is the decision", async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services, { name: 'Saver' });
    await claimFor(w.services, wallet.walletId, 'owner@example.com');
    const p = await addPendingPayment(w.services, wallet.walletId, { amount: 3_000_000n, recipient: 'So11111111111111111111111111111111111111112' });
    const now = Date.now();
    await w.services.db.transaction(async () => {
      await w.services.db.run("UPDATE transactions SET type = 'withdrawal', category = 'withdrawal' WHERE transaction_id = ?", p.transactionId);
      await w.services.db.run("UPDATE approvals SET subject_type = 'withdrawal', reason = 'withdrawals always need the owner' WHERE approval_id = ?", p.approvalId);
      await insertWithdrawal(w.services.db, { withdrawal_id: 'wd_0000000000000000000000000a', transaction_id: p.transactionId, wallet_id: wallet.walletId, to_address: 'So11111111111111111111111111111111111111112', reason: 'moving savings to cold storage', now });
      await queueApprovalMail(w.services, (await getApproval(w.services.db, p.approvalId))!);
    });
    const mail = (await listMail(w.services.db, 1))[0]!;
    expect(mail.body).toContain("The agent's reason: moving savings to cold storage");
    const links = Object.fromEntries((JSON.parse(mail.links) as MailLink[]).map((l) => [l.label, new URL(l.url).pathname]));
    const page = await new Browser(w).request(links.approve!);
    expect(page.text).toContain('Approve this withdrawal?');
    expect(page.text).toContain('moving savings to cold storage');
    expect(page.text).toContain('Approving lets the agent sign and send this withdrawal.');
    expect(page.text).not.toContain('this payment');
    expect(page.text).not.toContain('class="button secondary"');
  });

  test('an approval link expires after 48 hours; an unknown one is 404', async () => {
    const w = ownerWorld();
    const { p, links } = await pendingWithMail(w);
    w.advance(48 * 3_600_000);
    const res = await new Browser(w).request(links.reject!);
    expect(res.status).toBe(410);
    expect(res.text).toContain('expired');
    expect((await getApproval(w.services.db, p.approvalId))?.status).toBe('pending');
    expect((await new Browser(w).request(`/approval/${'A'.repeat(43)}`)).status).toBe(404);
  });
});
