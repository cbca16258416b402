/**
 * The human checkout end to end without a wallet of one's own (issue 43): on simnet the checkout
 * page pays its paylink from a test wallet the faucet funds (CSRF-protected, refused on any other
 * network); the paid page then links the payer's receipt — a readable page (amount, parties,
 * Solana transaction, time, the JWS and how to check it) and the signed form, which verifies with
 * jose against the published key. No receipt before the paylink is paid.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let seller: Agent;
let origin: string;

beforeAll(async () => {
  world = await startWorld();
  origin = new URL(world.url).origin;
  world.services.publicUrl = () => origin;
  seller = await world.agent('Harbour Bakery', { claimBy: 'baker@example.com' });
});
afterAll(async () => {
  await world?.stop();
});

/** A page as a browser without JavaScript gets it: its text, its form's CSRF token and the cookie that goes with it. */
async function open(url: string): Promise<{ status: number; text: string; csrf: string | null; cookie: string | null }> {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, text, csrf: /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? null, cookie: res.headers.get('set-cookie')?.split(';')[0] ?? null };
}

const post = (url: string, body: Record<string, string>, cookie: string | null) =>
  fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) }, body: new URLSearchParams(body).toString() });

async function newLink(params: Record<string, unknown>): Promise<{ url: string; short_code: string; request_id: string }> {
  return await seller.api.call<any>('bot', 'create_payment_request', params);
}

