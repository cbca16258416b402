/**
 * The deposit watch against simnet: what it costs idle (one getMultipleAccounts per hundred
 * accounts, no signature lookups) and what it finds when an account moves (outside deposits,
 * once; our own payments never as deposits), counted at the chain port.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { scanDeposits, watchIntervalMs, WATCH_INTERVAL_MS } from '../../src/jobs/deposits.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { ChainUnavailableError } from '../../src/solana/errors.ts';
import type { Services } from '../../src/services.ts';
import { insertBulkWallets } from '../helpers/bulk-wallets.ts';
import { signWithoutSubmit } from '../helpers/signing.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;
let watched: Services;
const calls = new Map<string, number>();
const count = (method: string) => calls.get(method) ?? 0;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice', { claimBy: 'o@example.com' });
  bob = await world.agent('Bob', { claimBy: 'o@example.com' });
  await world.fund(alice.address, 50_000_000n);
  // Bob's token account exists, as a claimed wallet's does (the operator creates it at claim).
  await world.fund(bob.address, 0n);
  await insertBulkWallets(world.services.db, 248);
  const chain = createRpcChainPort(world.simnet.url, { observe: (method) => calls.set(method, count(method) + 1) });
  watched = { ...world.services, chain };
  await scanDeposits(watched);
});
afterAll(() => world.stop());

describe('the deposit watch', () => {
  test('idle, 250 accounts cost 3 getMultipleAccounts calls a pass and no signature lookups', async () => {
    calls.clear();
    await scanDeposits(watched);
    await scanDeposits(watched);
    expect(Object.fromEntries(calls)).toEqual({ getMultipleAccounts: 6 });
  });

  test('an outside deposit is found and recorded once; only the account that moved is looked up', async () => {
    const before = await alice.api.call<any>('bot', 'transactions', { type: 'in' });
    const signature = await world.fund(alice.address, 7_000_000n);
    calls.clear();
    expect(await scanDeposits(watched)).toBe(1);
    expect(count('getSignaturesForAddress')).toBe(1);
    expect(count('getTransaction')).toBe(1);
    const after = await alice.api.call<any>('bot', 'transactions', { type: 'in' });
    expect(after.total).toBe(before.total + 1);
    expect(after.items[0]).toMatchObject({ type: 'deposit', amount: 7, signature });
    calls.clear();
    expect(await scanDeposits(watched)).toBe(0);
    expect(Object.fromEntries(calls)).toEqual({ getMultipleAccounts: 3 });
  });

  test('a deposit the signature index does not show yet is looked for again, not forgotten', async () => {
    world.simnet.setStatusLag(50);
    let signature: string;
    try {
      signature = await world.fund(alice.address, 3_000_000n);
      // The amount moved, but the node's signature view is behind the slot the amount was read at: it
      // refuses (minContextSlot) rather than answer "nothing new", and nothing is remembered.
      const impatient = { ...world.services, chain: createRpcChainPort(world.simnet.url, { deadlineMs: 1_000 }) };
      expect(await scanDeposits(impatient).catch((e) => e)).toBeInstanceOf(ChainUnavailableError);
    } finally {
      world.simnet.setStatusLag(null);
    }
    expect(await scanDeposits(watched)).toBe(1);
    const list = await alice.api.call<any>('bot', 'transactions', { type: 'deposit', limit: 5 });
    expect(list.items.map((t: any) => t.signature)).toContain(signature);
  });

  test('a payment between two of our wallets is never a deposit, and costs no transaction lookup', async () => {
    const txId = await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: 3 });
    const done = await alice.api.call<any>('bot', 'submit_signed_tx', { transaction_id: txId, wait: true });
    expect(done.status).toBe('completed');
    calls.clear();
    expect(await scanDeposits(watched)).toBe(0);
    expect(count('getTransaction')).toBe(0);
    const received = await bob.api.call<any>('bot', 'transactions', { type: 'in' });
    expect(received.items.map((t: any) => t.type)).toEqual(['payment']);
  });
});

describe('the watch cadence', () => {
  test('is 3 s unless solana.rpc_max_rps is too small for the accounts, then stretched to half the budget', () => {
    expect(watchIntervalMs(52, 0)).toBe(WATCH_INTERVAL_MS);
    expect(watchIntervalMs(1_000, 0)).toBe(WATCH_INTERVAL_MS);
    expect(watchIntervalMs(1_000, 10)).toBe(WATCH_INTERVAL_MS);
    // 1,000 accounts = 10 calls a pass; at 4 calls/s with half for the watch: one pass every 5 s.
    expect(watchIntervalMs(1_000, 4)).toBe(5_000);
    expect(watchIntervalMs(10_000, 4)).toBe(50_000);
  });
});
