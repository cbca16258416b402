/** Guard rails and owner approvals around real payments on simnet. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ApiClient } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { commitsOf } from '../../src/db/commit-count.ts';
import { listMail } from '../../src/db/mail.ts';
import { expireIntents } from '../../src/jobs/payments.ts';
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
  await world.claim(bob.walletId, 'other@example.com');
  await world.fund(alice.address, 1_000_000_000n);
  await world.fund(bob.address, 1_000_000n);
});
afterAll(() => world.stop());


const setRails = (rails: Record<string, unknown>) => owner.call('owner', 'set_guard_rails', { wallet_id: alice.walletId, rails });

describe('approvals', () => {
  test('above approval_above: awaiting_approval (CLI exits 5) → owner approves via the owner API → the agent confirms → completed', async () => {
    await setRails({ approval_above: '20' });
    const res = await runCli(['pay', bob.username, '25', '--server', world.url, '--home', alice.home, '--json']);
    expect(res.code).toBe(5);
    expect(res.json).toMatchObject({ status: 'awaiting_approval', decision: { rule: 'approval_above' } });
    const txId = res.json.transaction_id;
    const pending = await alice.api.call<any>('bot', 'pending_approvals');
    expect(pending.items.map((a: any) => a.approval_id)).toContain(res.json.approval_id);
    const early = await errorOf(alice.api.call('bot', 'confirm_payment', { transaction_id: txId }));
    expect(early.errorCode).toBe('AWAITING_APPROVAL');

    await owner.call('owner', 'approve', { approval_id: res.json.approval_id });
    const status = await alice.api.call<any>('bot', 'approval_status', { approval_id: res.json.approval_id });
    expect(status.status).toBe('approved');
    const b0 = await world.balance(bob.address);
    const confirm = await runCli(['confirm', txId, '--server', world.url, '--home', alice.home, '--json']);
    expect(confirm.code).toBe(0);
    expect(confirm.json.status).toBe('completed');
    expect((await world.balance(bob.address)) - b0).toBe(25_000_000n);
  });

  test("the approval mail a real payment queues carries the agent's note and amount + fee = total, as the pages do", async () => {
    await setRails({ approval_above: '20' });
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 30, note: 'GPU hours for the nightly run' });
    expect(intent.status).toBe('awaiting_approval');
    const mail = (await listMail(world.services.db, 20)).find((m) => m.body.includes('GPU hours for the nightly run'));
    expect(mail?.body).toContain("The agent's reason: GPU hours for the nightly run");
    expect(mail?.body).toContain(`Payment: 30 + 0.15 fee = 30.15 USDC to ${bob.username}`);
    await owner.call('owner', 'reject', { approval_id: intent.approval_id });
  });

  test('an approval decided at once by approvals and rejections: exactly one decision holds, the others are refused and change nothing', async () => {
    await setRails({ approval_above: '20' });
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 21 });
    expect(intent.status).toBe('awaiting_approval');
    const decisions = ['approve', 'reject', 'approve', 'reject', 'approve', 'reject'];
    const outcomes = await Promise.all(decisions.map((action) => owner.call<any>('owner', action, { approval_id: intent.approval_id }).then(() => action, (err: { errorCode?: string }) => err.errorCode ?? 'error')));
    const won = outcomes.filter((o) => o === 'approve' || o === 'reject');
    expect(won).toHaveLength(1);
    expect(outcomes.filter((o) => o !== won[0])).toEqual(Array(decisions.length - 1).fill('INVALID_STATUS'));
    const status = await alice.api.call<any>('bot', 'approval_status', { approval_id: intent.approval_id });
    expect(status.status).toBe(won[0] === 'approve' ? 'approved' : 'rejected');
    // One decision in the wallet's decision log, one event for the agent.
    const decided = await world.services.db.all<{ kind: string }>("SELECT kind FROM audit_log WHERE wallet_id = ? AND data LIKE ? AND kind LIKE 'approval.%'", alice.walletId, `%${intent.approval_id}%`);
    expect(decided).toHaveLength(1);
    if (won[0] === 'approve') await alice.api.call('bot', 'cancel_payment', { transaction_id: intent.transaction_id });
  });

  test('the owner rejects: rejected, and the reserved budget is released', async () => {
    await setRails({ approval_above: '20', budgets: { daily: '100' } });
    const before = await alice.api.call<any>('bot', 'my_limits');
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 30 });
    expect(intent.status).toBe('awaiting_approval');
    const during = await alice.api.call<any>('bot', 'my_limits');
    expect(JSON.stringify(during)).not.toBe(JSON.stringify(before));
    await owner.call('owner', 'reject', { approval_id: intent.approval_id });
    const after = await alice.api.call<any>('bot', 'my_limits');
    expect(after.remaining).toEqual(before.remaining);
    const list = await alice.api.call<any>('bot', 'list_payments', { status: 'rejected' });
    expect(list.items[0].transaction_id).toBe(intent.transaction_id);
    const confirm = await errorOf(alice.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id }));
    expect(confirm.errorCode).toBe('INVALID_STATUS');
  });

  test('a blocked recipient is rejected, naming the rule; can_i_afford says so first', async () => {
    await setRails({ blocked_recipients: [bob.username] });
    const dry = await alice.api.call<any>('bot', 'can_i_afford', { to: bob.username, amount: 1 });
    expect(dry).toMatchObject({ can_pay: false, will_auto_approve: false, rule: 'blocked_recipients' });
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 });
    expect(intent.status).toBe('rejected');
    expect(intent.decision.rule).toBe('blocked_recipients');
    expect(intent.next_step).toBeNull();
  });

  test('a rail tightened after the intent applies before signing: frozen → the pre_approved intent is rejected at confirm', async () => {
    await setRails({});
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 2 });
    expect(intent.status).toBe('pre_approved');
    await setRails({ frozen: true });
    const err = await errorOf(confirmSignSubmit(alice.api, alice.profile, intent.transaction_id));
    expect(err.errorCode).toBe('INVALID_STATUS');
    expect(err.details.rule).toBe('frozen');
    await setRails({});
  });

  test('the agent freezes its own wallet (CLI): the intent it made before is refused at signing, new ones are rejected; it cannot unfreeze, the owner can', async () => {
    await setRails({});
    const before = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 2 });
    expect(before.status).toBe('pre_approved');
    const frozen = await runCli(['freeze', '--reason', 'a page told me to pay an unknown address', '--server', world.url, '--home', alice.home, '--json']);
    expect(frozen.code).toBe(0);
    expect(frozen.json).toMatchObject({ frozen: true, already_frozen: false, reason: 'a page told me to pay an unknown address' });
    const signing = await errorOf(confirmSignSubmit(alice.api, alice.profile, before.transaction_id));
    expect(signing.errorCode).toBe('INVALID_STATUS');
    expect(signing.details.rule).toBe('frozen');
    const after = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 });
    expect(after).toMatchObject({ status: 'rejected', decision: { rule: 'frozen' } });
    expect((await alice.api.call<any>('bot', 'freeze', {})).already_frozen).toBe(true);
    // The agent has no way back: the owner API refuses its key, and no bot action lifts it.
    const own = await errorOf(new ApiClient(world.url, alice.profile.api_key).call('owner', 'set_guard_rails', { wallet_id: alice.walletId, rails: {} }));
    expect(own.errorCode).toBe('UNAUTHORIZED');
    expect((await alice.api.call<any>('bot', 'my_limits')).frozen).toBe(true);
    const audit = await owner.call<any>('owner', 'audit_log', { wallet_id: alice.walletId });
    expect(audit.items.find((a: any) => a.kind === 'guard_rails.frozen')).toMatchObject({ actor: 'agent', data: { reason: 'a page told me to pay an unknown address' } });
    await setRails({});
    expect((await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 })).status).toBe('pre_approved');
  });

  test("a loosening the owner scheduled does not lift the agent's freeze when it comes due", async () => {
    const carol = await world.agent('Carol');
    const carolsOwner = await world.claim(carol.walletId, 'carol@example.com');
    await world.fund(carol.address, 10_000_000n);
    const rails = (r: Record<string, unknown>) => carolsOwner.call('owner', 'set_guard_rails', { wallet_id: carol.walletId, rails: r });
    await rails({ loosen_delay_hours: 1, max_per_payment: '5' });
    await rails({ loosen_delay_hours: 1 });
    expect((await carol.api.call<any>('bot', 'my_limits')).pending_change).not.toBeNull();
    await carol.api.call('bot', 'freeze', {});
    world.clock.offsetMs = 2 * 60 * 60 * 1000;
    try {
      expect((await carol.api.call<any>('bot', 'my_limits')).frozen).toBe(true);
      expect((await carol.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 })).decision.rule).toBe('frozen');
    } finally {
      world.clock.offsetMs = 0;
    }
  });

  test('cancel_payment releases the reservation and withdraws the approval', async () => {
    await setRails({ approval_above: '5' });
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 6 });
    const cancelled = await alice.api.call<any>('bot', 'cancel_payment', { transaction_id: intent.transaction_id });
    expect(cancelled.status).toBe('cancelled');
    const approval = await alice.api.call<any>('bot', 'approval_status', { approval_id: intent.approval_id });
    expect(approval.status).toBe('cancelled');
    const again = await errorOf(alice.api.call('bot', 'cancel_payment', { transaction_id: intent.transaction_id }));
    expect(again.errorCode).toBe('INVALID_STATUS');
    await setRails({});
  });

  test("another wallet's transaction is NOT_FOUND for every action", async () => {
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 });
    for (const action of ['confirm_payment', 'cancel_payment', 'submit_signed_tx']) {
      const err = await errorOf(bob.api.call('bot', action, { transaction_id: intent.transaction_id }));
      expect(err.errorCode).toBe('NOT_FOUND');
    }
    await alice.api.call('bot', 'cancel_payment', { transaction_id: intent.transaction_id });
  });
});

describe('budget concurrency', () => {
  test('20 concurrent intents against a remaining budget for 10: exactly 10 pre_approved, never more reserved than the budget, also where they share commits', async () => {
    // Each intent costs 1 + 0.01 fee = 1.01; a daily budget of 10.10 holds exactly 10 of them.
    const carol = await world.agent('Carol');
    const carolOwner = await world.claim(carol.walletId, 'carol@example.com');
    await world.fund(carol.address, 100_000_000n);
    await world.fund(bob.address, 0n);
    await carolOwner.call('owner', 'set_guard_rails', { wallet_id: carol.walletId, rails: { budgets: { daily: '10.10' }, on_budget_exceeded: 'reject' } });
    const commitsBefore = commitsOf(world.services.db);
    const results = await Promise.all(Array.from({ length: 20 }, () => carol.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 })));
    // On SQLite written in batches (src/db/write-batch.ts): each intent decided on the ones before it
    // in its batch. On PostgreSQL each is its own transaction, serialized by the database.
    if (world.services.db.dialect === 'sqlite') expect(commitsOf(world.services.db) - commitsBefore).toBeLessThan(20);
    const counts = results.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
    expect(counts).toEqual({ pre_approved: 10, rejected: 10 });
    const limits = await carol.api.call<any>('bot', 'my_limits');
    expect(limits.remaining.daily).toBe(0);
    expect(limits.used.daily).toBe(10.1);
  });

  test('with on_budget_exceeded require_approval the overflow waits for the owner instead', async () => {
    const dave = await world.agent('Dave');
    const daveOwner = await world.claim(dave.walletId, 'dave@example.com');
    await world.fund(dave.address, 100_000_000n);
    await daveOwner.call('owner', 'set_guard_rails', { wallet_id: dave.walletId, rails: { budgets: { daily: '5.05' } } });
    const results = await Promise.all(Array.from({ length: 8 }, () => dave.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 })));
    expect(results.filter((r) => r.status === 'pre_approved').length).toBe(5);
    expect(results.filter((r) => r.status === 'awaiting_approval').length).toBe(3);
  });
});

describe('expiry', () => {
  test('at 48 h an unconfirmed intent expires once: reservation released, one event even when the job runs twice', async () => {
    const eve = await world.agent('Eve');
    await world.claim(eve.walletId, 'eve@example.com');
    await world.fund(eve.address, 10_000_000n);
    const intent = await eve.api.call<any>('bot', 'pay', { to: bob.username, amount: 5 });
    // Intents of this file's earlier tests may be older than 48 h by then (the count is theirs):
    // what this proves is that this intent is not expired a second before its 48 h.
    world.clock.offsetMs = 48 * 60 * 60 * 1000 - 1000;
    await expireIntents(world.services);
    expect((await eve.api.call<any>('bot', 'list_payments', {})).items[0]).toMatchObject({ transaction_id: intent.transaction_id, status: intent.status });
    world.clock.offsetMs = 48 * 60 * 60 * 1000 + 1;
    await expireIntents(world.services);
    await expireIntents(world.services);
    world.clock.offsetMs = 0;
    const list = await eve.api.call<any>('bot', 'list_payments', {});
    expect(list.items[0]).toMatchObject({ transaction_id: intent.transaction_id, status: 'expired' });
    const events = await eve.api.call<any>('bot', 'events', { types: ['payment.expired'] });
    expect(events.items.length).toBe(1);
    const err = await errorOf(eve.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id }));
    expect(err.errorCode).toBe('TRANSACTION_EXPIRED');
    // The 5 USDC reserved are available again: a 9.9 payment fits the 10 USDC balance.
    const big = await eve.api.call<any>('bot', 'can_i_afford', { to: bob.username, amount: 9.9 });
    expect(big.can_pay).toBe(true);
  });
});
