/** The payer balance cache never overstates what a wallet can spend, and saves chain reads in bursts. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { forgetBalance, payerBalance } from '../../src/payments/balance-cache.ts';
import { assertAffordable, quote } from '../../src/payments/intent.ts';
import { getWallet } from '../../src/db/wallets.ts';
import type { ChainPort } from '../../src/solana/port.ts';
import { errorOf } from '../helpers/errors.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;
let balanceReads = 0;
let chain: ChainPort;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice', { claimBy: 'o@example.com' });
  bob = await world.agent('Bob', { claimBy: 'o@example.com' });
  await world.fund(alice.address, 10_000_000n);
  await world.fund(bob.address, 0n);
  // Count the chain reads of balances, on the real port.
  const real = world.services.chain;
  chain = real;
  world.services.chain = new Proxy(real, {
    get: (target, prop) => {
      if (prop === 'getTokenBalance') return (owner: Address, mint: Address) => (balanceReads++, target.getTokenBalance(owner, mint));
      return Reflect.get(target, prop);
    },
  }) as ChainPort;
});
afterAll(() => world.stop());

test('a burst of intents reads the balance once; spending beyond it re-reads and refuses', async () => {
  balanceReads = 0;
  for (let i = 0; i < 5; i++) await alice.api.call('bot', 'pay', { to: bob.username, amount: 1 });
  expect(balanceReads).toBe(1);
  // 5 × 1.01 reserved of 10: 4.95 left; 5 more does not fit → a fresh read, then INSUFFICIENT_FUNDS.
  const refused = await errorOf(alice.api.call('bot', 'pay', { to: bob.username, amount: 5 }));
  expect(refused.errorCode).toBe('INSUFFICIENT_FUNDS');
  expect(balanceReads).toBe(2);
});

test('a completion counts against the cached balance without telling the cache (any node may record it): the next payment reads nothing, and the cached figure equals the chain', async () => {
  const mint = world.services.config.usdcMint as Address;
  await alice.api.call('bot', 'can_i_afford', { to: bob.username, amount: 1 });
  const list = await alice.api.call<any>('bot', 'list_payments', { status: 'pre_approved' });
  for (const item of list.items.slice(0, 2)) await confirmSignSubmit(alice.api, alice.profile, item.transaction_id);
  const before = balanceReads;
  const { balance: cached } = await payerBalance(world.services, alice.address as Address, mint, 0n);
  expect(balanceReads).toBe(before);
  // The chain is the outside truth: 10 − 2 × 1.01.
  expect(cached).toBe(await chain.getTokenBalance(alice.address as Address, mint));
  expect(cached).toBe(7_980_000n);
  // 3 × 1.01 still reserved of 7.98: 4.95 spendable, no more (4.94 plus its 0.5 % fee is refused).
  const refused = await errorOf(alice.api.call('bot', 'pay', { to: bob.username, amount: 4.94 }));
  expect(refused.errorCode).toBe('INSUFFICIENT_FUNDS');
  const fits = await alice.api.call<any>('bot', 'can_i_afford', { to: bob.username, amount: 4.9 });
  expect(fits).toMatchObject({ can_pay: true, balance: 7.98 });
});

test('money into one of our wallets leaves its cached balance low, never high, and is spendable at once', async () => {
  const mint = world.services.config.usdcMint as Address;
  expect((await payerBalance(world.services, bob.address as Address, mint, 0n)).balance).toBeLessThanOrEqual(await chain.getTokenBalance(bob.address as Address, mint));
  const list = await alice.api.call<any>('bot', 'list_payments', { status: 'pre_approved' });
  await confirmSignSubmit(alice.api, alice.profile, list.items[0].transaction_id);
  expect((await payerBalance(world.services, bob.address as Address, mint, 0n)).balance).toBeLessThanOrEqual(await chain.getTokenBalance(bob.address as Address, mint));
  // Bob received 3 in all; paying 2 (+ fee) needs that money: the too-low cache is re-read, not refused.
  const paid = await bob.api.call<any>('bot', 'pay', { to: alice.username, amount: 2 });
  expect(paid.status).toBe('pre_approved');
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

test('a quote read before a transfer landed never overstates once the completion is recorded: the intent checks what settled since', async () => {
  const mint = world.services.config.usdcMint as Address;
  const carol = await world.agent('Carol', { claimBy: 'o@example.com' });
  await world.fund(carol.address, 10_000_000n);
  const pending = await carol.api.call<any>('bot', 'pay', { to: bob.username, amount: 5 });
  forgetBalance(carol.address);
  // Read while 5.025 is outstanding: 10 on chain, 4.975 spendable.
  const early = await quote(world.services, carol.address as Address, bob.address as Address, 4_000_000n, 'payment');
  expect(early.balance).toBe(10_000_000n);
  // The transfer lands and its completion is recorded: outstanding drops, the chain is at 4.975.
  await confirmSignSubmit(carol.api, carol.profile, pending.transaction_id);
  expect(await chain.getTokenBalance(carol.address as Address, mint)).toBe(4_975_000n);
  const wallet = (await getWallet(world.services.db, carol.walletId))!;
  // 4 + 0.02 fee fits the 4.975 left; 4.96 + fee would not, though the early read minus outstanding (10 − 0) says it does.
  await assertAffordable(world.services, wallet, early);
  const tooMuch = await quote(world.services, carol.address as Address, bob.address as Address, 4_960_000n, 'payment');
  const stale = { ...tooMuch, balance: early.balance, settledOut: early.settledOut };
  const refused = await assertAffordable(world.services, wallet, stale).catch((err: { errorCode?: string }) => err);
  expect(refused).toMatchObject({ errorCode: 'INSUFFICIENT_FUNDS', details: { available: 4.975 } });
});
