/**
 * The owner's passkeys end to end in real Chromium (issue 44), with the DevTools protocol's virtual
 * authenticator (FACTS "Passkeys": ctap2, internal, resident key, user verification) against the
 * real app and simnet on http://localhost:PORT (an IP is no WebAuthn RP ID): the owner signs in by
 * mail, adds a passkey on the Passkeys page, signs out, and the next mailed link opens the passkey
 * prompt; a payment above the approval threshold is approved on the dashboard with the passkey and
 * the agent's payment (real client, real FROST) completes on chain; its decision-log row carries the
 * assertion, which checks offline against the key the log holds, and no longer does with the amount
 * changed. A second passkey is added under the first; loosening the rails asks the passkey
 * (tightening does not); an authenticator that does not verify the user is refused and nothing
 * changes; without scripts a link of an owner with a passkey signs nobody in. The pages run their
 * scripts under the real CSP (script-src 'self'); the Passkeys page and the passkey prompt are
 * checked by axe-core and saved at 1280×800 and 390×844 (docs/screenshots/ with
 * AW_UPDATE_SCREENSHOTS=1, else a temp dir).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { listMail, type MailLink } from '../../src/db/mail.ts';
import { decisionOfRow } from '../../src/domain/owner-decision.ts';
import { checkAssertion, evidenceOf, type PasskeyKey } from '../../src/domain/passkey-assertion.ts';
import { startWorld, type World } from '../helpers/world.ts';
import { runCli } from '../helpers/daemon.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(`\n!!! BROWSER TEST SKIPPED: ${CHROMIUM} is missing. Install it with "apt-get install -y chromium" to run test/e2e/passkeys-browser.test.ts.\n`);
}
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const DOCS = process.env.AW_UPDATE_SCREENSHOTS === '1' ? join(import.meta.dir, '..', '..', 'docs', 'screenshots') : mkdtempSync(join(tmpdir(), 'aw-passkey-screenshots-'));
const AXE = join(import.meta.dir, '..', '..', 'node_modules', 'axe-core', 'axe.min.js');
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;
/** The virtual authenticator of FACTS "Passkeys": a platform authenticator that verifies its user. */
const AUTHENTICATOR = { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true } as const;

let world: World;
let browser: Browser | null = null;
let origin = '';

beforeAll(async () => {
  if (!haveChromium) return;
  mkdirSync(DOCS, { recursive: true });
  world = await startWorld();
  // WebAuthn needs a domain as RP ID: the pages are opened on localhost, and the daemon's public URL says so.
  origin = `http://localhost:${new URL(world.url).port}`;
  world.services.publicUrl = () => origin;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}, 60_000); // a daemon world and Chromium: more than the default 5 s on a loaded 2-core machine

afterAll(async () => {
  if (browser) console.log(`passkey screenshots: ${DOCS}`);
  await browser?.close();
  await world?.stop();
});

/** The newest outbox mail to `to` of `kind`: its links, pointed at this world; polled with a deadline. */
async function mailLinks(to: string, kind: string, after = 0): Promise<Record<string, string>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const mail = (await listMail(world.services.db, 500)).find((m) => m.to_addr === to && m.kind === kind && Number(m.created_at) > after);
    if (mail) return Object.fromEntries((JSON.parse(mail.links) as MailLink[]).map((l) => [l.label, `${origin}${new URL(l.url).pathname}`]));
    if (Date.now() > deadline) throw new Error(`no ${kind} mail to ${to}`);
    await Bun.sleep(50);
  }
}

/** Asks for a sign-in link on the page and returns it (read from the outbox). */
async function askSignInLink(page: Page, email: string): Promise<string> {
  const before = Date.now() - 1;
  await page.goto(`${origin}/login`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
  await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
  return (await mailLinks(email, 'login', before))['sign in']!;
}

interface Authenticator {
  id: string;
}

async function addAuthenticator(cdp: CDPSession, over: Partial<Record<keyof typeof AUTHENTICATOR, unknown>> = {}): Promise<Authenticator> {
  const { authenticatorId } = (await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { ...AUTHENTICATOR, ...over } as never })) as { authenticatorId: string };
  return { id: authenticatorId };
}

