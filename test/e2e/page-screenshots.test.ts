/**
 * Every page a person sees, in headless Chromium against a real daemon app and simnet: the owner's
 * wallet list, wallet page and transaction detail, the mailed approval page for a payment and for a
 * withdrawal, the wallet page's budget bars and 30-day chart on a desktop (1280×800) and a phone
 * (390×844, where no caption wraps a word per line and the history is a compact list), and the
 * checkout open, paid and expired (and open on a phone). Each is checked with
 * axe-core (no accessibility violation on any of them) and saved: under test/web/__screenshots__/
 * with AW_UPDATE_SCREENSHOTS=1 (the committed set), else in a temp dir the test prints, so a
 * test run leaves the tree clean.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { newId } from '../../src/contract/ids.ts';
import { listMail, type MailLink } from '../../src/db/mail.ts';
import { insertTx } from '../../src/db/transactions.ts';
import { findOwnerByEmail } from '../../src/db/owners.ts';
import { insertSweep } from '../../src/db/recovery.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(`\n!!! BROWSER TEST SKIPPED: ${CHROMIUM} is missing. Install it with "apt-get install -y chromium" to run test/e2e/page-screenshots.test.ts.\n`);
}
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = process.env.AW_UPDATE_SCREENSHOTS === '1' ? join(import.meta.dir, '..', 'web', '__screenshots__') : mkdtempSync(join(tmpdir(), 'aw-screenshots-'));
/** Issue 43's set for the README: docs/screenshots/ with AW_UPDATE_SCREENSHOTS=1, else a temp dir. */
const DOCS = process.env.AW_UPDATE_SCREENSHOTS === '1' ? join(import.meta.dir, '..', '..', 'docs', 'screenshots') : mkdtempSync(join(tmpdir(), 'aw-docs-screenshots-'));
const AXE = join(import.meta.dir, '..', '..', 'node_modules', 'axe-core', 'axe.min.js');
const OWNER = 'screens-owner@example.com';

let world: World;
let browser: BrowserContext | null = null;
let origin = '';

beforeAll(async () => {
  if (!haveChromium) return;
  mkdirSync(SHOTS, { recursive: true });
  mkdirSync(DOCS, { recursive: true });
  world = await startWorld();
  origin = new URL(world.url).origin;
  world.services.publicUrl = () => origin;
  // bypassCSP: the pages' CSP refuses the injected axe-core script (the CSP itself is tested by
  // checkout-browser.test.ts, whose script must run under it).
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'aw-chromium-')), { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1280, height: 900 }, bypassCSP: true });
}, 60_000); // a daemon world and Chromium: more than the default 5 s on a loaded 2-core machine

afterAll(async () => {
  if (browser) console.log(`page screenshots: ${SHOTS} and ${DOCS}`);
  await browser?.close();
  await world?.stop();
});

/** The newest outbox mail to `to` of `kind`: its links, pointed at this world. */
async function mailLinks(to: string, kind: string): Promise<Record<string, string>> {
  const mail = (await listMail(world.services.db, 200)).find((m) => m.to_addr === to && m.kind === kind);
  if (!mail) throw new Error(`no ${kind} mail to ${to}`);
  return Object.fromEntries((JSON.parse(mail.links) as MailLink[]).map((l) => [l.label, `${origin}${new URL(l.url).pathname}`]));
}

/** Saves a full-page screenshot as NAME.png (in `dir`, default the test/web set) and runs axe-core on the page: no violations. */
async function shootAndCheck(page: Page, name: string, dir = SHOTS): Promise<void> {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
  await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(async () => {
    const r = await (globalThis as any).axe.run(document, { resultTypes: ['violations'] });
    return { passed: r.passes.length, violations: r.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3) })) };
  });
  if (result.violations.length) console.error(`axe violations on ${name}:`, JSON.stringify(result.violations, null, 2));
  expect({ page: name, violations: result.violations }).toEqual({ page: name, violations: [] });
  // The rules ran: a page's landmarks, headings, contrast and labels pass, not nothing.
  expect(result.passed).toBeGreaterThan(10);
}

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(`${origin}/login`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
  await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
  await page.goto((await mailLinks(email, 'login'))['sign in']!);
  await page.getByRole('button', { name: /^Sign in/ }).click();
  await page.waitForURL((u) => u.pathname === '/dashboard');
}

