/**
 * What the operator's fee payer pays for the sales the facilitator settles (issue 40, item 1): a
 * payment may ask for no more compute than an exact transfer needs, so one settle costs the fee
 * payer a bounded amount whatever the buyer's transaction asks; the SOL a seller's sales cost is
 * counted against that seller (a wallet seller too) up to a daily allowance, and all sellers'
 * together up to the operator's (merchants register without a key); an unclaimed wallet sells nothing. Every figure is the fee payer's SOL balance read from the chain.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address, type KeyPairSigner } from '@solana/kit';
import { exactPayment } from '../helpers/exact-payment.ts';
import { startWorld, type World } from '../helpers/world.ts';

/** A seller's sales may cost the fee payer this much a day here: two normal sales (10,001 each), not three. */
const ALLOWANCE = 30_000n;
/** All sellers' together: four normal sales, not five (the tests before the last make four). */
const TOTAL = 50_000n;

let world: World;
let attacker: KeyPairSigner;
let merchantKey: string;
let facilitatorUrl: string;
let feePayer: Address;

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_FEES_SALE_NETWORK_LAMPORTS_PER_DAY: ALLOWANCE.toString(), AGENT_WALLET_FEES_SALE_NETWORK_LAMPORTS_PER_DAY_TOTAL: TOTAL.toString() } });
  facilitatorUrl = `${new URL(world.url).origin}/x402/facilitator`;
  feePayer = world.services.feePayer.address;
  // The attacker registers a merchant (no key needed) whose payout address is its own: a self-sale.
  attacker = await generateKeyPairSigner();
  await world.fund(attacker.address, 1_000_000n);
  const reg = await fetch(`${world.url}/merchant`, { method: 'POST', body: JSON.stringify({ action: 'register', name: 'Self Seller', username: 'self-seller', payout_address: attacker.address }) });
  merchantKey = ((await reg.json()) as any).data.api_key;
});
afterAll(async () => {
  await world?.stop();
});

const feePayerLamports = () => world.services.chain.getSolBalance(feePayer);

