/** The payer balance cache never overstates what a wallet can spend, and saves chain reads in bursts. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import type { ChainPort } from '../../src/solana/port.ts';
import { errorOf } from '../helpers/errors.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;
let balanceReads = 0;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice', { claimBy: 'o@example.com' });
  bob = await world.agent('Bob', { claimBy: 'o@example.com' });
  await world.fund(alice.address, 10_000_000n);
  await world.fund(bob.address, 0n);
  // Count the chain reads of balances, on the real port.
  const real = world.services.chain;
  world.services.chain = new Proxy(real, {
    get: (target, prop) => {
      if (prop === 'getTokenBalance') return (owner: Address, mint: Address) => (balanceReads++, target.getTokenBalance(owner, mint));
      return Reflect.get(target, prop);
    },
  }) as ChainPort;
});
afterAll(() => world.stop());

test('a burst of intents reads the balance once; spending beyond it re-reads and refuses; a completion forgets it', async () => {
  balanceReads = 0;
  for (let i = 0; i < 5; i++) await alice.api.call('bot', 'pay', { to: bob.username, amount: 1 });
  expect(balanceReads).toBe(1);
  // 5 × 1.01 reserved of 10: 4.95 left; 5 more does not fit → a fresh read, then INSUFFICIENT_FUNDS.
  const refused = await errorOf(alice.api.call('bot', 'pay', { to: bob.username, amount: 5 }));
  expect(refused.errorCode).toBe('INSUFFICIENT_FUNDS');
  expect(balanceReads).toBe(2);
  // A completed payment lowers the chain balance and releases its reservation: the cache must not survive it.
  const list = await alice.api.call<any>('bot', 'list_payments', { status: 'pre_approved' });
  await confirmSignSubmit(alice.api, alice.profile, list.items[0].transaction_id);
  const before = balanceReads;
  await alice.api.call('bot', 'can_i_afford', { to: bob.username, amount: 1 });
  expect(balanceReads).toBe(before + 1);
});

test('a recorded deposit forgets the cached balance, so new money is spendable at once', async () => {
  for (const p of (await alice.api.call<any>('bot', 'list_payments', { status: 'pre_approved' })).items) {
    await alice.api.call('bot', 'cancel_payment', { transaction_id: p.transaction_id });
  }
  await alice.api.call('bot', 'can_i_afford', { to: bob.username, amount: 1 });
  await world.fund(alice.address, 50_000_000n);
  await scanDeposits(world.services);
  const fits = await alice.api.call<any>('bot', 'can_i_afford', { to: bob.username, amount: 40 });
  expect(fits.can_pay).toBe(true);
});
