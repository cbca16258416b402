/**
 * The operator's fee on a merchant's x402 sales (issue 29: "fees to the treasury"). The exact scheme
 * lets the buyer's transaction carry one transfer, to the merchant, so each sale records the fee the
 * merchant owes; the merchant pays it to the treasury with Solana Pay from its own wallet against an
 * invoice, found on chain by the invoice's reference key; past the credit limit the facilitator
 * refuses the merchant's sales, and nothing moves, until it pays. Every figure is read from the chain.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSigner, type Address, type KeyPairSigner } from '@solana/kit';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { wrapFetchWithPayment } from '@x402/fetch';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { ExactSvmScheme as ClientExactSvm } from '@x402/svm/exact/client';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import { Hono } from 'hono';
import { MerchantProfileStore } from '../../src/client/merchant-profile.ts';
import { insertSale } from '../../src/db/x402-sales.ts';
import { scanInvoices } from '../../src/earning/sale-fees.ts';
import { treasuryOf } from '../../src/payments/message.ts';
import { deliverDueWebhooks } from '../../src/webhooks/deliver.ts';
import { resolveSales } from '../../src/x402/facilitator.ts';
import { SolanaPayWallet } from '../earning/solana-pay-client.ts';
import { runCli } from '../helpers/daemon.ts';
import { hookReceiver, until } from '../helpers/poll.ts';
import { startWorld, type World } from '../helpers/world.ts';
import { DEVNET_CAIP2 } from '../x402/sellers.ts';

let world: World;
let shop: SolanaPayWallet;
let merchant: { api_key: string; merchant_id: string };
let buyer: KeyPairSigner;
let seller: ReturnType<typeof Bun.serve>;
let home: string;
let receiver: ReturnType<typeof hookReceiver>;

// 1 % of a $0.01 sale is 100 micro-USDC; a credit of 250 lets two sales owe before the third is refused.
const PRICE = 10_000n;
const FEE = 100n;

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_FEES_SALE_BPS: '100', AGENT_WALLET_FEES_SALE_CREDIT: '0.00025', AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  receiver = hookReceiver();
  // The merchant's own wallet: its payout address, and what pays its fees.
  shop = await SolanaPayWallet.create(world.simnet.url);
  await world.simnet.faucet(shop.address, 1_000_000n, 1_000_000_000n);
  buyer = await generateKeyPairSigner();
  await world.fund(buyer.address, 1_000_000n);
  const reg = await fetch(`${world.url}/merchant`, { method: 'POST', body: JSON.stringify({ action: 'register', name: 'Weather API', username: 'weather', payout_address: shop.address, webhook_url: receiver.url }) });
  merchant = ((await reg.json()) as any).data;
  home = mkdtempSync(join(tmpdir(), 'aw-sale-fees-'));
  new MerchantProfileStore(home).save('default', {
    version: 1,
    server_url: world.url,
    merchant_id: merchant.merchant_id,
    username: 'weather',
    name: 'Weather API',
    payout_address: shop.address,
    api_key: merchant.api_key,
    created_at: new Date().toISOString(),
  });
  const auth = { Authorization: `Bearer ${merchant.api_key}` };
  const facilitator = new HTTPFacilitatorClient({ url: `${new URL(world.url).origin}/x402/facilitator`, createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }) });
  const app = new Hono();
  app.use(
    paymentMiddleware(
      { 'GET /forecast': { accepts: { scheme: 'exact', price: '$0.01', network: DEVNET_CAIP2, payTo: shop.address }, description: 'a forecast' } },
      new x402ResourceServer(facilitator).register(DEVNET_CAIP2, new ExactSvmScheme({ rpcUrl: world.simnet.url })),
    ),
  );
  app.get('/forecast', (c) => c.json({ forecast: 'sun' }));
  seller = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch, idleTimeout: 60 });
});
afterAll(async () => {
  await seller?.stop(true);
  await receiver?.stop();
  await world?.stop();
});

const merchantCall = async (action: string, params: Record<string, unknown> = {}) =>
  ((await (await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${merchant.api_key}` }, body: JSON.stringify({ action, ...params }) })).json()) as any).data;
const buy = () => wrapFetchWithPayment(fetch, new x402Client().register(DEVNET_CAIP2, new ClientExactSvm(buyer, { rpcUrl: world.simnet.url })))(`http://127.0.0.1:${seller.port}/forecast`);
const treasury = () => world.balance(treasuryOf(world.services));


test('each sale pays the merchant its full price on chain and owes the fee; past the credit limit the next sale is refused and nothing moves', async () => {
  const [payout0, treasury0, buyer0] = await Promise.all([world.balance(shop.address), treasury(), world.balance(buyer.address)]);
  for (let i = 0; i < 2; i++) expect((await buy()).status).toBe(200);
  expect((await world.balance(shop.address)) - payout0).toBe(2n * PRICE);
  expect((await treasury()) - treasury0).toBe(0n);
  const history = await merchantCall('history');
  expect(history.items.map((h: any) => [h.via, h.amount, h.sale_fee])).toEqual([
    ['x402', 0.01, 0.0001],
    ['x402', 0.01, 0.0001],
  ]);
  const fees = await merchantCall('sale_fees');
  expect(fees).toMatchObject({ fee_bps: 100, credit_limit: 0.00025, accrued: 0.0002, paid: 0, owed: 0.0002, sales_refused: false, invoice: null });
  expect((await merchantCall('balance')).sale_fees_owed).toBe(0.0002);
  // 0.0002 is past 80 % of the credit: the merchant is told, once.
  const due = (await merchantCall('events', { types: ['sale_fees.due'] })).items;
  expect(due).toHaveLength(1);
  expect(due[0].data).toMatchObject({ owed: 0.0002, credit_limit: 0.00025 });
  // …and on its webhook, beside each sale (the delivery job's pass; the world runs no jobs).
  await deliverDueWebhooks(world.services);
  const delivered = await until('three webhooks', () => {
    const types = receiver.hooks.filter((h) => h.type !== 'webhook.test').map((h) => h.type);
    return types.length >= 3 && types;
  });
  expect(delivered.sort()).toEqual(['sale_fees.due', 'x402.sale', 'x402.sale']);

  // A third sale would owe 0.0003 > 0.00025: the middleware's verify is refused under our reason.
  const refused = await buy();
  expect(refused.status).toBe(402);
  expect(await world.balance(shop.address)).toBe(payout0 + 2n * PRICE);
  expect(await world.balance(buyer.address)).toBe(buyer0 - 2n * PRICE);
  const direct = await fetch(`${new URL(world.url).origin}/x402/facilitator/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${merchant.api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ x402Version: 2, paymentPayload: { x402Version: 2, payload: {} }, paymentRequirements: { scheme: 'exact', network: DEVNET_CAIP2, asset: world.simnet.mint, amount: '10000', payTo: shop.address } }),
  });
  expect(await direct.json()).toMatchObject({ isValid: false, invalidReason: 'merchant_fee_credit_exhausted' });
  expect(await world.services.db.get('SELECT count(*) AS n FROM x402_sales')).toEqual({ n: 2n });
});

test('the merchant pays its invoice with Solana Pay from its own wallet: pretended payments credit nothing, the treasury gains exactly what was owed, the debt is cleared once, and sales settle again', async () => {
  const treasury0 = await treasury();
  // The CLI opens the invoice and prints how to pay it.
  const cli = await runCli(['merchant', 'fees', '--invoice', '--home', home]);
  expect(cli.code).toBe(0);
  expect(cli.stdout).toContain('Owed 0.0002 USDC');
  const url = /Pay it from any Solana wallet: (solana:\S+)/.exec(cli.stdout)?.[1];
  expect(url).toBeDefined();
  const invoice = (await merchantCall('sale_fees')).invoice;
  expect(invoice).toMatchObject({ status: 'open', amount: 0.0002, received: 0, treasury: treasuryOf(world.services), solana_pay_url: url });
  expect(url).toContain(`reference=${invoice.reference_key}`);

  // A merchant that only pretends to pay, under the invoice's reference: another token to the
  // treasury, or USDC to another account. Neither credits anything.
  const fake = await shop.createToken(1_000_000n);
  await shop.pay({ recipient: treasuryOf(world.services), mint: fake, amount: 200n, references: [invoice.reference_key], createRecipientAccount: true });
  await shop.pay({ recipient: buyer.address, mint: world.simnet.mint, amount: 200n, references: [invoice.reference_key] });
  await scanInvoices(world.services);
  expect(await merchantCall('pay_sale_fees')).toMatchObject({ paid: 0, owed: 0.0002, invoice: { status: 'open', received: 0, payments: [] } });

  const signature = await shop.payUrl(url!);
  expect((await treasury()) - treasury0).toBe(2n * FEE);
  // Found by the merchant's look (and by the job's pass, which finds it recorded already).
  const paid = await until('the invoice paid', async () => {
    const f = await merchantCall('sale_fees');
    return f.invoice.status === 'paid' && f;
  }, 10_000, 100);
  expect(paid).toMatchObject({ accrued: 0.0002, paid: 0.0002, owed: 0, sales_refused: false, next_step: null });
  expect(paid.invoice).toMatchObject({ status: 'paid', received: 0.0002, solana_pay_url: null, payments: [{ signature, amount: 0.0002, payer: shop.address }] });
  await scanInvoices(world.services);
  expect(await world.services.db.get('SELECT count(*) AS n FROM sale_fee_payments')).toEqual({ n: 1n });
  expect((await merchantCall('events', { types: ['sale_fees.paid'] })).items.map((e: any) => e.data.signature)).toEqual([signature]);

  const payout0 = await world.balance(shop.address);
  expect((await buy()).status).toBe(200);
  expect((await world.balance(shop.address)) - payout0).toBe(PRICE);
  expect((await merchantCall('sale_fees')).owed).toBe(0.0001);
  // Nothing owed beyond that sale: a second invoice asks for exactly it.
  expect((await merchantCall('pay_sale_fees')).invoice).toMatchObject({ status: 'open', amount: 0.0001 });
});

test('a sale owes its fee once it completes: one whose transaction never landed owed nothing while settling and nothing after it failed', async () => {
  const owed = () => merchantCall('sale_fees').then((f) => BigInt(Math.round(f.owed * 1e6)));
  const before = await owed();
  const now = world.services.now().getTime();
  // The state a settle leaves when its send was dropped: the sale recorded as settling, nothing owed yet.
  await world.services.db
    .transaction(async () => {
      await insertSale(world.services.db, {
        sale_id: 'sale_dropped',
        merchant_id: merchant.merchant_id,
        wallet_id: null,
        pay_to: shop.address,
        payer: buyer.address,
        amount: PRICE,
        fee: FEE,
        network: DEVNET_CAIP2,
        resource: null,
        payment_id: null,
        message_hash: crypto.getRandomValues(new Uint8Array(32)),
        signature: '5'.repeat(88),
        signed_tx: new Uint8Array(1),
        last_valid_block_height: null,
        now,
      });
    });
  expect(await owed()).toBe(before);
  // The merchant's invoice asks only for what completed sales owe.
  expect((await merchantCall('pay_sale_fees')).invoice).toMatchObject({ status: 'open', amount: 0.0001, due: 0.0001 });
  world.clock.offsetMs += 10 * 60_000;
  try {
    expect(await resolveSales(world.services)).toBe(1);
  } finally {
    world.clock.offsetMs -= 10 * 60_000;
  }
  expect(await world.services.db.get("SELECT status FROM x402_sales WHERE sale_id = 'sale_dropped'")).toEqual({ status: 'failed' });
  expect(await owed()).toBe(before);
  const invoice = (await merchantCall('sale_fees')).invoice;
  expect(invoice.solana_pay_url).toContain('amount=0.0001&');
  const treasury0 = await treasury();
  await shop.payUrl(invoice.solana_pay_url);
  expect((await treasury()) - treasury0).toBe(FEE);
  await scanInvoices(world.services);
  expect(await merchantCall('sale_fees')).toMatchObject({ owed: 0, invoice: { status: 'paid', received: 0.0001, due: 0, solana_pay_url: null } });
});

test('a merchant that owes nothing gets a clear refusal for an invoice, and the numbers come back as the wire spells them', async () => {
  const res = await fetch(`${world.url}/merchant`, { method: 'POST', body: JSON.stringify({ action: 'register', name: 'Idle', username: 'idle-shop', payout_address: (await generateKeyPairSigner()).address }) });
  const idle = ((await res.json()) as any).data;
  const answer = (await (await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${idle.api_key}` }, body: JSON.stringify({ action: 'pay_sale_fees' }) })).json()) as any;
  expect(answer.error).toMatchObject({ code: 'INVALID_STATUS', message: 'No sale fees are owed.' });
  expect(answer.error.how_to_fix).toContain('agent-wallet merchant fees');
  const none = (await (await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${idle.api_key}` }, body: JSON.stringify({ action: 'sale_fees' }) })).json()) as any;
  expect(none.data).toMatchObject({ accrued: 0, paid: 0, owed: 0, sales_refused: false, invoice: null, next_step: null });
  expect(await world.services.db.get('SELECT count(*) AS n FROM sale_fee_invoices WHERE merchant_id = ?', idle.merchant_id)).toEqual({ n: 0n });
});

test("a merchant's look while the chain does not answer is answered from the ledger within seconds", async () => {
  // Past the look's rate bound, so this look scans the (recently paid, still watched) invoice.
  world.clock.offsetMs += 2_000;
  world.simnet.setFault('error');
  try {
    const started = performance.now();
    const res = await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${merchant.api_key}` }, body: JSON.stringify({ action: 'sale_fees' }) });
    expect(res.status).toBe(200);
    // The look's own bound (2 s), not the RPC client's retries (about half a minute).
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(((await res.json()) as any).data).toMatchObject({ owed: 0, invoice: { status: 'paid' } });
  } finally {
    world.simnet.setFault(null);
    world.clock.offsetMs -= 2_000;
  }
});

test("sales still settling count against the credit: with two settles in flight owing 0.0002, a third sale (0.0001 more, past 0.00025) is refused and nothing moves", async () => {
  expect((await merchantCall('sale_fees')).owed).toBe(0);
  const now = world.services.now().getTime();
  // Two settles sent and not confirmed yet, as concurrent settles leave each other: nothing accrued, both owe once they complete.
  await world.services.db
    .transaction(async () => {
      for (const n of [1, 2]) {
        await insertSale(world.services.db, {
          sale_id: `sale_in_flight_${n}`,
          merchant_id: merchant.merchant_id,
          wallet_id: null,
          pay_to: shop.address,
          payer: buyer.address,
          amount: PRICE,
          fee: FEE,
          network: DEVNET_CAIP2,
          resource: null,
          payment_id: null,
          message_hash: crypto.getRandomValues(new Uint8Array(32)),
          signature: `${n}`.repeat(88),
          signed_tx: new Uint8Array(1),
          last_valid_block_height: null,
          now,
        });
      }
    });
  try {
    const paid0 = await world.balance(shop.address);
    const res = await buy();
    expect(res.status).toBe(402);
    expect(await world.balance(shop.address)).toBe(paid0);
    expect(await world.services.db.get("SELECT count(*) AS n FROM x402_sales WHERE merchant_id = ? AND sale_id NOT LIKE 'sale_in_flight_%' AND created_at >= ?", merchant.merchant_id, now)).toEqual({ n: 0n });
  } finally {
    world.clock.offsetMs += 10 * 60_000;
    try {
      await resolveSales(world.services);
    } finally {
      world.clock.offsetMs -= 10 * 60_000;
    }
  }
});