async function facilitate(path: 'verify' | 'settle', body: unknown, key: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${facilitatorUrl}/${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

/** A payment of `amount` from `payer` to `payTo` under the compute budget given, signed by the payer. */
const payment = (p: { payer: KeyPairSigner; payTo: Address; amount: bigint; units: number; microLamports: bigint; memo: string }) => exactPayment(world, p);

test("a 1-micro-USDC self-sale asking 1,400,000 CU at 5 lamports/CU is refused and costs the fee payer nothing; a normal sale costs it two signatures' fees and 1 lamport", async () => {
  const attack = () => payment({ payer: attacker, payTo: attacker.address, amount: 1n, units: 1_400_000, microLamports: 5_000_000n, memo: `attack ${crypto.randomUUID()}` });
  const before = await feePayerLamports();
  const verified = await facilitate('verify', await attack(), merchantKey);
  const settled = await facilitate('settle', await attack(), merchantKey);
  const attackCost = before - (await feePayerLamports());

  const normalBefore = await feePayerLamports();
  const normal = await facilitate('settle', await payment({ payer: attacker, payTo: attacker.address, amount: 1n, units: 20_000, microLamports: 1n, memo: 'normal' }), merchantKey);
  const normalCost = normalBefore - (await feePayerLamports());
  console.log(`[issue 40 item 1] fee payer lamports per settle: attack (1,400,000 CU x 5 lamports/CU, refused) ${attackCost}; normal sale (20,000 CU x 1 micro-lamport) ${normalCost}`);

  expect(verified.json).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high' });
  expect(settled.json).toMatchObject({ success: false, errorReason: 'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high' });
  expect(attackCost).toBe(0n);
  expect(normal.json).toMatchObject({ success: true });
  expect(normalCost).toBe(10_001n);
  // The most a settle may cost: two signatures and 20,000 CU at the scheme's 5 lamports/CU.
  const dearest = await facilitate('verify', await payment({ payer: attacker, payTo: attacker.address, amount: 1n, units: 20_001, microLamports: 5_000_000n, memo: 'one unit more' }), merchantKey);
  expect(dearest.json).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high' });
});

test("an unclaimed wallet's bot key sells nothing: verify and settle answer WALLET_NOT_CLAIMED and the fee payer pays nothing", async () => {
  const stray = await world.agent('Stray');
  await world.fund(stray.address, 1_000_000n);
  const before = await feePayerLamports();
  for (const path of ['verify', 'settle'] as const) {
    const r = await facilitate(path, await payment({ payer: attacker, payTo: stray.address, amount: 1n, units: 20_000, microLamports: 1n, memo: `to stray ${path}` }), stray.profile.api_key);
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('WALLET_NOT_CLAIMED');
    expect(r.json.error.how_to_fix).toContain('claim');
  }
  expect(await feePayerLamports()).toBe(before);
  expect(await world.services.db.get('SELECT count(*) AS n FROM x402_sales WHERE wallet_id = ?', stray.walletId)).toEqual({ n: 0n });
});

test("the SOL a seller's sales cost is counted against it, a wallet seller too: past its daily allowance its next sale is refused and the fee payer pays nothing more", async () => {
  const shop = await world.agent('Shop', { claimBy: 'shop@example.com' });
  await world.fund(shop.address, 0n);
  const sale = (memo: string) => payment({ payer: attacker, payTo: shop.address, amount: 1n, units: 20_000, microLamports: 1n, memo });
  for (const memo of ['first', 'second']) expect((await facilitate('settle', await sale(memo), shop.profile.api_key)).json).toMatchObject({ success: true });
  const before = await feePayerLamports();
  const verdict = await facilitate('verify', await sale('third'), shop.profile.api_key);
  expect(verdict.json).toMatchObject({ isValid: false, invalidReason: 'seller_network_allowance_exhausted' });
  expect(verdict.json.invalidMessage).toContain('20002');
  expect((await facilitate('settle', await sale('third'), shop.profile.api_key)).json).toMatchObject({ success: false, errorReason: 'seller_network_allowance_exhausted' });
  expect(await feePayerLamports()).toBe(before);
  // The merchant's allowance is its own: the attacker's one normal sale so far leaves it room.
  expect((await facilitate('verify', await payment({ payer: attacker, payTo: attacker.address, amount: 1n, units: 20_000, microLamports: 1n, memo: 'merchant again' }), merchantKey)).json).toMatchObject({ isValid: true });
});

test("registering more merchants buys no more SOL: all sellers' sales together stop at the operator's daily allowance, a fresh merchant's first sale included, and the fee payer pays nothing more", async () => {
  const register = async (username: string) => {
    const payout = await generateKeyPairSigner();
    await world.fund(payout.address, 0n);
    const reg = await fetch(`${world.url}/merchant`, { method: 'POST', body: JSON.stringify({ action: 'register', name: username, username, payout_address: payout.address }) });
    return { key: ((await reg.json()) as any).data.api_key as string, payTo: payout.address };
  };
  const sale = (payTo: Address, memo: string) => payment({ payer: attacker, payTo, amount: 1n, units: 20_000, microLamports: 1n, memo });
  // Three normal sales so far (the attacker's one, the shop's two): a fourth fits, a fifth does not.
  const first = await register('sybil-one');
  expect((await facilitate('settle', await sale(first.payTo, 'sybil one'), first.key)).json).toMatchObject({ success: true });
  const second = await register('sybil-two');
  const before = await feePayerLamports();
  const verdict = await facilitate('verify', await sale(second.payTo, 'sybil two'), second.key);
  expect(verdict.json).toMatchObject({ isValid: false, invalidReason: 'network_allowance_exhausted' });
  expect(verdict.json.invalidMessage).toContain('fees.sale_network_lamports_per_day_total');
  expect((await facilitate('settle', await sale(second.payTo, 'sybil two'), second.key)).json).toMatchObject({ success: false, errorReason: 'network_allowance_exhausted' });
  expect(await feePayerLamports()).toBe(before);
  expect(await world.services.db.get("SELECT count(*) AS n FROM x402_sales WHERE pay_to = ?", second.payTo)).toEqual({ n: 0n });
});
