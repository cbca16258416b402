/**
 * Paylinks through the real app over an in-memory ledger, with a scripted chain and a fake clock:
 * payee preparation on chain, the checkout page (escaping, CSP nonce, states), expiry by the
 * clock, and the paylink job judging transactions in the shape getTokenTransfersOf returns.
 */
import { beforeEach, describe, expect, test } from 'bun:test';
import { getAddressDecoder, type Address } from '@solana/kit';
import { createApp } from '../../src/api/app.ts';
import { decodeMessage } from '../../src/solana/decode.ts';
import type { AddressSignature, ChainPort, TokenTransfers } from '../../src/solana/port.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { expirePaylinks, scanPaylink } from '../../src/earning/scan.ts';
import { call, testServices } from '../helpers/services.ts';
import { addWallet, botCall, claimFor, START, type OwnerWorld, type TestWallet } from '../actions/fixtures.ts';

const randomAddress = () => getAddressDecoder().decode(crypto.getRandomValues(new Uint8Array(32)));

/** A chain where nothing exists until sent, and reference keys list the transactions the test scripts. */
class ScriptedChain {
  existing = new Set<string>();
  sent: Uint8Array[] = [];
  byAddress = new Map<string, AddressSignature[]>();
  transfers = new Map<string, TokenTransfers>();

  port(): ChainPort {
    return {
      accountExists: async (a: Address) => this.existing.has(`acct:${a}`),
      tokenAccountExists: async (o: Address) => this.existing.has(`ata:${o}`),
      getTokenBalance: async () => 1_000_000_000n,
      getLatestBlockhash: async () => ({ blockhash: '4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi', lastValidBlockHeight: 1000n }),
      getBlockHeight: async () => 10n,
      sendRawTransaction: async (wire: Uint8Array) => {
        this.sent.push(wire);
        const msg = decodeMessage(wire.subarray(1 + 64 * wire[0]!));
        for (const ix of msg.instructions) if (ix.kind === 'createAtaIdempotent') this.existing.add(`ata:${ix.owner}`);
        return 'sig';
      },
      getSignatureStatuses: async (sigs: string[]) => sigs.map(() => ({ slot: 1n, err: null, confirmationStatus: 'confirmed' })),
      getSignaturesForAddress: async (a: Address, o: { until?: string } = {}) => {
        const all = this.byAddress.get(a) ?? [];
        const stop = o.until === undefined ? -1 : all.findIndex((s) => s.signature === o.until);
        return stop === -1 ? all : all.slice(0, stop);
      },
      getTokenTransfersOf: async (s: string) => this.transfers.get(s) ?? null,
      getRecentPrioritizationFees: async () => [0n, 5_000n],
    } as unknown as ChainPort;
  }

  /** A landed transaction carrying `reference` (newest first, as the RPC lists them). */
  land(reference: string, signature: string, t: TokenTransfers): void {
    this.byAddress.set(reference, [{ signature, slot: t.slot, err: null, blockTime: t.blockTime }, ...(this.byAddress.get(reference) ?? [])]);
    this.transfers.set(signature, t);
  }
}

let chain: ScriptedChain;
let w: OwnerWorld;
let shop: TestWallet;

beforeEach(async () => {
  chain = new ScriptedChain();
  const clock = { ms: START };
  const services = testServices({ now: () => new Date(clock.ms), chain: chain.port() });
  w = { services, app: createApp(services), clock, advance: (ms) => (clock.ms += ms) };
  shop = await addWallet(services, { name: 'Night Market' });
  await claimFor(services, shop.walletId, 'market@example.com');
});

const create = async (params: Record<string, unknown>) => {
  const res = await botCall(w, shop.apiKey, 'create_payment_request', params);
  expect(res.status).toBe(200);
  return res.body.data;
};
const page = (path: string) => w.app.handle(new Request(`http://localhost${path}`));

describe('creating a paylink', () => {
  test('funds the payee account (rent-exempt) and creates its USDC account from the fee payer, once', async () => {
    await create({ description: 'Dumplings', amount: 6 });
    expect(chain.sent).toHaveLength(1);
    const wire = chain.sent[0]!;
    const msg = decodeMessage(wire.subarray(1 + 64 * wire[0]!));
    expect(msg.feePayer).toBe(w.services.feePayer.address);
    expect(msg.signers).toEqual([w.services.feePayer.address]);
    // Compute budget (price: the 75th percentile of [0, 5000]), System transfer, then the token account.
    expect(msg.instructions.map((i) => i.kind)).toEqual(['computeUnitLimit', 'computeUnitPrice', 'unknown', 'createAtaIdempotent']);
    expect(msg.instructions[1]).toEqual({ kind: 'computeUnitPrice', microLamports: 5_000n });
    expect(msg.instructions[3]).toMatchObject({ owner: shop.address, payer: w.services.feePayer.address });
    await create({ description: 'Noodles', amount: 4 });
    expect(chain.sent).toHaveLength(1);
  });
});

