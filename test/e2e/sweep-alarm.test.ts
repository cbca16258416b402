/**
 * An announced recovery sweep of the whole balance cannot go unnoticed (issue 40 item 15), with a
 * real daemon process on its simnet, the real CLIs (register, kit enrollment, `owner recover
 * sweep`), the outbox read with `agent-wallet admin mail`, and headless Chromium: dashboard home
 * and the wallet page open with a red banner (amount, destination, when, a Cancel button); the
 * alert mail carries a one-click cancel link that a mail scanner's GET and a POST without the CSRF
 * token leave alone, that signs nobody in and names one sweep only, and whose button cancels: the
 * sweep is never signed, the balance stays.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ApiClient } from '../../src/client/api.ts';
import { openKit, readKit } from '../../src/client/recovery-kit.ts';
import { commit } from '../../src/frost/party.ts';
import { encodeCommitments } from '../../src/frost/wire.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { claimInLedger, runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { errorOf } from '../helpers/errors.ts';
import { tempDir } from '../helpers/services.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`\n!!! BROWSER TEST SKIPPED: ${CHROMIUM} is missing. Install it with "apt-get install -y chromium" to run test/e2e/sweep-alarm.test.ts.\n`);
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = '/tmp/sweep-alarm';
const AXE = join(import.meta.dir, '..', '..', 'node_modules', 'axe-core', 'axe.min.js');
const PASSPHRASE = 'the owner kit passphrase';
const EMAIL = 'owner@example.com';
const DELAY_SECONDS = 4;

let daemon: DaemonProcess;
let browser: BrowserContext;

beforeAll(async () => {
  if (!haveChromium) return;
  daemon = await startDaemonProcess({ env: { AGENT_WALLET_RECOVERY_SWEEP_DELAY_SECONDS: String(DELAY_SECONDS) } });
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'aw-chromium-')), { executablePath: CHROMIUM, headless: true, args: FLAGS, bypassCSP: true });
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

/** The newest outbox mail to `to` of `kind`, read with the real admin CLI; polled with a deadline. */
async function mailTo(kind: string, after = 0): Promise<{ subject: string; text: string; links: { label: string; url: string }[] }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await runCli(['admin', 'mail', '--json', '--data-dir', daemon.dataDir]);
    const mails = (res.json as any).items.filter((m: any) => m.to === EMAIL && m.kind === kind);
    if (mails.length > after) return mails[0];
    if (Date.now() > deadline) throw new Error(`no ${kind} mail to ${EMAIL} in the outbox: ${res.stdout}`);
    await Bun.sleep(100);
  }
}

/** A wallet claimed by EMAIL, funded with `usdc` on the simnet, its owner's kit enrolled through the real CLIs. */
async function walletWithKit(name: string, usdc: bigint) {
  const home = join(tempDir('aw-alarm-agent-'), 'home');
  const reg = await runCli(['register', '--name', name, '--server', daemon.url, '--home', home, '--json']);
  expect(reg.code).toBe(0);
  const { wallet_id: walletId, address } = reg.json as any;
  await claimInLedger(daemon.dataDir, [walletId], 'simnet');
  const token = (await runCli(['admin', 'owner-token', EMAIL, '--data-dir', daemon.dataDir, '--json'])).json as any;
  const ownerHome = tempDir('aw-alarm-owner-');
  const ownerEnv = { AGENT_WALLET_URL: daemon.url, AGENT_WALLET_OWNER_TOKEN: token.token, AGENT_WALLET_HOME: ownerHome, AGENT_WALLET_KIT_PASSPHRASE: PASSPHRASE };
  const started = await runCli(['owner', 'recovery', 'start', walletId, '--json'], ownerEnv);
  expect(started.code).toBe(0);
  expect((await runCli(['recovery', 'enroll', (started.json as any).code, '--home', home, '--json'])).code).toBe(0);
  const kitPath = join(ownerHome, 'kit.json');
  expect((await runCli(['owner', 'recovery', 'finish', (started.json as any).enrollment_id, '--out', kitPath, '--json'], ownerEnv)).code).toBe(0);
  const rpc = await fetch(daemon.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'simnet_faucet', params: [address, String(usdc)] }) });
  expect(((await rpc.json()) as any).error).toBeUndefined();
  return { walletId, address, kitPath, ownerEnv, owner: new ApiClient(daemon.url, token.token) };
}

