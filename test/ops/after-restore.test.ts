/**
 * The first start after a restore, in process against simnet: restored signing state is closed,
 * approvals that may have been decided after the backup are listed in the log and the audit log,
 * restored payments whose bytes landed after the backup (one confirmable, one awaiting an approval
 * given since) are settled from their memo exactly once, and the marker is cleared so a second
 * start does nothing.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { ApiClient } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { encodeCommitments } from '../../src/frost/wire.ts';
import { commit } from '../../src/frost/party.ts';
import { parsePaymentMemo, reconcileAfterRestore } from '../../src/ops/after-restore.ts';
import { memoryLogger } from '../helpers/services.ts';
import { agentKey, signWithoutSubmit } from '../helpers/signing.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;
let owner: ApiClient;

beforeAll(async () => {
  // Fast slots: the reconciliation waits out the newest blockhash (150 slots).
  world = await startWorld({ slotMs: 50 });
  alice = await world.agent('Alice');
  bob = await world.agent('Bob');
  owner = await world.claim(alice.walletId, 'owner@example.com');
  await world.claim(bob.walletId, 'bob@example.com');
  await world.fund(alice.address, 100_000_000n);
});
afterAll(() => world.stop());

async function markRestored(): Promise<void> {
  await world.services.db.run("INSERT INTO meta (key, value) VALUES ('restored_from_backup', ?)", JSON.stringify({ backup_created_at: '2026-01-01T00:00:00.000Z', restored_at: new Date().toISOString() }));
}

test('memo parsing: the transaction id last, a reference before it', () => {
  expect(parsePaymentMemo('tx_0123abc')).toEqual({ transactionId: 'tx_0123abc', reference: null });
  expect(parsePaymentMemo('order 42 tx_0123abc')).toEqual({ transactionId: 'tx_0123abc', reference: 'order 42' });
  expect(parsePaymentMemo('hello')).toBeNull();
  expect(parsePaymentMemo(null)).toBeNull();
});

test('sessions closed; landed payments settled once from their memo (one confirmable, one whose approval came after the backup); still-pending approvals listed; marker cleared', async () => {
  const { db } = world.services;
  // Landed on chain, but the ledger still holds it confirmable: as a backup taken between confirm and sign would.
  const landedId = await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: '2' });
  const landed = (await db.get<{ signed_tx: Uint8Array; signature: string }>('SELECT signed_tx, signature FROM transactions WHERE transaction_id = ?', landedId))!;
  await world.services.chain.sendRawTransaction(landed.signed_tx);
  const deadline = Date.now() + 20_000;
  while ((await world.services.chain.getSignatureStatuses([landed.signature]))[0] === null) {
    if (Date.now() > deadline) throw new Error('the transfer did not land');
    await Bun.sleep(100);
  }
  await db.run("UPDATE transactions SET status = 'pre_approved', signed_tx = NULL, signature = NULL WHERE transaction_id = ?", landedId);

  // An open signing round and an approval waiting for the owner.
  const open = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount: '1' });
  await alice.api.call('bot', 'confirm_payment', { transaction_id: open.transaction_id });
  const init = await alice.api.call<{ sign_session_id: string }>('bot', 'frost_sign_init', { transaction_id: open.transaction_id, commitments: encodeCommitments(commit(agentKey(alice.profile)).commitments) });
  await owner.call('owner', 'set_guard_rails', { wallet_id: alice.walletId, rails: { approval_above: '20' } });
  const waiting = await alice.api.call<{ approval_id: string }>('bot', 'pay', { to: bob.username, amount: '25' });
  // Approved, signed and landed after the backup: the backup holds it awaiting approval.
  const approvedLater = await alice.api.call<{ transaction_id: string; approval_id: string }>('bot', 'pay', { to: bob.username, amount: '30' });
  await owner.call('owner', 'approve', { approval_id: approvedLater.approval_id });
  expect((await confirmSignSubmit(alice.api, alice.profile, approvedLater.transaction_id)).status).toBe('completed');
  await db.run("UPDATE transactions SET status = 'awaiting_approval', message = NULL, signed_tx = NULL, signature = NULL, completed_at = NULL WHERE transaction_id = ?", approvedLater.transaction_id);
  await db.run("UPDATE approvals SET status = 'pending', decided_at = NULL, decided_by = NULL WHERE approval_id = ?", approvedLater.approval_id);
  await db.run('DELETE FROM transactions WHERE wallet_id = ? AND amount = 30000000', bob.walletId);

  await markRestored();
  const { log, lines } = memoryLogger();
  const summary = await reconcileAfterRestore({ ...world.services, log });
  expect(summary).toMatchObject({ settledFromChain: [landedId, approvedLater.transaction_id], recoveredFromChain: [], unrecoverableApprovals: [waiting.approval_id] });
  expect(await db.get<{ status: string; decided_by: string }>('SELECT status, decided_by FROM approvals WHERE approval_id = ?', approvedLater.approval_id)).toEqual({ status: 'approved', decided_by: 'system:restore' });
  expect((await db.get<{ status: string }>('SELECT status FROM transactions WHERE transaction_id = ?', approvedLater.transaction_id))?.status).toBe('completed');
  expect(summary!.signSessionsClosed).toBeGreaterThanOrEqual(1);

  expect((await db.get<{ status: string }>('SELECT status FROM sign_sessions WHERE sign_session_id = ?', init.sign_session_id))?.status).toBe('failed');
  expect(await db.get<{ status: string; signature: string }>('SELECT status, signature FROM transactions WHERE transaction_id = ?', landedId)).toEqual({ status: 'completed', signature: landed.signature });
  const bobRows = await db.get<{ n: bigint }>('SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND signature = ?', bob.walletId, landed.signature);
  expect(bobRows?.n).toBe(1n);
  const audit = await db.all<{ data: string }>("SELECT data FROM audit_log WHERE wallet_id = ? AND kind = 'restore.approval_unrecoverable'", alice.walletId);
  expect(audit.map((a) => JSON.parse(a.data).approval_id)).toEqual([waiting.approval_id]);
  expect(lines.some((l) => l.includes('the owner must decide it again') && l.includes(waiting.approval_id))).toBe(true);

  expect(await reconcileAfterRestore(world.services)).toBeNull();
});

test('bytes signed before the restore that land while it starts are still found: the scan waits until they can no longer land', async () => {
  const { db } = world.services;
  const id = await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: '4' });
  const signed = (await db.get<{ signed_tx: Uint8Array; signature: string }>('SELECT signed_tx, signature FROM transactions WHERE transaction_id = ?', id))!;
  await db.run("UPDATE transactions SET status = 'pre_approved', signed_tx = NULL, signature = NULL WHERE transaction_id = ?", id);
  await markRestored();
  const { log, lines } = memoryLogger();
  const reconciling = reconcileAfterRestore({ ...world.services, log });
  // Broadcast (as the crashed daemon's last send might) once the reconciliation is waiting.
  const deadline = Date.now() + 10_000;
  while (!lines.some((l) => l.includes('restore: waiting until every transaction signed before the restore has landed or expired'))) {
    if (Date.now() > deadline) throw new Error('the reconciliation never started waiting');
    await Bun.sleep(20);
  }
  await world.services.chain.sendRawTransaction(signed.signed_tx);
  const summary = await reconciling;
  expect(summary?.settledFromChain).toEqual([id]);
  expect(await db.get<{ status: string; signature: string }>('SELECT status, signature FROM transactions WHERE transaction_id = ?', id)).toEqual({ status: 'completed', signature: signed.signature });
});

test('a paylink paid by one of our agents after the backup is paid again after the restore, and cannot be paid twice', async () => {
  const { db } = world.services;
  const link = await bob.api.call<{ request_id: string }>('bot', 'create_payment_request', { description: 'after the backup', amount: '3' });
  const paid = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { payment_request_id: link.request_id });
  expect((await confirmSignSubmit(alice.api, alice.profile, paid.transaction_id)).status).toBe('completed');
  // The backup knows neither the payment nor its outcome: the paylink was still open then.
  await db.run("UPDATE payment_requests SET status = 'open', paid_amount = NULL, payer = NULL, paid_via = NULL, signature = NULL, transaction_id = NULL, paid_at = NULL WHERE request_id = ?", link.request_id);
  await db.run('DELETE FROM events WHERE data LIKE ?', `%${paid.transaction_id}%`);
  await db.run('DELETE FROM sign_sessions WHERE transaction_id = ?', paid.transaction_id);
  await db.run('DELETE FROM transactions WHERE transaction_id = ? OR (wallet_id = ? AND payment_request_id = ?)', paid.transaction_id, bob.walletId, link.request_id);
  await markRestored();
  const summary = await reconcileAfterRestore(world.services);
  expect(summary?.recoveredFromChain).toEqual([paid.transaction_id]);
  const row = await bob.api.call<{ status: string; paid_via: string }>('bot', 'get_payment_request', { request_id: link.request_id });
  expect(row).toMatchObject({ status: 'paid', paid_via: 'wallet' });
  const again = await alice.api.call('bot', 'pay', { payment_request_id: link.request_id }).catch((e) => e);
  expect(again.errorCode).toBe('INVALID_STATUS');
});