describe('the checkout page', () => {
  test('escapes what the agent wrote, runs its one script by nonce, and shows no QR once the paylink is closed', async () => {
    const link = await create({ description: '<script>alert(1)</script> & "quotes"', items: [{ description: '<img src=x onerror=alert(2)>', price: 1 }] });
    const res = await page(`/pay/${link.short_code.toUpperCase()}`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("default-src 'none'");
    const body = await res.text();
    expect(body).not.toContain('<script>alert(1)</script>');
    expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;');
    expect(body).not.toContain('<img src=x');
    expect([...body.matchAll(/<script nonce="([^"]+)">/g)].map((m) => m[1])).toEqual([nonce]);
    expect(body).toContain('<svg width="256" height="256" role="img"');

    await botCall(w, shop.apiKey, 'cancel_payment_request', { request_id: link.request_id });
    const closed = await (await page(`/pay/${link.short_code}`)).text();
    expect(closed).toContain('This payment request was cancelled');
    expect(closed).not.toContain('<svg');
    expect(closed).not.toContain('<script');
    expect((await page('/pay/0000000000')).status).toBe(404);
    expect((await page('/pay/not-a-code')).status).toBe(404);
  });
});

describe('expiry', () => {
  test('pay_status says expired as soon as the time passes; the job then moves it with one event', async () => {
    const link = await create({ description: 'Lantern', amount: 3, expires_in: '1m' });
    const status = () => call(w.app, `/v1/public?action=pay_status&short_code=${link.short_code}`);
    expect((await status()).body.data).toMatchObject({ status: 'open', paid: false });
    w.advance(60_001);
    expect((await status()).body.data.status).toBe('expired');
    expect(await expirePaylinks(w.services)).toBe(1);
    expect(await expirePaylinks(w.services)).toBe(0);
    const events = await botCall(w, shop.apiKey, 'events', { types: ['payment_request.expired'] });
    expect(events.body.data.items).toHaveLength(1);
    expect((await botCall(w, shop.apiKey, 'get_payment_request', { request_id: link.request_id })).body.data.status).toBe('expired');
  });
});

describe('a scan of the reference key (what an open checkout page asks for)', () => {
  test('judges each transaction carrying the reference key once, from its token balance changes: wrong mint recorded, then a good payment pays', async () => {
    const link = await create({ description: 'Tea set', amount: '20' });
    const ata = await usdcAta(shop.address as Address, w.services.config.usdcMint as Address);
    const payer = randomAddress();
    const blockTime = BigInt(Math.floor(START / 1000));
    const mint = w.services.config.usdcMint as Address;
    const otherMint = randomAddress();
    chain.land(link.reference_key, 'sigWrongMint', {
      slot: 5n,
      blockTime,
      err: null,
      deltas: [
        { owner: payer, mint: otherMint, account: randomAddress(), delta: -20_000_000n },
        { owner: shop.address as Address, mint: otherMint, account: randomAddress(), delta: 20_000_000n },
      ],
      accountKeys: [payer, link.reference_key],
      signatures: ['sigWrongMint'],
    });
    await scanPaylink(w.services, link.request_id);
    w.advance(11_000);
    await scanPaylink(w.services, link.request_id);
    let got = (await botCall(w, shop.apiKey, 'get_payment_request', { request_id: link.request_id })).body.data;
    expect(got.status).toBe('open');
    expect(got.rejected_payments).toEqual([expect.objectContaining({ signature: 'sigWrongMint', reason: 'wrong_mint', mint: otherMint, raw_amount: '20000000' })]);

    chain.land(link.reference_key, 'sigGood', {
      slot: 6n,
      blockTime,
      err: null,
      deltas: [
        { owner: payer, mint, account: randomAddress(), delta: -20_000_000n },
        { owner: shop.address as Address, mint, account: ata, delta: 20_000_000n },
      ],
      accountKeys: [payer, ata, link.reference_key],
      signatures: ['sigGood'],
    });
    w.advance(11_000);
    await scanPaylink(w.services, link.request_id);
    got = (await botCall(w, shop.apiKey, 'get_payment_request', { request_id: link.request_id })).body.data;
    expect(got).toMatchObject({ status: 'paid', signature: 'sigGood', payer, paid_via: 'solana_pay', paid_amount: 20 });
    const events = (await botCall(w, shop.apiKey, 'events', { types: ['payment_request.rejected_payment', 'payment_request.paid', 'payment.received'] })).body.data.items;
    expect(events.map((e: any) => e.type)).toEqual(['payment_request.rejected_payment', 'payment.received', 'payment_request.paid']);
    const status = await call(w.app, `/v1/public?action=pay_status&short_code=${link.short_code}`);
    expect(status.body.data).toMatchObject({ status: 'paid', paid: true, signature: 'sigGood' });
  });
});
