/**
 * MPP's Solana charge (issue 28, item 5): a 402 with `WWW-Authenticate: Payment` method solana,
 * intent charge, is paid on the x402 path — guard rails, reservation, the agent's message check,
 * FROST — with a pull-mode credential the seller co-signs, sends and verifies on chain; its
 * `Payment-Receipt` is believed only for our own transfer; the per-host budget applies.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { x402Fetch } from '../../src/client/x402.ts';
import { getTx } from '../../src/db/transactions.ts';
import { decodeMessage } from '../../src/solana/decode.ts';
import { errorOf } from '../helpers/errors.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { startMppSeller, type MppSeller } from '../x402/mpp-seller.ts';
import { sellerAddress } from '../x402/sellers.ts';

let world: World;
let payTo: Address;
let seller: MppSeller;

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  payTo = await sellerAddress(world);
  seller = await startMppSeller(world, { payTo, amount: '10000', externalId: 'order-mpp-1' });
});
afterAll(async () => {
  await seller?.stop();
  await world?.stop();
});

async function buyer(name: string, rails?: Record<string, unknown>): Promise<Agent> {
  const agent = await world.agent(name);
  const owner = await world.claim(agent.walletId, `${name.toLowerCase()}-owner@example.com`);
  await world.fund(agent.address, 5_000_000n);
  if (rails) await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails });
  return agent;
}

test('a Solana charge: paid with the seller as fee payer, verified by the seller on chain, 200 with the answer and a receipt we checked against our own transfer', async () => {
  const alice = await buyer('Mira');
  const [seller0, alice0] = [await world.balance(payTo), await world.balance(alice.address)];
  const r = await x402Fetch(alice.api, alice.profile, { url: `${seller.url}/charge` });
  expect(r.outcome).toBe('completed');
  expect(JSON.parse(r.response!.body)).toEqual({ content: 'paid through MPP' });
  expect(r.settled).toMatchObject({ protocol: 'mpp', purchase_status: 'completed', amount: 0.01, pay_to: payTo, fee_payer: seller.feePayer });
  expect(seller.state.verified).toEqual([r.settled!.signature]);
  expect(r.settled!.payment_response).toMatchObject({ success: true, transaction: r.settled!.signature });
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
  expect(alice0 - (await world.balance(alice.address))).toBe(10_000n);
  // The transfer the agent checked and signed: the x402 layout, the seller's fee payer, its externalId as the memo.
  const msg = decodeMessage((await getTx(world.services.db, r.settled!.transaction_id))!.message!);
  expect(msg.feePayer).toBe(seller.feePayer);
  expect(msg.instructions.map((i) => i.kind)).toEqual(['computeUnitLimit', 'computeUnitPrice', 'transferChecked', 'memo']);
  expect(msg.instructions[3]).toMatchObject({ kind: 'memo', text: 'order-mpp-1' });
  const history = await alice.api.call<any>('bot', 'transactions', { type: 'x402' });
  expect(history.items[0]).toMatchObject({ status: 'completed', amount: 0.01, signature: r.settled!.signature });
});

test('x402_daily_per_host applies to MPP: the charge past the day’s budget at the host is rejected, nothing paid', async () => {
  const bob = await buyer('Mbob', { x402_daily_per_host: '0.015', on_budget_exceeded: 'reject' });
  expect((await x402Fetch(bob.api, bob.profile, { url: `${seller.url}/charge` })).outcome).toBe('completed');
  const before = await world.balance(bob.address);
  const verified = seller.state.verified.length;
  const second = await x402Fetch(bob.api, bob.profile, { url: `${seller.url}/charge` });
  expect(second.outcome).toBe('rejected');
  expect(second.prepared).toMatchObject({ status: 'rejected', decision: { rule: 'x402_daily_per_host' } });
  expect(await world.balance(bob.address)).toBe(before);
  expect(seller.state.verified.length).toBe(verified);
});

test('a charge whose fee the seller does not sponsor is refused before anything is created, naming why', async () => {
  const carol = await buyer('Mcarol');
  seller.state.feePayerSponsors = false;
  try {
    const err = await errorOf(carol.api.call('bot', 'x402_prepare', { url: `${seller.url}/charge` }));
    expect(err.errorCode).toBe('VALIDATION_ERROR');
    expect(err.message).toContain('does not sponsor the fee');
  } finally {
    seller.state.feePayerSponsors = true;
  }
  expect((await carol.api.call<any>('bot', 'transactions', { type: 'x402' })).total).toBe(0);
});
