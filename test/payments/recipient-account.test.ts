/**
 * Who creates a recipient's token account, on simnet: the one in-flight payment holding the
 * setup fee (its message creates the account), others quoted without the fee and built without
 * the create once it exists; a holder whose recipient's account appeared is released of its fee;
 * a payment quoted without the fee whose holder is gone or waiting for approval is refused.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { getTx, outstandingOut } from '../../src/db/transactions.ts';
import { planRecipientAccount } from '../../src/payments/recipient-account.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let payer: Agent;

beforeAll(async () => {
  world = await startWorld();
  payer = await world.agent('Planner', { claimBy: 'planner@example.com' });
  await world.fund(payer.address, 50_000_000n);
});
afterAll(async () => {
  await world.stop();
});

const pay = (to: string, amount = '1') => payer.api.call<any>('bot', 'pay', { to, amount });
const row = async (id: string) => (await getTx(world.services.db, id))!;

async function refusal(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a refusal');
}

test('the first payment to a new address holds the setup fee and creates the account; the second is quoted without it', async () => {
  const outside = (await generateKeyPairSigner()).address;
  const holder = await pay(outside);
  const rider = await pay(outside);
  expect([holder.fee_breakdown.account_setup_fee, rider.fee_breakdown.account_setup_fee]).toEqual([0.25, 0]);
  expect((await payer.api.call<any>('bot', 'can_i_afford', { to: outside, amount: '1' })).fee_breakdown.account_setup_fee).toBe(0);
  expect(await outstandingOut(world.services.db, payer.walletId)).toBe(1_260_000n + 1_010_000n);
  const plan = await planRecipientAccount(world.services, await row(holder.transaction_id));
  expect(plan.createAccount).toBe(true);
  expect(plan.tx.setup_fee).toBe(250_000n);
  await payer.api.call('bot', 'cancel_payment', { transaction_id: rider.transaction_id });
  await payer.api.call('bot', 'cancel_payment', { transaction_id: holder.transaction_id });
});

test("a holder whose recipient's account exists by confirm is released of its fee: the reservation drops, nothing is created", async () => {
  const outside = (await generateKeyPairSigner()).address;
  const holder = await pay(outside);
  const reserved = await outstandingOut(world.services.db, payer.walletId);
  await world.fund(outside, 0n);
  const plan = await planRecipientAccount(world.services, await row(holder.transaction_id));
  expect(plan.createAccount).toBe(false);
  expect(plan.tx.setup_fee).toBe(0n);
  expect(await outstandingOut(world.services.db, payer.walletId)).toBe(reserved - 250_000n);
  await payer.api.call('bot', 'cancel_payment', { transaction_id: holder.transaction_id });
});

test('a payment quoted without the fee whose holder ended (cancelled) is refused: it cannot create the account', async () => {
  const outside = (await generateKeyPairSigner()).address;
  const holder = await pay(outside);
  const rider = await pay(outside);
  await payer.api.call('bot', 'cancel_payment', { transaction_id: holder.transaction_id });
  const err = await refusal(planRecipientAccount(world.services, await row(rider.transaction_id)));
  expect(err.errorCode).toBe('INVALID_STATUS');
  expect(err.howToFix).toContain('pay again');
  // Paying again now: this payment holds the fee.
  const again = await pay(outside);
  expect(again.fee_breakdown.account_setup_fee).toBe(0.25);
  for (const t of [rider, again]) await payer.api.call('bot', 'cancel_payment', { transaction_id: t.transaction_id });
});

test("a payment behind a holder waiting for the owner's approval is refused at once, naming it", async () => {
  const outside = (await generateKeyPairSigner()).address;
  const owner = await world.ownerClient('planner@example.com');
  await owner.call('owner', 'set_guard_rails', { wallet_id: payer.walletId, rails: { approval_above: '3' } });
  const holder = await pay(outside, '5');
  expect(holder.status).toBe('awaiting_approval');
  const rider = await pay(outside, '1');
  const started = Date.now();
  const err = await refusal(planRecipientAccount(world.services, await row(rider.transaction_id)));
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(err.errorCode).toBe('INVALID_STATUS');
  expect(err.details.waiting_for).toEqual({ transaction_id: holder.transaction_id, status: 'awaiting_approval' });
  for (const t of [rider, holder]) await payer.api.call('bot', 'cancel_payment', { transaction_id: t.transaction_id });
});

test('a claimed wallet without a token account (claimed before accounts were made at claim) gets one from the operator before the message is built', async () => {
  const payee = await world.agent('Old Claim', { claimBy: 'old-claim@example.com' });
  expect(await world.services.chain.tokenAccountExists(payee.address as Address, world.simnet.mint)).toBe(false);
  const intent = await pay(payee.username);
  expect(intent.fee_breakdown.account_setup_fee).toBe(0);
  const plan = await planRecipientAccount(world.services, await row(intent.transaction_id));
  expect(plan.createAccount).toBe(false);
  expect(await world.services.chain.tokenAccountExists(payee.address as Address, world.simnet.mint)).toBe(true);
  await payer.api.call('bot', 'cancel_payment', { transaction_id: intent.transaction_id });
});
