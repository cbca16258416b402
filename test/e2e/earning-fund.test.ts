/**
 * Fund requests end to end on simnet: request_funds (idempotent) mails the owner a fund page; the
 * page (plain HTTP GET) shows the deposit address and a Solana Pay QR code; its simnet faucet
 * button deposits; the deposit watcher records the deposit and fulfils the request with its event.
 * The owner lists and declines requests on the owner API (with a reason the agent reads), and on
 * the dashboard, signed in over real HTTP, sends a request's amount from the simnet faucet: the
 * deposit watch fulfils it as any covering deposit (refused on any other network).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type ApiClient } from '../../src/client/api.ts';
import { listMail } from '../../src/db/mail.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { errorOf } from '../helpers/errors.ts';
import { runCli } from '../helpers/daemon.ts';

let world: World;
let agent: Agent;
let owner: ApiClient;
let origin: string;

beforeAll(async () => {
  world = await startWorld();
  origin = new URL(world.url).origin;
  // The daemon hands out links to where it listens and knows its embedded simnet (as `serve` sets them).
  world.services.publicUrl = () => origin;
  world.services.simnetRpcUrl = world.simnet.url;
  agent = await world.agent('Research Agent');
  owner = await world.claim(agent.walletId, 'researcher@example.com');
});
afterAll(async () => {
  await world.stop();
});


describe('fund requests', () => {
  test('request_funds → mail to the owner → fund page with address and QR → faucet deposit → fulfilled, with its event', async () => {
    const key = 'fund-1';
    const first = await agent.api.call<any>('bot', 'request_funds', { amount: '12.5', reason: 'API credits for the literature search' }, { idempotencyKey: key });
    expect(first).toMatchObject({ status: 'open', amount: 12.5, reason: 'API credits for the literature search', deposit_address: agent.address, owner_notified: true });
    expect(first.fund_request_id).toMatch(/^fr_[0-9a-z]{26}$/);
    expect(first.fund_url).toBe(`${origin}/fund/${first.fund_request_id}`);
    const retry = await agent.api.call<any>('bot', 'request_funds', { amount: '12.5', reason: 'API credits for the literature search' }, { idempotencyKey: key });
    expect(retry.fund_request_id).toBe(first.fund_request_id);
    expect((await agent.api.call<any>('bot', 'list_fund_requests', {})).total).toBe(1);

    const mail = (await listMail(world.services.db, 20)).find((m) => m.kind === 'fund_request');
    expect(mail).toMatchObject({ to_addr: 'researcher@example.com' });
    expect(mail!.subject).toContain('12.5 USDC');
    expect(JSON.parse(mail!.links)).toEqual([{ label: 'fund page', url: first.fund_url }]);

    const page = await fetch(first.fund_url);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain(agent.address);
    expect(text).toContain('<svg');
    expect(text).toContain('12.50 USDC');
    expect(text).toContain(`solana:${agent.address}?amount=12.5&amp;spl-token=${world.simnet.mint}`);
    expect(text).toContain('API credits for the literature search');
    const csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1];
    expect(csrf).toBeDefined();
    const cookie = page.headers.get('set-cookie')!.split(';')[0]!;

    // Without the form's token the faucet refuses.
    const forged = await fetch(`${first.fund_url}/faucet`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=nope' });
    expect(forged.status).toBe(403);
    const pressed = await fetch(`${first.fund_url}/faucet`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, body: `csrf=${csrf}` });
    expect(pressed.status).toBe(303);
    expect(pressed.headers.get('location')).toBe(`/fund/${first.fund_request_id}?done=faucet`);
    expect(await world.balance(agent.address)).toBe(12_500_000n);

    expect(await scanDeposits(world.services)).toBe(1);
    const [fulfilled] = (await agent.api.call<any>('bot', 'list_fund_requests', { status: 'fulfilled' })).items;
    expect(fulfilled).toMatchObject({ fund_request_id: first.fund_request_id, status: 'fulfilled', resolved_by: 'deposit' });
    const deposit = (await agent.api.call<any>('bot', 'transactions', { type: 'deposit' })).items[0];
    expect(fulfilled.transaction_id).toBe(deposit.transaction_id);
    const events = await agent.api.call<any>('bot', 'events', { types: ['fund_request.created', 'fund_request.fulfilled'] });
    expect(events.items.map((e: any) => e.type)).toEqual(['fund_request.created', 'fund_request.fulfilled']);
    expect(events.items[1].data).toMatchObject({ fund_request_id: first.fund_request_id, amount: 12.5, by: 'deposit', transaction_id: deposit.transaction_id });

    const after = await (await fetch(first.fund_url)).text();
    expect(after).toContain('fulfilled');
    expect(after).not.toContain('simnet faucet');
  });

  test('a deposit fulfils only the requests it covers, oldest first', async () => {
    const small = await agent.api.call<any>('bot', 'request_funds', { amount: 2, reason: 'small' });
    const big = await agent.api.call<any>('bot', 'request_funds', { amount: 50, reason: 'big' });
    await world.fund(agent.address, 5_000_000n);
    await scanDeposits(world.services);
    const open = await agent.api.call<any>('bot', 'list_fund_requests', { status: 'open' });
    expect(open.items.map((r: any) => r.fund_request_id)).toEqual([big.fund_request_id]);
    expect((await agent.api.call<any>('bot', 'list_fund_requests', { status: 'fulfilled' })).items.map((r: any) => r.fund_request_id)).toContain(small.fund_request_id);
  });

  test('a deposit that landed before the request does not fulfil it: faucet 100, then at once fund-request 20 stays open; a deposit after it fulfils it', async () => {
    const late = await world.agent('Late Asker', { claimBy: 'researcher@example.com' });
    await world.fund(late.address, 100_000_000n);
    // At once, before the deposit watch looked: the CLI as the agent runs it.
    const asked = await runCli(['fund-request', '20', '--reason', 'more credits', '--server', world.url, '--home', late.home, '--json']);
    expect(asked.code).toBe(0);
    const id = (asked.json as any).fund_request_id as string;
    expect(await scanDeposits(world.services)).toBeGreaterThanOrEqual(1);
    const status = async () => (await late.api.call<any>('bot', 'list_fund_requests', {})).items.find((r: any) => r.fund_request_id === id);
    expect(await status()).toMatchObject({ status: 'open', transaction_id: null });
    expect((await late.api.call<any>('bot', 'events', { types: ['fund_request.fulfilled'] })).items).toEqual([]);

    const after = await world.fund(late.address, 20_000_000n);
    await scanDeposits(world.services);
    const deposit = (await late.api.call<any>('bot', 'transactions', { type: 'deposit' })).items.find((t: any) => t.signature === after);
    expect(await status()).toMatchObject({ status: 'fulfilled', resolved_by: 'deposit', transaction_id: deposit.transaction_id });
  });

  test('a request answered by a node behind the deposit watch (its newest transaction one the watch passed already) is still fulfilled by money of a later slot, and not by money the watch recorded before it', async () => {
    const lagged = await world.agent('Lagged Asker', { claimBy: 'researcher@example.com' });
    await world.fund(lagged.address, 100_000_000n);
    world.simnet.skipBlocks(2);
    await world.fund(lagged.address, 5_000_000n);
    await scanDeposits(world.services);
    // The node answering request_funds sees the chain two slots back: its newest transaction is the
    // first deposit, which the watch has passed (its cursor is the second).
    world.simnet.skipBlocks(1);
    world.simnet.setStatusLag(2);
    let req: any;
    try {
      req = await lagged.api.call<any>('bot', 'request_funds', { amount: 20, reason: 'behind the watch' });
    } finally {
      world.simnet.setStatusLag(null);
    }
    await scanDeposits(world.services);
    const status = async () => (await lagged.api.call<any>('bot', 'list_fund_requests', {})).items.find((r: any) => r.fund_request_id === req.fund_request_id);
    expect(await status()).toMatchObject({ status: 'open' });
    world.simnet.skipBlocks(1);
    const after = await world.fund(lagged.address, 20_000_000n);
    await scanDeposits(world.services);
    const deposit = (await lagged.api.call<any>('bot', 'transactions', { type: 'deposit' })).items.find((t: any) => t.signature === after);
    expect(await status()).toMatchObject({ status: 'fulfilled', resolved_by: 'deposit', transaction_id: deposit.transaction_id });
  });

  test('the owner lists fund requests and declines one; the agent gets the event; other owners see nothing', async () => {
    const req = await agent.api.call<any>('bot', 'request_funds', { amount: '99', reason: 'GPU hours' });
    const listed = await owner.call<any>('owner', 'fund_requests', { wallet_id: agent.walletId, status: 'open' });
    expect(listed.items.map((r: any) => r.fund_request_id)).toContain(req.fund_request_id);
    expect(listed.items.find((r: any) => r.fund_request_id === req.fund_request_id)).toMatchObject({ amount: 99, wallet_name: 'Research Agent', fund_url: req.fund_url });

    const stranger = await world.ownerClient('stranger@example.com');
    expect((await errorOf(stranger.call('owner', 'resolve_fund_request', { fund_request_id: req.fund_request_id, decision: 'declined' }))).errorCode).toBe('NOT_FOUND');
    expect((await stranger.call<any>('owner', 'fund_requests', {})).total).toBe(0);

    const declined = await owner.call<any>('owner', 'resolve_fund_request', { fund_request_id: req.fund_request_id, decision: 'declined' });
    expect(declined).toMatchObject({ status: 'declined', resolved_by: expect.stringContaining('owner:') });
    expect((await errorOf(owner.call('owner', 'resolve_fund_request', { fund_request_id: req.fund_request_id, decision: 'fulfilled' }))).errorCode).toBe('INVALID_STATUS');
    const events = await agent.api.call<any>('bot', 'events', { types: ['fund_request.declined'] });
    expect(events.items[0].data).toMatchObject({ fund_request_id: req.fund_request_id, by: 'owner' });
    expect((await errorOf(agent.api.call('bot', 'request_funds', { amount: 0, reason: 'x' }))).errorCode).toBe('VALIDATION_ERROR');
    expect((await fetch(`${origin}/fund/fr_00000000000000000000000000`)).status).toBe(404);
  });
});

/** A browser without JavaScript over real HTTP: keeps cookies, reads a page's CSRF field. */
class Browser {
  readonly jar = new Map<string, string>();
  async request(path: string, form?: Record<string, string>): Promise<{ status: number; location: string | null; text: string }> {
    const headers: Record<string, string> = {};
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(new URL(path, origin), { method: form ? 'POST' : 'GET', redirect: 'manual', headers, body: form ? new URLSearchParams(form).toString() : undefined });
    for (const c of res.headers.getSetCookie()) {
      const [name, value] = c.split(';')[0]!.split('=') as [string, string];
      if (value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  }
  static csrf(page: string): string {
    return /name="csrf" value="([^"]+)"/.exec(page)![1]!;
  }
}