/** CDP names a credential in base64; WebAuthn's JSON (and the log) in base64url. */
const idOf = (cred: { credentialId: string }) => Buffer.from(cred.credentialId, 'base64').toString('base64url');

async function credentialsOf(cdp: CDPSession, a: Authenticator): Promise<any[]> {
  return ((await cdp.send('WebAuthn.getCredentials', { authenticatorId: a.id })) as { credentials: any[] }).credentials;
}

/** The wallet's decision log as the owner exports it from the dashboard (JSONL): its rows. */
async function decisionRows(page: Page, walletId: string): Promise<{ kind: string; data: any }[]> {
  const res = await page.request.get(`${origin}/dashboard/wallets/${walletId}/decision-log.jsonl`);
  expect(res.status()).toBe(200);
  return (await res.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((r) => r.type === 'row');
}

/** Full-page screenshot NAME-WxH.png into the docs set after axe-core finds no violation (a context that bypasses the CSP for axe). */
async function shootDocs(page: Page, name: string, url: string, ready: (p: Page) => Promise<unknown>): Promise<void> {
  for (const size of SIZES) {
    await page.setViewportSize(size);
    await page.goto(url);
    await ready(page);
    await page.screenshot({ path: join(DOCS, `${name}-${size.width}x${size.height}.png`), fullPage: true });
    await page.addScriptTag({ path: AXE });
    const result = await page.evaluate(async () => {
      const r = await (globalThis as any).axe.run(document, { resultTypes: ['violations'] });
      return { passed: r.passes.length, violations: r.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3) })) };
    });
    if (result.violations.length) console.error(`axe violations on ${name}:`, JSON.stringify(result.violations, null, 2));
    expect({ page: name, size, violations: result.violations }).toEqual({ page: name, size, violations: [] });
    expect(result.passed).toBeGreaterThan(10);
  }
}

/**
 * What the owner sees when the passkey step is refused: the browser's refusal in the form's status
 * line (an authenticator that cannot verify its user answers nothing), or the daemon's 403 page
 * (an answer without user verification).
 */
async function refusal(page: Page): Promise<string> {
  const shown = page.locator('.passkey-status.bad, h1:has-text("Your passkey is needed")').first();
  await shown.waitFor();
  return (await shown.evaluate((el) => (el.tagName === 'H1' ? document.querySelector('main')!.textContent : el.textContent))) ?? '';
}

/** The wallet page with its guard-rails editor open (a fresh load, whatever the page showed before). */
async function openRails(page: Page, walletId: string): Promise<void> {
  await page.goto(`${origin}/dashboard/wallets/${walletId}?edit=${Date.now()}`);
  await page.locator('details.edit').evaluate((d) => ((d as HTMLDetailsElement).open = true));
}

