/**
 * Payments end to end on simnet: the real client (FROST over HTTP) and the real CLI against the
 * real app, with the owner acting through the owner API.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ApiClient } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { runCli } from '../helpers/daemon.ts';
import { errorOf } from '../helpers/errors.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;
let owner: ApiClient;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice');
  bob = await world.agent('Bob');
  owner = await world.claim(alice.walletId, 'owner@example.com');
  await world.claim(bob.walletId, 'bob-owner@example.com');
  await world.fund(alice.address, 1_000_000_000n);
});
afterAll(async () => {
  await world.stop();
});


describe('wallet to wallet', () => {
  test('A pays B 12.5 through the CLI: B +12.5, A −(12.5 + fee), treasury +fee; events and lists on both sides', async () => {
    const treasury = world.services.feePayer.address;
    const [a0, b0, t0] = await Promise.all([world.balance(alice.address), world.balance(bob.address), world.balance(treasury)]);
    const res = await runCli(['pay', bob.username, '12.5', '--note', 'thanks', '--server', world.url, '--home', alice.home, '--json']);
    expect(res.stderr).toContain('signing');
    expect(res.code).toBe(0);
    expect(res.json.status).toBe('completed');
    const fee = BigInt(Math.round(res.json.fee * 1e6));
    expect(fee).toBe(62_500n); // 0.5 % platform fee; B had no token account yet, but B is claimed: the operator creates it
    expect(await world.services.chain.tokenAccountExists(bob.address, world.simnet.mint)).toBe(true);
    const [a1, b1, t1] = await Promise.all([world.balance(alice.address), world.balance(bob.address), world.balance(treasury)]);
    expect(b1 - b0).toBe(12_500_000n);
    expect(a0 - a1).toBe(12_500_000n + fee);
    expect(t1 - t0).toBe(fee);

    const aliceEvents = await alice.api.call<any>('bot', 'events', { limit: 50 });
    expect(aliceEvents.items.map((e: any) => e.type)).toEqual(expect.arrayContaining(['payment.created', 'payment.completed']));
    const bobEvents = await bob.api.call<any>('bot', 'events', { types: ['payment.received'] });
    expect(bobEvents.items[0].data).toMatchObject({ amount: 12.5, from: alice.username, note: 'thanks' });

    const sent = await alice.api.call<any>('bot', 'list_payments', {});
    expect(sent.items[0]).toMatchObject({ transaction_id: res.json.transaction_id, status: 'completed', amount: 12.5 });
    const received = await bob.api.call<any>('bot', 'transactions', { type: 'in' });
    expect(received.items[0]).toMatchObject({ direction: 'in', amount: 12.5, from: alice.username, signature: res.json.signature });
  });

  test('a second payment to a recipient whose token account exists pays no setup fee', async () => {
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: '1' });
    expect(intent.fee_breakdown).toEqual({ platform_fee: 0.01, account_setup_fee: 0 });
    const done = await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id);
    expect(done.status).toBe('completed');
  });

  test('INSUFFICIENT_FUNDS names balance, required and shortfall; INVALID_RECIPIENT for unknown, self and malformed', async () => {
    const poor = await errorOf(bob.api.call('bot', 'pay', { to: alice.username, amount: 500 }));
    expect(poor.errorCode).toBe('INSUFFICIENT_FUNDS');
    expect(poor.details).toMatchObject({ required: 502.5 });
    expect(Number(poor.details.shortfall)).toBeGreaterThan(0);
    for (const to of ['nobody-here', alice.username, alice.address, '1111111111111111111111111111111O']) {
      const err = await errorOf(alice.api.call('bot', 'pay', { to, amount: 1 }));
      expect(err.errorCode).toBe('INVALID_RECIPIENT');
    }
  });

  test.each([
    ['-1', 'greater than 0'],
    [0, 'greater than 0'],
    ['0.0000001', '6 decimal'],
    ['1,5', 'plain decimal'],
    [' 1', 'plain decimal'],
    ['١', 'plain decimal'],
    [2 ** 53 + 1, 'too large'],
    ['1e3', 'plain decimal'],
    [1_000_001, 'at most'],
  ])('amount %p is a VALIDATION_ERROR and creates nothing', async (amount, message) => {
    const before = await alice.api.call<any>('bot', 'list_payments', {});
    const err = await errorOf(alice.api.call('bot', 'pay', { to: bob.username, amount }));
    expect(err.errorCode).toBe('VALIDATION_ERROR');
    expect(err.message).toContain(message);
    expect((await alice.api.call<any>('bot', 'list_payments', {})).total).toBe(before.total);
  });
});