/** Where the pages are (the daemon's URL is its API's, /v1). */
// The pages' origin: the daemon's links name localhost (src/daemon/services.ts), where the owner's session cookie lives.
const origin = () => new URL(daemon.url).origin.replace('//127.0.0.1:', '//localhost:');
/** axe-core finds no accessibility violation on the page (the banner's contrast and landmarks included). */
async function accessible(page: Page): Promise<void> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => (await (globalThis as any).axe.run(document, { resultTypes: ['violations'] })).violations.map((v: any) => ({ id: v.id, nodes: v.nodes.map((n: any) => n.target.join(' ')) })));
  expect(violations).toEqual([]);
}

const sweepsOf = async (owner: ApiClient, walletId: string) => (await owner.call<any>('owner', 'recovery_sweeps', { wallet_id: walletId })).items as any[];

test.skipIf(!haveChromium)(
  "a sweep announced with the owner's kit: a red banner atop dashboard home and the wallet page; the mail's one-click link survives a scanner and a forged POST, then the owner's click cancels and nothing is ever swept",
  async () => {
    const w = await walletWithKit('Research Agent', 12_500_000n);
    const to = (await generateKeyPairSigner()).address;
    const announced = await runCli(['owner', 'recover', 'sweep', '--kit', w.kitPath, '--to', to, '--json'], w.ownerEnv);
    expect(announced.code, announced.stdout + announced.stderr).toBe(5);
    const [sweep] = await sweepsOf(w.owner, w.walletId);
    expect(sweep).toMatchObject({ status: 'waiting', to_address: to });

    // The alert mail has a link that cancels, besides the CLI command.
    const mail = await mailTo('recovery');
    const link = mail.links.find((l) => l.label === 'cancel the sweep')?.url;
    expect(link).toBeDefined();
    expect(mail.text).toContain(link!);

    // A mail scanner opens it (twice, and HEAD): a page, nothing cancelled.
    for (const method of ['GET', 'GET', 'HEAD']) expect((await fetch(link!, { method, redirect: 'manual' })).status).toBe(200);
    // A POST without the page's CSRF token (no field; a field without its cookie) cancels nothing.
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await fetch(link!, { method: 'POST', redirect: 'manual', headers: form, body: '' })).status).toBe(403);
    expect((await fetch(link!, { method: 'POST', redirect: 'manual', headers: form, body: `csrf=${'A'.repeat(43)}` })).status).toBe(403);
    // The token is bound to its sweep: another sweep id with it is not found.
    const forOther = link!.replace(sweep.sweep_id, 'rsw_00000000000000000000000000');
    expect((await fetch(forOther, { redirect: 'manual' })).status).toBe(404);
    expect((await sweepsOf(w.owner, w.walletId))[0].status).toBe('waiting');

    // The owner signs in: dashboard home opens with the alarm, above everything else.
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1000, height: 800 });
    await page.goto(`${origin()}/login`);
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    await page.goto((await mailTo('login')).links[0]!.url);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === '/dashboard');
    const alarm = page.locator('main .alarm');
    expect(await alarm.count()).toBe(1);
    const text = (await alarm.textContent())!;
    expect(text).toContain('Research Agent');
    expect(text).toContain('12.5 USDC');
    expect(text).toContain(to);
    expect(text).toContain(`${sweep.executes_at.slice(0, 10)} ${sweep.executes_at.slice(11, 16)} UTC`);
    expect(await alarm.getByRole('button', { name: 'Cancel the sweep' }).count()).toBe(1);
    expect(await alarm.evaluate((el) => el === el.parentElement!.firstElementChild)).toBe(true);
    expect(await alarm.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(164, 14, 38)');
    await page.screenshot({ path: `${SHOTS}-home.png` });
    await accessible(page);

    // The wallet page too: the alarm comes before the balance.
    await page.goto(`${origin()}/dashboard/wallets/${w.walletId}`);
    const walletAlarm = page.locator('main .alarm');
    expect(await walletAlarm.count()).toBe(1);
    expect(await walletAlarm.textContent()).toContain(to);
    // One Cancel button on the page: the alarm's (the Recovery section points to it).
    expect(await page.getByRole('button', { name: 'Cancel the sweep' }).count()).toBe(1);
    expect(await page.evaluate(() => !!(document.querySelector('main .alarm')!.compareDocumentPosition(document.querySelector('main .money')!) & Node.DOCUMENT_POSITION_FOLLOWING))).toBe(true);
    await page.screenshot({ path: `${SHOTS}-wallet.png` });
    await accessible(page);

    // The owner clicks the mail's link in a browser with no session: a confirmation page, one button.
    const mailReader = await browser.browser()!.newContext({ bypassCSP: true });
    const linkPage = await mailReader.newPage();
    await linkPage.goto(link!);
    expect(await linkPage.locator('h1').textContent()).toContain('Cancel the sweep');
    expect(await linkPage.locator('main').textContent()).toContain(to);
    await linkPage.screenshot({ path: `${SHOTS}-link.png` });
    await accessible(linkPage);
    await linkPage.getByRole('button', { name: 'Cancel the sweep' }).click();
    await linkPage.getByRole('heading', { name: 'Sweep cancelled' }).waitFor();
    await linkPage.screenshot({ path: `${SHOTS}-cancelled.png` });
    // The link signed nobody in: the dashboard still asks for a sign-in.
    expect((await mailReader.cookies()).some((c) => c.name === 'aw_session')).toBe(false);
    await linkPage.goto(`${origin()}/dashboard`);
    expect(new URL(linkPage.url()).pathname).toBe('/login');
    await mailReader.close();
    expect((await sweepsOf(w.owner, w.walletId))[0].status).toBe('cancelled');
    const audit = await w.owner.call<any>('owner', 'audit_log', { wallet_id: w.walletId });
    expect(audit.items.find((e: any) => e.kind === 'recovery.sweep_cancelled').actor).toContain('email');

    // The banner is gone; opened again, the link says it is cancelled already.
    await page.goto(`${origin()}/dashboard`);
    expect(await page.locator('main .alarm').count()).toBe(0);
    expect((await fetch(link!, { redirect: 'manual' })).status).toBe(410);

    // Past the delay the kit cannot sign it: nothing is ever swept.
    await Bun.sleep(Math.max(0, Date.parse(sweep.executes_at) - Date.now() + 500));
    const key = openKit(readKit(w.kitPath), PASSPHRASE);
    const refused = await errorOf(w.owner.call('owner', 'recovery_sweep_sign', { sweep_id: sweep.sweep_id, commitments: encodeCommitments(commit(key).commitments) }));
    expect(refused.errorCode).toBe('INVALID_STATUS');
    // A second announcement: the first mail's token opens nothing of it; the banner's button cancels it.
    const again = await w.owner.call<{ sweep_id: string }>('owner', 'recovery_sweep_start', { wallet_id: w.walletId, to_address: to });
    expect((await fetch(link!.replace(sweep.sweep_id, again.sweep_id), { redirect: 'manual' })).status).toBe(404);
    await page.goto(`${origin()}/dashboard`);
    await page.locator('main .alarm').getByRole('button', { name: 'Cancel the sweep' }).click();
    await page.getByText('Sweep cancelled: nothing moves.').waitFor();
    expect(await page.locator('main .alarm').count()).toBe(0);
    expect((await sweepsOf(w.owner, w.walletId)).map((x) => x.status)).toEqual(['cancelled', 'cancelled']);

    const chain = createRpcChainPort(daemon.rpcUrl);
    const mint = daemon.started.usdc_mint as Address;
    expect(await chain.getTokenBalance(w.address, mint)).toBe(12_500_000n);
    expect(await chain.getTokenBalance(to, mint)).toBe(0n);
    await page.close();
  },
  90_000,
);