test.skipIf(!haveChromium)(
  'wallet list, wallet page, transaction detail and both approval pages: screenshots, and axe-core finds no violation',
  async () => {
    const agent = await world.agent('Research Agent', { claimBy: OWNER });
    const shop = await world.agent('Corner Cafe', { claimBy: OWNER });
    const owner = await world.claim(agent.walletId, OWNER);
    await world.fund(agent.address, 120_000_000n);
    await world.fund(shop.address, 0n);
    const paid = await agent.api.call<any>('bot', 'pay', { to: shop.username, amount: '12.5', note: 'API credits' });
    const done = await confirmSignSubmit(agent.api, agent.profile, paid.transaction_id);
    expect(done.status).toBe('completed');
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { approval_above: '20', budgets: { daily: '100' } } });
    const waiting = await agent.api.call<any>('bot', 'pay', { to: shop.username, amount: '45', note: 'Annual plan' });
    expect(waiting.status).toBe('awaiting_approval');
    const approvalLinks = await mailLinks(OWNER, 'approval');
    const withdrawal = await agent.api.call<any>('bot', 'withdraw', { amount: '30', to_address: shop.address, reason: 'Move the monthly surplus to the cold wallet' });
    expect(withdrawal.status).toBe('awaiting_approval');

    const page = await browser!.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, OWNER);
    expect(await page.locator('td[data-label="Balance"]').first().innerText()).toMatch(/USDC/);
    await shootAndCheck(page, 'wallet-list');

    await page.getByRole('link', { name: 'Research Agent' }).first().click();
    await page.getByRole('heading', { name: /Research Agent/ }).waitFor();
    await shootAndCheck(page, 'wallet-page');

    await page.locator(`a[href="/dashboard/transactions/${paid.transaction_id}"]`).click();
    await page.getByRole('heading', { name: /Sent 12.5 USDC/ }).waitFor();
    expect(await page.locator('dl.detail').innerText()).toContain(done.signature as string);
    await shootAndCheck(page, 'transaction-detail');

    await page.goto(approvalLinks.approve!);
    await page.getByRole('heading').first().waitFor();
    const approvalText = await page.locator('main').innerText();
    expect(approvalText).toMatch(/45 \+ [0-9.]+ fee = 45\.[0-9]+ USDC/);
    expect(approvalText).toContain('Annual plan');
    await shootAndCheck(page, 'approval-payment');

    await page.goto((await mailLinks(OWNER, 'approval')).approve!);
    expect(await page.locator('main').innerText()).toContain('Move the monthly surplus to the cold wallet');
    await shootAndCheck(page, 'approval-withdrawal');
    await page.close();
  },
  60_000,
);

/**
 * On a phone, text that wraps a word per line is a column too narrow for it: every visible
 * caption, label, cell or line of text with three words or more must hold at least two words a line.
 */
async function wordPerLineOffenders(page: Page): Promise<string[]> {
  return await page.evaluate(() => {
    const out: string[] = [];
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('main caption, main figcaption, main dt, main dd, main th, main td, main li, main p, main label, main summary, main legend'))) {
      const text = (el.innerText ?? '').trim();
      const words = text.split(/\s+/).filter((w) => w.length > 0).length;
      const rect = el.getBoundingClientRect();
      if (words < 3 || rect.height === 0) continue;
      // Visually hidden (a card table's clipped header row): not seen, not judged.
      let hidden = false;
      for (let a: HTMLElement | null = el; a && !hidden; a = a.parentElement) hidden = getComputedStyle(a).clip.startsWith('rect');
      if (hidden) continue;
      // The text's own height (a table cell stretches to its row; its padding is not text).
      const range = document.createRange();
      range.selectNodeContents(el);
      const lineHeight = Number.parseFloat(getComputedStyle(el).lineHeight) || 20;
      const lines = Math.round(range.getBoundingClientRect().height / lineHeight);
      // Lines the markup asks for: explicit breaks, and a card cell's column label above it.
      const label = getComputedStyle(el, '::before').content;
      const asked = el.querySelectorAll('br').length + (label !== 'none' && label !== 'normal' ? 1 : 0);
      if (lines > Math.ceil(words / 2) + asked) out.push(`${el.tagName.toLowerCase()} "${text.slice(0, 60)}": ${words} words on ${lines} lines`);
    }
    return out;
  });
}