/** The owner signs in as a person does: the sign-in form, the mailed link, its one button. */
async function signIn(email: string): Promise<Browser> {
  const b = new Browser();
  const form = await b.request('/login');
  expect((await b.request('/login', { csrf: Browser.csrf(form.text), email })).status).toBe(200);
  const mail = (await listMail(world.services.db, 50)).find((m) => m.kind === 'login' && m.to_addr === email)!;
  const link = new URL((JSON.parse(mail.links) as { url: string }[])[0]!.url).pathname;
  const confirm = await b.request(link);
  expect((await b.request(link, { csrf: Browser.csrf(confirm.text) })).status).toBe(303);
  return b;
}

describe('the owner declines with a reason', () => {
  test('resolve_fund_request {decision: "declined", reason}: trimmed, in the response, both lists, the agent\'s event and the audit log (as a sentence on the wallet page); refused with "fulfilled", blank or over 200 characters', async () => {
    const asker = await world.agent('Reason Asker', { claimBy: 'researcher@example.com' });
    const req = await asker.api.call<any>('bot', 'request_funds', { amount: '40', reason: 'a bigger GPU' });
    const refused = async (params: Record<string, unknown>) => (await errorOf(owner.call('owner', 'resolve_fund_request', { fund_request_id: req.fund_request_id, ...params }))).errorCode;
    expect(await refused({ decision: 'fulfilled', reason: 'thanks' })).toBe('VALIDATION_ERROR');
    expect(await refused({ decision: 'declined', reason: '   ' })).toBe('VALIDATION_ERROR');
    expect(await refused({ decision: 'declined', reason: 'x'.repeat(201) })).toBe('VALIDATION_ERROR');
    expect(await refused({ decision: 'declined', reason: 'two\nlines' })).toBe('VALIDATION_ERROR');
    expect((await asker.api.call<any>('bot', 'list_fund_requests', {})).items[0].status).toBe('open');

    const declined = await owner.call<any>('owner', 'resolve_fund_request', { fund_request_id: req.fund_request_id, decision: 'declined', reason: '  Use the credits you have first  ' });
    expect(declined).toMatchObject({ status: 'declined', decline_reason: 'Use the credits you have first' });
    // Kept with the request: the agent's list and the owner's list show it.
    expect((await asker.api.call<any>('bot', 'list_fund_requests', {})).items[0]).toMatchObject({ status: 'declined', decline_reason: 'Use the credits you have first' });
    expect((await owner.call<any>('owner', 'fund_requests', { wallet_id: asker.walletId })).items[0]).toMatchObject({ status: 'declined', decline_reason: 'Use the credits you have first' });
    const [event] = (await asker.api.call<any>('bot', 'events', { types: ['fund_request.declined'] })).items;
    expect(event.data).toEqual({ fund_request_id: req.fund_request_id, amount: 40, reason: 'Use the credits you have first', by: 'owner' });
    const [entry] = (await owner.call<any>('owner', 'audit_log', { wallet_id: asker.walletId })).items;
    expect(entry).toMatchObject({ kind: 'fund_request.declined', actor: expect.stringMatching(/^owner:\S+ via api$/), data: { fund_request_id: req.fund_request_id, amount: 40, reason: 'Use the credits you have first', requested_for: 'a bigger GPU' } });

    const b = await signIn('researcher@example.com');
    const page = await b.request(`/dashboard/wallets/${asker.walletId}`);
    expect(page.text).toContain("The owner (researcher@example.com) declined the agent&#39;s request for 40 USDC (a bigger GPU) through the owner API: Use the credits you have first");
  });
});