test.skipIf(!haveChromium)(
  'an owner adds a passkey, signs in with it from a mailed link, approves a payment above the threshold with it (the payment completes on chain, the log row carries a checkable assertion), adds a second passkey under the first, and loosening the rails asks for it',
  async () => {
    const email = 'passkey-owner@example.com';
    const agent = await world.agent('Passkey Agent', { claimBy: email });
    const vendor = await world.agent('Data Vendor', { claimBy: 'vendor@example.com' });
    const owner = await world.claim(agent.walletId, email);
    await world.fund(agent.address, 100_000_000n);
    await world.fund(vendor.address, 0n);
    // Setting a threshold where none was tightens: the owner API may, without a passkey.
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { approval_above: '20' } });

    const context: BrowserContext = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false } as never);
    const laptop = await addAuthenticator(cdp);

    // Signed in by mail, without a passkey: the dashboard says plainly what that risks.
    await page.goto(await askSignInLink(page, email));
    await page.getByRole('button', { name: /^Sign in/ }).click();
    await page.waitForURL((u) => u.pathname === '/dashboard');
    expect(await page.locator('#passkey-risk').innerText()).toContain('Anyone who can read your mail can approve payments and loosen the rails: add a passkey');

    // Add a passkey on the Passkeys page (the scripts run under the page's own CSP).
    await page.getByRole('link', { name: 'Passkeys' }).click();
    await page.getByRole('heading', { name: 'Passkeys', level: 1 }).waitFor();
    const csp = (await page.request.get(`${origin}/dashboard/passkeys`)).headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    await page.getByLabel('Name').fill('Laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL((u) => u.searchParams.get('done') === 'added');
    expect(await page.locator('#passkeys').innerText()).toContain('Laptop');
    const [laptopCred] = await credentialsOf(cdp, laptop);
    expect(laptopCred).toBeDefined();
    expect(laptopCred.rpId).toBe('localhost');
    await page.goto(`${origin}/dashboard`);
    expect(await page.locator('#passkey-risk').count()).toBe(0);

    // Sign out; the next mailed link opens the passkey prompt, and the passkey signs in.
    await page.getByRole('button', { name: /^Sign out/ }).click();
    await page.waitForURL((u) => u.pathname === '/login');
    const link = await askSignInLink(page, email);
    // Without scripts (only the mailbox), the link's button signs nobody in.
    const bare = await browser!.newContext({ javaScriptEnabled: false });
    const barePage = await bare.newPage();
    await barePage.goto(link);
    await barePage.getByRole('button', { name: 'Sign in with your passkey' }).click();
    await barePage.getByRole('heading', { name: 'Your passkey is needed' }).waitFor();
    expect(await bare.cookies()).not.toContainEqual(expect.objectContaining({ name: 'aw_session' }));
    await bare.close();
    await page.goto(link);
    await page.getByRole('heading', { name: 'Sign in with your passkey' }).waitFor();
    await page.getByRole('button', { name: 'Sign in with your passkey' }).click();
    await page.waitForURL((u) => u.pathname === '/dashboard');

    // A payment above the threshold waits; the dashboard's Approve asks the passkey.
    const waiting = await agent.api.call<any>('bot', 'pay', { to: vendor.username, amount: '25', note: 'Annual dataset licence' });
    expect(waiting.status).toBe('awaiting_approval');
    await page.reload();
    const row = page.locator(`tr[id="${waiting.approval_id}"]`);
    await row.getByRole('button', { name: /^Approve/ }).click();
    await page.getByText('Approved. The agent can now confirm the payment.').waitFor();
    expect(await agent.api.call<any>('bot', 'approval_status', { approval_id: waiting.approval_id })).toMatchObject({ status: 'approved' });
    // The agent's real client signs with FROST; the daemon re-checks the approval's assertion before it co-signs.
    const done = await confirmSignSubmit(agent.api, agent.profile, waiting.transaction_id);
    expect(done.status).toBe('completed');
    expect(await world.balance(vendor.address)).toBe(25_000_000n);

    // The decision-log row carries the assertion; it checks against the key the log holds, and fails for another amount.
    const rows = await decisionRows(page, agent.walletId);
    const approved = rows.find((r) => r.kind === 'approval.approved' && r.data.approval_id === waiting.approval_id)!;
    // (Checked field by field: toMatchObject with expect.any() would put the matchers into the object it reads.)
    const assertion = approved.data.passkey;
    expect(assertion.credential_id).toBe(idOf(laptopCred));
    expect([typeof assertion.response.signature, typeof assertion.response.authenticatorData, typeof assertion.response.clientDataJSON]).toEqual(['string', 'string', 'string']);
    const added = rows.find((r) => (r.kind === 'owner.passkey_added' || r.kind === 'owner.passkeys_carried') && JSON.stringify(r.data).includes(idOf(laptopCred)))!;
    expect(added).toBeDefined();
    const key: PasskeyKey = added.kind === 'owner.passkey_added' ? added.data : added.data.keys.find((k: PasskeyKey) => k.credential_id === idOf(laptopCred));
    const evidence = evidenceOf(approved.data.passkey)!;
    expect(await checkAssertion(evidence, decisionOfRow(agent.walletId, approved.kind, approved.data)!, key)).toMatchObject({ ok: true });
    const changed = decisionOfRow(agent.walletId, approved.kind, { ...approved.data, amount: String(Number(approved.data.amount) + 1) })!;
    expect(await checkAssertion(evidence, changed, key)).toMatchObject({ ok: false });
    // The real CLI: verify-log checks the export against the daemon's published key and the owner's signatures; the row with its amount changed fails.
    const exported = join(mkdtempSync(join(tmpdir(), 'aw-passkey-log-')), 'log.jsonl');
    writeFileSync(exported, await (await page.request.get(`${origin}/dashboard/wallets/${agent.walletId}/decision-log.jsonl`)).text());
    const keyUrl = `${origin}/.well-known/agent-wallet/log-key`;
    const verified = await runCli(['owner', 'verify-log', exported, '--key', keyUrl, '--json']);
    expect(verified.code).toBe(0);
    expect((verified.json as any).owner_signatures.ok).toBe(true);
    expect((verified.json as any).owner_signatures.signed_decisions).toBeGreaterThanOrEqual(1);
    const lines = readFileSync(exported, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"approval.approved"') && l.includes(waiting.approval_id));
    const logRow = JSON.parse(lines[at]!);
    lines[at] = JSON.stringify({ ...logRow, data: { ...logRow.data, amount: String(Number(logRow.data.amount) + 1) } });
    writeFileSync(exported, lines.join('\n'));
    const tampered = await runCli(['owner', 'verify-log', exported, '--key', keyUrl, '--json']);
    expect(tampered.code).toBe(1);
    expect((tampered.json as any).first_bad.seq).toBe(logRow.seq);
    const sentence = await page.goto(`${origin}/dashboard/wallets/${agent.walletId}`).then(() => page.locator('#audit ~ ul.audit').innerText());
    expect(sentence).toContain('signed with passkey “Laptop”');

    // A second passkey, added under the first: the phone creates it, the laptop confirms it. One
    // virtual authenticator at a time (the laptop's key, counter included, is put back afterwards).
    const [laptopNow] = await credentialsOf(cdp, laptop);
    expect(laptopNow.signCount).toBeGreaterThan(0);
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: laptop.id });
    const phone = await addAuthenticator(cdp);
    await page.goto(`${origin}/dashboard/passkeys`);
    await page.getByLabel('Name').fill('Phone');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('heading', { name: 'Confirm the new passkey' }).waitFor();
    const [phoneCred] = await credentialsOf(cdp, phone);
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: phone.id });
    const laptopAgain = await addAuthenticator(cdp);
    await cdp.send('WebAuthn.addCredential', { authenticatorId: laptopAgain.id, credential: laptopNow } as never);
    await page.getByRole('button', { name: 'Confirm with an existing passkey' }).click();
    await page.waitForURL((u) => u.searchParams.get('done') === 'added');
    const listed = await page.locator('#passkeys').innerText();
    expect(listed).toContain('Laptop');
    expect(listed).toContain('Phone');
    const addedPhone = (await decisionRows(page, agent.walletId)).find((r) => r.kind === 'owner.passkey_added' && r.data.credential_id === idOf(phoneCred))!;
    expect(addedPhone.data.passkey).toMatchObject({ credential_id: idOf(laptopCred) });

    // Loosening the rails (a higher threshold) asks the passkey: refused while it cannot verify the user, saved once it can.
    const railsBefore = await owner.call<any>('owner', 'get_guard_rails', { wallet_id: agent.walletId });
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId: laptopAgain.id, isUserVerified: false } as never);
    await openRails(page, agent.walletId);
    await page.getByLabel('Approval above').fill('200');
    await page.getByRole('button', { name: 'Save guard rails' }).click();
    const refused = await refusal(page);
    expect(refused).toMatch(/passkey|verif/i);
    expect(await owner.call<any>('owner', 'get_guard_rails', { wallet_id: agent.walletId })).toEqual(railsBefore);
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId: laptopAgain.id, isUserVerified: true } as never);
    await openRails(page, agent.walletId);
    await page.getByLabel('Approval above').fill('200');
    await page.getByRole('button', { name: 'Save guard rails' }).click();
    await page.getByText('Guard rails saved').waitFor();
    const loosened = (await decisionRows(page, agent.walletId)).filter((r) => r.kind === 'guard_rails.set').at(-1)!;
    expect(loosened.data.requested).toMatchObject({ approval_above: 200 });
    expect(loosened.data.passkey).toMatchObject({ credential_id: idOf(laptopCred) });
    // Tightening asks nothing: it is saved as before, with no assertion (even while the device cannot verify).
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId: laptopAgain.id, isUserVerified: false } as never);
    await openRails(page, agent.walletId);
    await page.getByLabel('Approval above').fill('30');
    await page.getByRole('button', { name: 'Save guard rails' }).click();
    await page.getByText('Guard rails saved').waitFor();
    const tightened = (await decisionRows(page, agent.walletId)).filter((r) => r.kind === 'guard_rails.set').at(-1)!;
    expect(tightened.data.requested).toMatchObject({ approval_above: 30 });
    expect(tightened.data.passkey).toBeUndefined();

    // An authenticator that does not verify its user is refused: the approval stays pending, nothing moves.
    const second = await agent.api.call<any>('bot', 'pay', { to: vendor.username, amount: '40', note: 'Second licence' });
    expect(second.status).toBe('awaiting_approval');
    await page.goto(`${origin}/dashboard`);
    await page.locator(`tr[id="${second.approval_id}"]`).getByRole('button', { name: /^Approve/ }).click();
    const refusedApproval = await refusal(page);
    expect(refusedApproval).toMatch(/passkey|verif/i);
    expect(await agent.api.call<any>('bot', 'approval_status', { approval_id: second.approval_id })).toMatchObject({ status: 'pending' });
    await context.close();
  },
  180_000,
);

