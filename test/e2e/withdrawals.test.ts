/** Withdrawals to an external address: always the owner's call, then the same FROST signing as payments. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { runCli } from '../helpers/daemon.ts';
import { errorOf } from '../helpers/errors.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let owner: ApiClient;
let external: Address;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice');
  owner = await world.claim(alice.walletId, 'owner@example.com');
  await world.fund(alice.address, 100_000_000n);
  external = (await generateKeyPairSigner()).address;
});
afterAll(() => world.stop());


const cli = (...args: string[]) => runCli([...args, '--server', world.url, '--home', alice.home, '--json']);

describe('withdrawals', () => {
  test('requested → confirm before approval is AWAITING_APPROVAL → the owner approves → confirmed → the external address +amount on chain', async () => {
    const req = await cli('withdraw', '20', external, '--reason', 'move to cold storage');
    expect(req.code).toBe(5);
    expect(req.json).toMatchObject({ status: 'awaiting_approval', decision: { rule: 'withdrawal' }, fee_breakdown: { platform_fee: 0.1, account_setup_fee: 0.25 } });
    const early = await errorOf(alice.api.call('bot', 'confirm_withdrawal', { transaction_id: req.json.transaction_id }));
    expect(early.errorCode).toBe('AWAITING_APPROVAL');
    const early2 = await cli('withdraw', 'confirm', req.json.withdrawal_id);
    expect(early2.code).toBe(5);

    await owner.call('owner', 'approve', { approval_id: req.json.approval_id });
    const a0 = await world.balance(alice.address);
    const done = await cli('withdraw', 'confirm', req.json.withdrawal_id);
    expect(done.code).toBe(0);
    expect(done.json.status).toBe('completed');
    expect(await world.balance(external)).toBe(20_000_000n);
    expect(a0 - (await world.balance(alice.address))).toBe(20_350_000n);
    const got = await alice.api.call<any>('bot', 'get_withdrawal', { withdrawal_id: req.json.withdrawal_id });
    expect(got).toMatchObject({ status: 'completed', reason: 'move to cold storage', to_address: external });
    const events = await alice.api.call<any>('bot', 'events', { types: ['withdrawal.created', 'withdrawal.approved', 'withdrawal.completed'] });
    expect(events.items.map((e: any) => e.type)).toEqual(['withdrawal.created', 'withdrawal.approved', 'withdrawal.completed']);
  });

  test('the owner rejects → rejected; nothing moves', async () => {
    const w = await alice.api.call<any>('bot', 'withdraw', { amount: 5, to_address: external, reason: 'test' });
    await owner.call('owner', 'reject', { approval_id: w.approval_id });
    const got = await alice.api.call<any>('bot', 'get_withdrawal', { withdrawal_id: w.withdrawal_id });
    expect(got.status).toBe('rejected');
    const err = await errorOf(alice.api.call('bot', 'confirm_withdrawal', { transaction_id: w.transaction_id }));
    expect(err.errorCode).toBe('INVALID_STATUS');
  });

  test('an address outside the owner allowlist is rejected; the wallet itself and malformed addresses are refused', async () => {
    await owner.call('owner', 'set_guard_rails', { wallet_id: alice.walletId, rails: { withdrawal_allowlist: [alice.address === external ? 'x' : '11111111111111111111111111111112'] } });
    const w = await alice.api.call<any>('bot', 'withdraw', { amount: 1, to_address: external, reason: 'x' });
    expect(w.status).toBe('rejected');
    expect(w.decision.rule).toBe('withdrawal_allowlist');
    await owner.call('owner', 'set_guard_rails', { wallet_id: alice.walletId, rails: {} });
    expect((await errorOf(alice.api.call('bot', 'withdraw', { amount: 1, to_address: alice.address, reason: 'x' }))).errorCode).toBe('VALIDATION_ERROR');
    expect((await errorOf(alice.api.call('bot', 'withdraw', { amount: 1, to_address: 'not-an-address', reason: 'x' }))).errorCode).toBe('VALIDATION_ERROR');
  });

  test('withdraw is idempotent with X-Idempotency-Key', async () => {
    const a = await alice.api.call<any>('bot', 'withdraw', { amount: 2, to_address: external, reason: 'idem' }, { idempotencyKey: 'wd-1' });
    const b = await alice.api.call<any>('bot', 'withdraw', { amount: 2, to_address: external, reason: 'idem' }, { idempotencyKey: 'wd-1' });
    expect(b).toEqual(a);
  });
});
