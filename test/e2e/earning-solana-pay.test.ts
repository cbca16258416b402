/**
 * Human payments of paylinks on simnet, made by a plain @solana/kit wallet from the paylink's
 * Solana Pay URL: a full payment marks it paid; too little, a token that is not USDC, a payment
 * after expiry or a second payment do not, and each case is recorded for the payee. The money that
 * reached the payee is in its ledger exactly once, whichever of the reference-key scan and the
 * deposit watch sees it first.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { expirePaylinks, scanPaylink } from '../../src/earning/scan.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { SolanaPayWallet } from '../earning/solana-pay-client.ts';

let world: World;
let shop: Agent;
let human: SolanaPayWallet;

beforeAll(async () => {
  world = await startWorld();
  shop = await world.agent('Flower Shop', { claimBy: 'florist@example.com' });
  human = await SolanaPayWallet.create(world.simnet.url);
  await world.simnet.faucet(human.address, 500_000_000n, 1_000_000_000n);
});
afterAll(async () => {
  await world.stop();
});

const create = (params: Record<string, unknown>) => shop.api.call<any>('bot', 'create_payment_request', params);
const get = (requestId: string) => shop.api.call<any>('bot', 'get_payment_request', { request_id: requestId });
const scan = (link: { request_id: string }) => scanPaylink(world.services, link.request_id);

async function ledgerRowsOf(signature: string) {
  const rows = await shop.api.call<any>('bot', 'transactions', { type: 'in', limit: 100 });
  return rows.items.filter((t: any) => t.signature === signature);
}

describe('Solana Pay payments of a paylink', () => {
  test('a payment of the full amount with the reference key is found by the deposit watch and marks the paylink paid, counted once', async () => {
    const link = await create({ description: 'Bouquet', amount: '25' });
    const signature = await human.payUrl(link.solana_pay_url);
    // The deposit watch sees the payee's account move and has the paylink judge the transfer.
    await scanDeposits(world.services);
    const paid = await get(link.request_id);
    expect(paid).toMatchObject({ status: 'paid', payer: human.address, signature, paid_via: 'solana_pay', paid_amount: 25 });
    await scanDeposits(world.services);
    await scan(link);
    const rows = await ledgerRowsOf(signature);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: 'payment', direction: 'in', amount: 25, from: human.address, payment_request_id: link.request_id, transaction_id: paid.transaction_id });
    const events = await shop.api.call<any>('bot', 'events', { types: ['payment_request.paid', 'payment.received'], limit: 50 });
    expect(events.items.filter((e: any) => e.data.signature === signature).map((e: any) => e.type).sort()).toEqual(['payment.received', 'payment_request.paid']);

    // A second payment of the same paylink does not pay it again: recorded, and its money is in the ledger once.
    await Bun.sleep(450); // a new blockhash: the same payment within one blockhash is the same transaction
    const twice = await human.payUrl(link.solana_pay_url);
    await scan(link);
    const after = await get(link.request_id);
    expect(after.signature).toBe(signature);
    expect(after.rejected_payments).toEqual([expect.objectContaining({ signature: twice, reason: 'already_paid', amount: 25, payer: human.address })]);
    await scanDeposits(world.services);
    expect(await ledgerRowsOf(twice)).toHaveLength(1);
  });

  test('too little is not paid: the payment is recorded as underpaid with an event, and the paylink stays open', async () => {
    const link = await create({ description: 'Roses', amount: '10' });
    const signature = await human.payUrl(link.solana_pay_url, { amount: 9_990_000n });
    await scan(link);
    const seen = await get(link.request_id);
    expect(seen.status).toBe('open');
    expect(seen.rejected_payments).toEqual([expect.objectContaining({ signature, reason: 'underpaid', amount: 9.99, mint: world.simnet.mint, payer: human.address })]);
    const events = await shop.api.call<any>('bot', 'events', { types: ['payment_request.rejected_payment'] });
    expect(events.items.find((e: any) => e.data.signature === signature).data).toMatchObject({ request_id: link.request_id, reason: 'underpaid', amount: 9.99 });
    // The 9.99 USDC did arrive: it is in the ledger once, as a payment of this paylink.
    await scanDeposits(world.services);
    expect(await ledgerRowsOf(signature)).toEqual([expect.objectContaining({ amount: 9.99, payment_request_id: link.request_id })]);
    // The buyer tops up with a full payment: that one pays it.
    const full = await human.payUrl(link.solana_pay_url);
    await scan(link);
    expect(await get(link.request_id)).toMatchObject({ status: 'paid', signature: full });
  });

  test('a token other than USDC is not paid, and recorded as wrong_mint', async () => {
    const link = await create({ description: 'Tulips', amount: '5' });
    const fakeUsd = await human.createToken(1_000_000_000n);
    // The same layout as the URL asks for, but of another mint (into the payee's account of that mint).
    const signature = await human.pay({ recipient: shop.address, mint: fakeUsd, amount: 5_000_000n, references: [link.reference_key as Address], createRecipientAccount: true });
    await scan(link);
    const seen = await get(link.request_id);
    expect(seen.status).toBe('open');
    expect(seen.rejected_payments).toEqual([expect.objectContaining({ signature, reason: 'wrong_mint', mint: fakeUsd, raw_amount: '5000000', amount: null })]);
    await scanDeposits(world.services);
    expect(await ledgerRowsOf(signature)).toHaveLength(0);
  });

  test('USDC sent to the payee without the reference key does not pay the paylink; it is an ordinary deposit', async () => {
    const link = await create({ description: 'Lilies', amount: '3' });
    const signature = await human.pay({ recipient: shop.address, mint: world.simnet.mint, amount: 3_000_000n, references: [] });
    await scan(link);
    expect((await get(link.request_id)).status).toBe('open');
    await scanDeposits(world.services);
    expect(await ledgerRowsOf(signature)).toEqual([expect.objectContaining({ type: 'deposit', amount: 3, payment_request_id: null })]);
  });

  test('a payment after expiry is not paid: the paylink is expired and the late payment recorded', async () => {
    const link = await create({ description: 'Orchid', amount: '7', expires_in: 1 });
    await Bun.sleep(2100);
    expect(await expirePaylinks(world.services)).toBeGreaterThanOrEqual(1);
    const public_ = await fetch(`${world.url}/public?action=pay_status&short_code=${link.short_code}`).then((r) => r.json() as Promise<any>);
    expect(public_.data).toMatchObject({ status: 'expired', paid: false });
    const signature = await human.payUrl(link.solana_pay_url);
    await scan(link);
    const seen = await get(link.request_id);
    expect(seen.status).toBe('expired');
    expect(seen.rejected_payments).toEqual([expect.objectContaining({ signature, reason: 'expired', amount: 7 })]);
    const events = await shop.api.call<any>('bot', 'events', { types: ['payment_request.expired', 'payment_request.rejected_payment'], limit: 50 });
    expect(events.items.filter((e: any) => e.data.request_id === link.request_id).map((e: any) => e.type)).toEqual(['payment_request.expired', 'payment_request.rejected_payment']);
    await scanDeposits(world.services);
    expect(await ledgerRowsOf(signature)).toHaveLength(1);
  });

  test('public pay shows the checkout data without private fields; pay_status of an unknown code is NOT_FOUND', async () => {
    const link = await create({ description: 'Gift card', amount: '15', reference: 'private-order-1', reveal_owner: true });
    const res = await fetch(`${world.url}/public?action=pay&short_code=${link.short_code.toUpperCase()}`).then((r) => r.json() as Promise<any>);
    expect(res.data).toMatchObject({ short_code: link.short_code, amount: 15, status: 'open', payee: { name: 'Flower Shop', username: shop.username, owner_email: 'florist@example.com' }, solana_pay_url: link.solana_pay_url });
    expect(JSON.stringify(res.data)).not.toContain('private-order-1');
    const hidden = await create({ description: 'No owner shown', amount: '1' });
    const res2 = await fetch(`${world.url}/public?action=pay&short_code=${hidden.short_code}`).then((r) => r.json() as Promise<any>);
    expect(res2.data.payee.owner_email).toBeUndefined();
    const missing = await fetch(`${world.url}/public?action=pay_status&short_code=zzzzzzzzzz`);
    expect(missing.status).toBe(404);
  });
});