test.skipIf(!haveChromium)(
  'wallet page with budget bars and the 30-day chart at 1280×800 and 390×844: screenshots, axe-core finds no violation, no word-per-line captions, a compact history on the phone',
  async () => {
    const email = 'glance-owner@example.com';
    const agent = await world.agent('Glance Agent', { claimBy: email });
    const shop = await world.agent('Data Vendor', { claimBy: email });
    const owner = await world.claim(agent.walletId, email);
    await world.fund(agent.address, 200_000_000n);
    await world.fund(shop.address, 0n);
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { budgets: { daily: '50', weekly: '150', monthly: '400' } } });
    const paid = await agent.api.call<any>('bot', 'pay', { to: shop.username, amount: '18', note: 'Dataset licence' });
    expect((await confirmSignSubmit(agent.api, agent.profile, paid.transaction_id)).status).toBe('completed');
    // Earlier days' spending, written to the ledger as the payment and x402 code write settled rows
    // (the triggers keep the budget buckets), so the chart has a month to show.
    const now = world.services.now().getTime();
    const day = 86_400_000;
    const history: [number, 'payment' | 'x402', bigint][] = [
      [1, 'payment', 12_000_000n], [1, 'x402', 1_500_000n], [2, 'x402', 2_250_000n], [3, 'payment', 30_000_000n], [5, 'x402', 800_000n],
      [6, 'payment', 9_500_000n], [8, 'payment', 22_000_000n], [8, 'x402', 3_000_000n], [11, 'x402', 1_200_000n], [13, 'payment', 41_000_000n],
      [16, 'payment', 7_000_000n], [19, 'x402', 4_400_000n], [22, 'payment', 15_000_000n], [26, 'payment', 11_000_000n], [29, 'x402', 2_000_000n],
    ];
    await world.services.db.transaction(async () => {
      for (const [ago, type, amount] of history) {
        await insertTx(world.services.db, {
          transaction_id: newId('transaction'),
          wallet_id: agent.walletId,
          type,
          direction: 'out',
          category: type === 'x402' ? 'x402' : 'wallet',
          status: 'completed',
          amount,
          fee: type === 'x402' ? 0n : 50_000n,
          counterparty: type === 'x402' ? 'api.weather.example' : shop.username,
          to_address: shop.address,
          now: now - ago * day,
          completed_at: now - ago * day,
        });
      }
    });

    const page = await browser!.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page, email);
    await page.goto(`${origin}/dashboard/wallets/${agent.walletId}`);
    await page.getByRole('heading', { name: 'Spending' }).waitFor();
    const bars = await page.locator('ul.budgets').innerText();
    expect(bars).toContain('Today: 18.0');
    expect(bars).toContain('budgets.daily');
    expect(bars).toContain('of 400 USDC');
    expect(await page.locator('svg.chart desc').textContent()).toContain('30 days from');
    expect(await page.locator('svg.chart rect').count()).toBeGreaterThan(10);
    await shootAndCheck(page, 'wallet-spending');
    expect(await wordPerLineOffenders(page)).toEqual([]);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByRole('heading', { name: 'Spending' }).waitFor();
    await shootAndCheck(page, 'wallet-spending-mobile');
    expect(await wordPerLineOffenders(page)).toEqual([]);
    // The history as a compact list: each row at most three short lines, not a tall card.
    const rows = page.locator('table.history tbody tr');
    expect(await rows.count()).toBe(16);
    const heights = await rows.evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height));
    expect(Math.max(...heights)).toBeLessThan(90);
    // The page fits the phone: nothing scrolls sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    // Dashboard home with what the agent asks of its owner: an approval that says why, a fund request, a paylink.
    const waiting = await agent.api.call<any>('bot', 'pay', { to: shop.username, amount: '60', note: 'Quarterly data refresh' });
    expect(waiting.status).toBe('awaiting_approval');
    await agent.api.call<any>('bot', 'request_funds', { amount: '75', reason: 'Crawl budget for December' });
    await agent.api.call<any>('bot', 'create_payment_request', { description: 'Market report, November', amount: '30' });
    await page.goto(`${origin}/dashboard`);
    const home = await page.locator('main').innerText();
    expect(home).toContain('Quarterly data refresh');
    expect(home).toMatch(/60 \+ [0-9.]+ fee = [0-9.]+ USDC/);
    expect(home).toContain('Crawl budget for December');
    expect(home).toContain('Market report, November');
    await shootAndCheck(page, 'dashboard-asks-mobile');
    expect(await wordPerLineOffenders(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.reload();
    await shootAndCheck(page, 'dashboard-asks');
    expect(await wordPerLineOffenders(page)).toEqual([]);
    await page.close();
  },
  120_000,
);