describe('on simnet', () => {
  beforeAll(() => {
    world.services.simnetRpcUrl = world.simnet.url;
  });

  test('the checkout page pays its paylink from a faucet-funded test wallet; the page then shows paid and links the receipt', async () => {
    const link = await newLink({ description: 'Order #7 — two loaves', items: [{ description: 'Sourdough loaf', price: '6.5', quantity: 2 }] });
    const page = await open(link.url);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<form method="post" action="/pay/${link.short_code}/simnet-pay"`);
    expect(page.text).toContain('Pay 13.00 USDC with a simnet test wallet');
    expect(page.text).not.toContain('id="receipt-link"');
    expect(await (await fetch(`${link.url}/receipt`)).text()).toContain('No receipt yet');

    // Without the form's token the test payer refuses, and nothing is paid.
    expect((await post(`${link.url}/simnet-pay`, { csrf: 'forged' }, null)).status).toBe(403);
    const pressed = await post(`${link.url}/simnet-pay`, { csrf: page.csrf! }, page.cookie);
    expect(pressed.status).toBe(303);
    expect(pressed.headers.get('location')).toBe(`/pay/${link.short_code}?done=simnet`);

    const paid = await open(`${origin}${pressed.headers.get('location')}`);
    expect(paid.text).toContain('data-status="paid"');
    expect(paid.text).toContain('<strong>Payment received</strong>');
    expect(paid.text).toContain('Paid from a simnet test wallet');
    expect(paid.text).toContain(`<a class="button" href="/pay/${link.short_code}/receipt" id="receipt-link">Your receipt</a>`);
    expect(paid.text).not.toContain('simnet-pay');
    // The payee's records agree: paid by Solana Pay, the exact amount, from the test wallet.
    const got = await seller.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id });
    expect(got).toMatchObject({ status: 'paid', paid_via: 'solana_pay', paid_amount: 13 });
    expect(await world.balance(seller.address)).toBe(13_000_000n);
    // A second press on a paid paylink pays nothing more.
    const again = await post(`${link.url}/simnet-pay`, { csrf: page.csrf! }, page.cookie);
    expect(again.headers.get('location')).toBe(`/pay/${link.short_code}`);
    expect(await world.balance(seller.address)).toBe(13_000_000n);
  });

  test("the payer's receipt page reads the signed facts, shows the JWS and how to check it; the .jws download verifies against the published key", async () => {
    const link = await newLink({ description: 'Cinnamon buns', amount: '3.25', reference: 'order-88' });
    const page = await open(link.url);
    await post(`${link.url}/simnet-pay`, { csrf: page.csrf! }, page.cookie);
    const got = await seller.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id });
    expect(got.status).toBe('paid');

    const receipt = await open(`${link.url}/receipt`);
    expect(receipt.status).toBe(200);
    const keyUrl = `${origin}/.well-known/agent-wallet/log-key`;
    expect(receipt.text).toContain('<span class="amount" id="receipt-amount">3.25 USDC</span>');
    expect(receipt.text).toContain('Receipt · paid to Harbour Bakery');
    expect(receipt.text).toContain(`@${seller.username}`);
    expect(receipt.text).toContain(seller.address);
    expect(receipt.text).toContain(got.payer);
    expect(receipt.text).toContain(`<code class="mono" id="receipt-signature">${got.signature}</code>`);
    expect(receipt.text).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[^"]+" id="receipt-time">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time>/);
    expect(receipt.text).toContain('(reference order-88)');
    expect(receipt.text).toContain(`agent-wallet receipt verify receipt-${link.request_id}.jws --key ${keyUrl}`);
    const shown = /<pre class="jws" id="receipt-jws"[^>]*>([^<]+)<\/pre>/.exec(receipt.text)![1]!;

    const file = await fetch(`${link.url}/receipt.jws`);
    expect(file.headers.get('content-type')).toBe('application/jose');
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="receipt-${link.request_id}.jws"`);
    const jws = (await file.text()).trim();
    const jwks = createLocalJWKSet((await (await fetch(keyUrl)).json()) as JSONWebKeySet);
    for (const signed of [jws, shown]) {
      const claims = JSON.parse(new TextDecoder().decode((await compactVerify(signed, jwks)).payload));
      expect(claims).toMatchObject({
        sub: link.request_id,
        kind: 'paylink_payment',
        status: 'completed',
        amount: '3.25',
        amount_micro: '3250000',
        currency: 'USDC',
        reference: 'order-88',
        memo: 'Cinnamon buns',
        from: { address: got.payer },
        to: { username: seller.username, address: seller.address },
        signature: got.signature,
        network: 'simnet',
      });
      // The payer's copy names parties, not our internal ids.
      expect(claims.to.wallet_id).toBeUndefined();
      expect(typeof claims.slot).toBe('number');
    }
  });

  test('an open-amount paylink is paid the amount the payer enters; a missing amount is refused', async () => {
    const link = await newLink({ description: 'Tip jar' });
    const page = await open(link.url);
    expect(page.text).toContain('<label for="simnet-amount">Amount to pay (USDC)</label>');
    const refused = await post(`${link.url}/simnet-pay`, { csrf: page.csrf!, amount: '' }, page.cookie);
    expect(refused.status).toBe(400);
    const before = await world.balance(seller.address);
    const pressed = await post(`${link.url}/simnet-pay`, { csrf: page.csrf!, amount: '1.5' }, page.cookie);
    expect(pressed.status).toBe(303);
    expect(await seller.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id })).toMatchObject({ status: 'paid', paid_amount: 1.5 });
    expect((await world.balance(seller.address)) - before).toBe(1_500_000n);
  });
});

describe('off simnet', () => {
  test('without the embedded simnet the page offers no test payer and the form is refused', async () => {
    world.services.simnetRpcUrl = undefined;
    const link = await newLink({ description: 'Real bread', amount: '2' });
    const page = await open(link.url);
    expect(page.text).not.toContain('simnet-pay');
    const refused = await post(`${link.url}/simnet-pay`, { csrf: 'x' }, null);
    expect(refused.status).toBe(404);
    expect(await refused.text()).toContain('exists only on simnet');
    expect((await seller.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id })).status).toBe('open');
  });

  test('on another network (devnet) even with a simnet RPC known, the test payer is refused', async () => {
    world.services.simnetRpcUrl = world.simnet.url;
    const solana = world.services.config.solana as { network: string };
    const network = solana.network;
    const link = await newLink({ description: 'Real bread', amount: '2' });
    const page = await open(link.url);
    expect(page.text).toContain('id="simnet-pay"'); // on simnet it is offered
    solana.network = 'devnet';
    try {
      expect((await open(link.url)).text).not.toContain('simnet-pay');
      const refused = await post(`${link.url}/simnet-pay`, { csrf: page.csrf! }, page.cookie);
      expect(refused.status).toBe(404);
    } finally {
      solana.network = network;
    }
    expect((await seller.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id })).status).toBe('open');
  });
});