test.skipIf(!haveChromium)(
  'docs/screenshots: the Passkeys page and the passkey prompt of a mailed link at 1280×800 and 390×844, axe-core finds no violation',
  async () => {
    const email = 'passkey-docs@example.com';
    const agent = await world.agent('Research Agent', { claimBy: email });
    await world.claim(agent.walletId, email);
    const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false } as never);
    await addAuthenticator(cdp);
    await page.goto(await askSignInLink(page, email));
    await page.getByRole('button', { name: /^Sign in/ }).click();
    await page.waitForURL((u) => u.pathname === '/dashboard');
    await page.goto(`${origin}/dashboard/passkeys`);
    await page.getByLabel('Name').fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL((u) => u.searchParams.get('done') === 'added');
    const link = await askSignInLink(page, email);

    // axe-core is injected as a script: a context that bypasses the CSP, with this owner's session.
    const shots = await browser!.newContext({ bypassCSP: true });
    await shots.addCookies(await context.cookies());
    const shot = await shots.newPage();
    await shootDocs(shot, 'passkeys', `${origin}/dashboard/passkeys`, async (p) => expect(await p.locator('#passkeys').innerText()).toContain('Work laptop'));
    await shootDocs(shot, 'passkey-prompt', link, async (p) => await p.getByRole('heading', { name: 'Sign in with your passkey' }).waitFor());
    await shots.close();
    await context.close();
  },
  120_000,
);