test.skipIf(!haveChromium)(
  'checkout open (desktop and phone), paid and expired: screenshots, and axe-core finds no violation',
  async () => {
    const seller: Agent = await world.agent('Harbour Bakery', { claimBy: 'baker@example.com' });
    const buyer: Agent = await world.agent('Buyer Bot', { claimBy: 'buyer@example.com' });
    await world.fund(buyer.address, 100_000_000n);
    const items = [
      { description: 'Sourdough loaf', price: '6.5', quantity: 2 },
      { description: 'Cinnamon bun', price: '3.25', quantity: 4 },
    ];
    const link = await seller.api.call<any>('bot', 'create_payment_request', { description: 'Order #1042 — pickup Saturday', items });

    const page = await browser!.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(link.url);
    await page.locator('#countdown').waitFor();
    await shootAndCheck(page, 'checkout-open');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await shootAndCheck(page, 'checkout-open-mobile');

    const intent = await buyer.api.call<any>('bot', 'pay', { payment_request_id: link.request_id });
    expect((await confirmSignSubmit(buyer.api, buyer.profile, intent.transaction_id)).status).toBe('completed');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(link.url);
    expect(await page.locator('#pay-status').getAttribute('data-status')).toBe('paid');
    await shootAndCheck(page, 'checkout-paid');

    const stale = await seller.api.call<any>('bot', 'create_payment_request', { description: 'Order #1043', items, expires_in: 3600 });
    world.clock.offsetMs += 2 * 3_600_000;
    try {
      await page.goto(stale.url);
      expect(await page.locator('#pay-status').getAttribute('data-status')).toBe('expired');
      await shootAndCheck(page, 'checkout-expired');
    } finally {
      world.clock.offsetMs -= 2 * 3_600_000;
    }
    await page.close();
  },
  60_000,
);

/** The two sizes issue 43 names: a laptop and a phone. */
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/** Opens `url` (or reloads) at each size, and saves NAME-WxH.png under docs/screenshots/ after axe-core finds no violation. */
async function shootDocs(page: Page, name: string, url: string, ready: (page: Page) => Promise<unknown>): Promise<void> {
  for (const size of SIZES) {
    await page.setViewportSize(size);
    await page.goto(url);
    await ready(page);
    await shootAndCheck(page, `${name}-${size.width}x${size.height}`, DOCS);
  }
}