describe('the dashboard sends a fund request from the simnet faucet', () => {
  test('on simnet the open request\'s row offers the faucet (CSRF checked); pressed, the amount lands in the wallet and the deposit watch fulfils the request as any deposit', async () => {
    const asker = await world.agent('Faucet Asker', { claimBy: 'researcher@example.com' });
    const req = await asker.api.call<any>('bot', 'request_funds', { amount: '7.25', reason: 'search credits' });
    const b = await signIn('researcher@example.com');
    const home = await b.request('/dashboard');
    const row = home.text.slice(home.text.indexOf(`<tr id="${req.fund_request_id}">`));
    expect(row).toContain(`<form method="post" action="/dashboard/fund-requests/${req.fund_request_id}/faucet" class="inline">`);
    expect(row).toContain('>Send from the simnet faucet</button>');

    expect((await b.request(`/dashboard/fund-requests/${req.fund_request_id}/faucet`, { csrf: 'A'.repeat(43) })).status).toBe(403);
    expect(await world.balance(asker.address)).toBe(0n);
    const pressed = await b.request(`/dashboard/fund-requests/${req.fund_request_id}/faucet`, { csrf: Browser.csrf(home.text) });
    expect(pressed.status).toBe(303);
    expect(pressed.location).toBe('/dashboard?done=fund_faucet#fund-requests');
    expect(await world.balance(asker.address)).toBe(7_250_000n);
    expect((await b.request('/dashboard?done=fund_faucet')).text).toContain('Test USDC sent from the simnet faucet.');

    // Fulfilled by the deposit watch, not by the button: the deposit is recorded and covers it.
    expect((await asker.api.call<any>('bot', 'list_fund_requests', {})).items[0].status).toBe('open');
    expect(await scanDeposits(world.services)).toBeGreaterThanOrEqual(1);
    const deposit = (await asker.api.call<any>('bot', 'transactions', { type: 'deposit' })).items[0];
    expect(deposit).toMatchObject({ amount: 7.25, status: 'completed' });
    expect((await asker.api.call<any>('bot', 'list_fund_requests', {})).items[0]).toMatchObject({ status: 'fulfilled', resolved_by: 'deposit', transaction_id: deposit.transaction_id });
    const events = await asker.api.call<any>('bot', 'events', { types: ['fund_request.fulfilled'] });
    expect(events.items[0].data).toMatchObject({ fund_request_id: req.fund_request_id, by: 'deposit', transaction_id: deposit.transaction_id });
    expect((await b.request('/dashboard')).text).not.toContain(`<tr id="${req.fund_request_id}">`);

    // Pressed again once fulfilled: nothing more is sent.
    await b.request(`/dashboard/fund-requests/${req.fund_request_id}/faucet`, { csrf: Browser.csrf(home.text) });
    expect(await world.balance(asker.address)).toBe(7_250_000n);
  });

  test("another owner's fund request is unknown to the faucet (404, nothing sent)", async () => {
    const asker = await world.agent('Faucet Stranger', { claimBy: 'researcher@example.com' });
    const req = await asker.api.call<any>('bot', 'request_funds', { amount: '3', reason: 'x' });
    await world.agent('Other Agent', { claimBy: 'other-owner@example.com' });
    const other = await signIn('other-owner@example.com');
    const home = await other.request('/dashboard');
    expect(home.text).not.toContain(req.fund_request_id);
    expect((await other.request(`/dashboard/fund-requests/${req.fund_request_id}/faucet`, { csrf: Browser.csrf(home.text) })).status).toBe(404);
    expect(await world.balance(asker.address)).toBe(0n);
  });

  test('on any other network the row has no faucet button and the route is refused (404 page), nothing sent', async () => {
    const asker = await world.agent('Devnet Asker', { claimBy: 'researcher@example.com' });
    const req = await asker.api.call<any>('bot', 'request_funds', { amount: '5', reason: 'x' });
    const b = await signIn('researcher@example.com');
    const solana = world.services.config.solana as { network: string };
    const network = solana.network;
    solana.network = 'devnet';
    try {
      const home = await b.request('/dashboard');
      expect(home.text).toContain(`<tr id="${req.fund_request_id}">`);
      expect(home.text).not.toContain('/faucet"');
      expect(home.text).not.toContain('Send from the simnet faucet');
      const res = await b.request(`/dashboard/fund-requests/${req.fund_request_id}/faucet`, { csrf: Browser.csrf(home.text) });
      expect(res.status).toBe(404);
      expect(res.text).toContain('No faucet here');
    } finally {
      solana.network = network;
    }
    expect(await world.balance(asker.address)).toBe(0n);
    expect((await asker.api.call<any>('bot', 'list_fund_requests', {})).items[0].status).toBe('open');
  });
});