test.skipIf(!haveChromium)(
  "docs/screenshots: dashboard home, wallet page with bars and chart, approval page, checkout before and after paying, fund request and the sweep banner at 1280×800 and 390×844, axe-core finds no violation",
  async () => {
    const email = 'docs-owner@example.com';
    const agent = await world.agent('Research Agent', { claimBy: email });
    const vendor = await world.agent('Data Vendor', { claimBy: 'vendor@example.com' });
    const owner = await world.claim(agent.walletId, email);
    await world.fund(agent.address, 250_000_000n);
    await world.fund(vendor.address, 0n);
    await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { approval_above: '50', budgets: { daily: '60', weekly: '200', monthly: '600' } } });
    const paid = await agent.api.call<any>('bot', 'pay', { to: vendor.username, amount: '18.09', note: 'Dataset licence' });
    expect((await confirmSignSubmit(agent.api, agent.profile, paid.transaction_id)).status).toBe('completed');
    const now = world.services.now().getTime();
    const day = 86_400_000;
    const earlier: [number, 'payment' | 'x402', bigint][] = [
      [1, 'payment', 12_000_000n], [1, 'x402', 1_500_000n], [2, 'x402', 2_250_000n], [4, 'payment', 30_000_000n], [6, 'x402', 800_000n],
      [9, 'payment', 22_000_000n], [12, 'x402', 3_000_000n], [15, 'payment', 41_000_000n], [20, 'x402', 4_400_000n], [25, 'payment', 15_000_000n],
    ];
    await world.services.db.transaction(async () => {
      for (const [ago, type, amount] of earlier) {
        await insertTx(world.services.db, {
          transaction_id: newId('transaction'), wallet_id: agent.walletId, type, direction: 'out', category: type === 'x402' ? 'x402' : 'wallet', status: 'completed', amount,
          fee: type === 'x402' ? 0n : 50_000n, counterparty: type === 'x402' ? 'api.weather.example' : vendor.username, to_address: vendor.address, now: now - ago * day, completed_at: now - ago * day,
        });
      }
    });
    const waiting = await agent.api.call<any>('bot', 'pay', { to: vendor.username, amount: '75', note: 'Quarterly data refresh' });
    expect(waiting.status).toBe('awaiting_approval');
    const approve = (await mailLinks(email, 'approval')).approve!;
    const fund = await agent.api.call<any>('bot', 'request_funds', { amount: '40', reason: 'Crawl budget for December' });
    const fundUrl = `${origin}${new URL(fund.fund_url).pathname}`;
    await agent.api.call<any>('bot', 'create_payment_request', { description: 'Market report, November', amount: '30' });

    const page = await browser!.newPage();
    await signIn(page, email);
    await shootDocs(page, 'dashboard-home', `${origin}/dashboard`, async (p) => await p.getByRole('heading', { name: 'Your wallets' }).waitFor());
    await shootDocs(page, 'wallet-page', `${origin}/dashboard/wallets/${agent.walletId}`, async (p) => {
      await p.getByRole('heading', { name: 'Spending' }).waitFor();
      expect(await p.locator('ul.budgets').innerText()).toContain('budgets.daily');
      expect(await p.locator('svg.chart rect').count()).toBeGreaterThan(5);
    });
    await shootDocs(page, 'approval', approve, async (p) => expect(await p.locator('main').innerText()).toContain('Quarterly data refresh'));
    await shootDocs(page, 'fund-request', fundUrl, async (p) => expect(await p.locator('main').innerText()).toContain('Crawl budget for December'));

    // Checkout before and after paying: a seller's paylink, paid by another agent.
    const link = await vendor.api.call<any>('bot', 'create_payment_request', {
      description: 'Order #1042 — pickup Saturday',
      items: [{ description: 'Sourdough loaf', price: '6.5', quantity: 2 }, { description: 'Cinnamon bun', price: '3.25', quantity: 4 }],
    });
    await shootDocs(page, 'checkout-before-paying', link.url, async (p) => await p.locator('#countdown').waitFor());
    const buyer = await world.agent('Buyer Bot', { claimBy: 'buyer2@example.com' });
    await world.fund(buyer.address, 100_000_000n);
    const intent = await buyer.api.call<any>('bot', 'pay', { payment_request_id: link.request_id });
    expect((await confirmSignSubmit(buyer.api, buyer.profile, intent.transaction_id)).status).toBe('completed');
    await shootDocs(page, 'checkout-after-paying', link.url, async (p) => expect(await p.locator('#pay-status').getAttribute('data-status')).toBe('paid'));

    // The sweep banner: a sweep announced for the wallet (as the owner's kit announces one), atop every owner page.
    const ownerRow = (await findOwnerByEmail(world.services.db, email))!;
    await world.services.db.transaction(async () => {
      await insertSweep(world.services.db, { sweep_id: newId('recoverySweep'), wallet_id: agent.walletId, owner_id: ownerRow.owner_id, to_address: vendor.address, executes_at: now + day, now });
    });
    await shootDocs(page, 'sweep-banner', `${origin}/dashboard/wallets/${agent.walletId}`, async (p) => expect(await p.locator('main').innerText()).toMatch(/sweep/i));
    await page.close();
  },
  180_000,
);
