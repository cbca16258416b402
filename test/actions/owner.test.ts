import { describe, expect, test } from 'bun:test';
import { getApproval } from '../../src/db/approvals.ts';
import { loadEffectiveRails } from '../../src/db/guard-rails.ts';
import { addPendingPayment, addWallet, claimFor, ownerCall, ownerWorld, tokenFor, type OwnerWorld } from './fixtures.ts';

const HOUR = 3_600_000;

/** Two owners, A with two wallets, B with one; tokens for both. */
async function twoOwners() {
  const w = ownerWorld();
  const a1 = await addWallet(w.services, { name: 'Alpha One' });
  const a2 = await addWallet(w.services, { name: 'Alpha Two' });
  const b1 = await addWallet(w.services, { name: 'Beta One' });
  const unclaimed = await addWallet(w.services, { name: 'Nobody Yet' });
  const ownerA = await claimFor(w.services, a1.walletId, 'a@example.com');
  await claimFor(w.services, a2.walletId, 'a@example.com');
  const ownerB = await claimFor(w.services, b1.walletId, 'b@example.com');
  return { w, a1, a2, b1, unclaimed, ownerA, ownerB, tokenA: await tokenFor(w.services, 'a@example.com'), tokenB: await tokenFor(w.services, 'b@example.com') };
}

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.how_to_fix.length).toBeGreaterThan(0);
}

const events = async (w: OwnerWorld, walletId: string) =>
  await w.services.db.all<{ type: string; data: string }>('SELECT type, data FROM events WHERE wallet_id = ? ORDER BY seq', walletId);

describe('owner authentication', () => {
  test('a bot key on /owner is 401 naming the wallet_owner_ prefix', async () => {
    const { w, a1 } = await twoOwners();
    const res = await ownerCall(w, a1.apiKey, 'wallets');
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.body.error.how_to_fix).toContain('wallet_owner_');
  });

  test('an unknown owner token is 401', async () => {
    const { w } = await twoOwners();
    expectError(await ownerCall(w, await tokenFor(ownerWorld().services, 'x@example.com'), 'wallets'), 401, 'UNAUTHORIZED');
  });

  test('an owner token on /bot is 401', async () => {
    const { w, tokenA } = await twoOwners();
    const res = await w.app.handle(new Request('http://localhost/v1/bot', { method: 'POST', headers: { authorization: `Bearer ${tokenA}` }, body: '{"action":"balance"}' }));
    expect(res.status).toBe(401);
  });
});

describe('wallets', () => {
  test('lists only the caller’s claimed wallets with their pending approvals', async () => {
    const { w, a1, a2, b1, tokenA } = await twoOwners();
    await addPendingPayment(w.services, a1.walletId);
    await addPendingPayment(w.services, b1.walletId);
    const res = await ownerCall(w, tokenA, 'wallets');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ total: 2, limit: 20, offset: 0 });
    const byId = Object.fromEntries(res.body.data.items.map((i: any) => [i.wallet_id, i]));
    expect(Object.keys(byId).sort()).toEqual([a1.walletId, a2.walletId].sort());
    expect(byId[a1.walletId].pending_approvals).toBe(1);
    expect(JSON.stringify(res.body)).not.toContain(b1.walletId);
  });

  test('a limit above 100 is a VALIDATION_ERROR', async () => {
    const { w, tokenA } = await twoOwners();
    expectError(await ownerCall(w, tokenA, 'wallets', { limit: 101 }), 400, 'VALIDATION_ERROR');
  });
});

describe('guard rails', () => {
  test('get_guard_rails of a wallet without rails is empty with nothing pending', async () => {
    const { w, a1, tokenA } = await twoOwners();
    const res = await ownerCall(w, tokenA, 'get_guard_rails', { wallet_id: a1.walletId });
    expect(res.body.data).toMatchObject({ wallet_id: a1.walletId, rails: {}, pending: null });
  });

  test('another owner’s wallet and an unclaimed wallet are NOT_FOUND', async () => {
    const { w, b1, unclaimed, tokenA } = await twoOwners();
    for (const walletId of [b1.walletId, unclaimed.walletId]) {
      const res = await ownerCall(w, tokenA, 'get_guard_rails', { wallet_id: walletId });
      expectError(res, 404, 'NOT_FOUND');
      expect(JSON.stringify(res.body)).not.toContain('Beta');
    }
  });

  test('set_guard_rails applies a tightening at once, emits guard_rails.updated and writes the audit log', async () => {
    const { w, a1, tokenA } = await twoOwners();
    const res = await ownerCall(w, tokenA, 'set_guard_rails', { wallet_id: a1.walletId, rails: { budgets: { daily: '10.5' }, approval_above: 5 } });
    expect(res.status).toBe(200);
    expect(res.body.data.rails).toEqual({ approval_above: 5, budgets: { daily: 10.5 } });
    expect(res.body.data.pending).toBeNull();
    expect(await loadEffectiveRails(w.services.db, a1.walletId, w.services.now())).toEqual({ approval_above: 5_000_000n, budgets: { daily: 10_500_000n } });
    const ev = (await events(w, a1.walletId)).filter((e) => e.type === 'guard_rails.updated');
    expect(ev).toHaveLength(1);
    expect(JSON.parse(ev[0]!.data).rails).toEqual({ approval_above: 5, budgets: { daily: 10.5 } });
    const audit = await ownerCall(w, tokenA, 'audit_log', { wallet_id: a1.walletId });
    expect(audit.body.data.items[0]).toMatchObject({ kind: 'guard_rails.set', actor: expect.stringContaining('via api') });
  });

  test('set_guard_rails refuses an invalid document naming every bad field, and writes nothing', async () => {
    const { w, a1, tokenA } = await twoOwners();
    const res = await ownerCall(w, tokenA, 'set_guard_rails', { wallet_id: a1.walletId, rails: { budgets: { daily: '1.2345678' }, frozen: 'yes', nonsense: 1 } });
    expectError(res, 400, 'VALIDATION_ERROR');
    const fields = res.body.error.errors.map((e: any) => e.field).sort();
    expect(fields).toEqual(['/rails/budgets/daily', '/rails/frozen', '/rails/nonsense']);
    expect(res.body.error.message).toContain('budgets.daily');
    expect(await w.services.db.get('SELECT count(*) AS n FROM guard_rails')).toEqual({ n: 0n });
  });

  test('set_guard_rails on another owner’s wallet is NOT_FOUND and changes nothing', async () => {
    const { w, b1, tokenA } = await twoOwners();
    expectError(await ownerCall(w, tokenA, 'set_guard_rails', { wallet_id: b1.walletId, rails: { frozen: true } }), 404, 'NOT_FOUND');
    expect(await loadEffectiveRails(w.services.db, b1.walletId, w.services.now())).toEqual({});
  });

  test('a loosening waits loosen_delay_hours (pending with apply_at), then applies; a tightening in between applies at once', async () => {
    const { w, a1, tokenA } = await twoOwners();
    await ownerCall(w, tokenA, 'set_guard_rails', { wallet_id: a1.walletId, rails: { budgets: { daily: 10 }, loosen_delay_hours: 24 } });
    const loosened = await ownerCall(w, tokenA, 'set_guard_rails', { wallet_id: a1.walletId, rails: { budgets: { daily: 50 }, max_per_payment: 5, loosen_delay_hours: 24 } });
    const applyAt = new Date(w.clock.ms + 24 * HOUR).toISOString();
    expect(loosened.body.data).toMatchObject({
      rails: { budgets: { daily: 10 }, max_per_payment: 5, loosen_delay_hours: 24 },
      pending: { rails: { budgets: { daily: 50 }, max_per_payment: 5, loosen_delay_hours: 24 }, apply_at: applyAt },
    });
    expect((await loadEffectiveRails(w.services.db, a1.walletId, w.services.now())).budgets).toEqual({ daily: 10_000_000n });

    // Saving the same document again keeps the scheduled time.
    w.advance(HOUR);
    const again = await ownerCall(w, tokenA, 'set_guard_rails', { wallet_id: a1.walletId, rails: { budgets: { daily: 50 }, max_per_payment: 5, loosen_delay_hours: 24 } });
    expect(again.body.data.pending.apply_at).toBe(applyAt);

    w.advance(23 * HOUR - 1);
    expect((await ownerCall(w, tokenA, 'get_guard_rails', { wallet_id: a1.walletId })).body.data.rails.budgets).toEqual({ daily: 10 });
    w.advance(1);
    const after = await ownerCall(w, tokenA, 'get_guard_rails', { wallet_id: a1.walletId });
    expect(after.body.data).toMatchObject({ rails: { budgets: { daily: 50 }, max_per_payment: 5 }, pending: null });
    expect((await loadEffectiveRails(w.services.db, a1.walletId, w.services.now())).budgets).toEqual({ daily: 50_000_000n });
  });

  test('removing the delay itself is a loosening that waits for the old delay', async () => {
    const { w, a1, tokenA } = await twoOwners();
    await ownerCall(w, tokenA, 'set_guard_rails', { wallet_id: a1.walletId, rails: { frozen: true, loosen_delay_hours: 2 } });
    const res = await ownerCall(w, tokenA, 'set_guard_rails', { wallet_id: a1.walletId, rails: {} });
    expect(res.body.data.rails).toEqual({ frozen: true, loosen_delay_hours: 2 });
    expect(res.body.data.pending).toEqual({ rails: {}, apply_at: new Date(w.clock.ms + 2 * HOUR).toISOString() });
  });
});

describe('approvals', () => {
  test('approvals lists the pending approvals of the caller’s wallets only', async () => {
    const { w, a1, b1, tokenA, tokenB } = await twoOwners();
    const mine = await addPendingPayment(w.services, a1.walletId);
    const theirs = await addPendingPayment(w.services, b1.walletId);
    const res = await ownerCall(w, tokenA, 'approvals', { status: 'pending' });
    expect(res.body.data.items.map((i: any) => i.approval_id)).toEqual([mine.approvalId]);
    expect(res.body.data.items[0]).toMatchObject({ amount: 25, recipient: 'bob-1234', wallet_name: 'Alpha One', status: 'pending', transaction_id: mine.transactionId });
    expect(JSON.stringify(res.body)).not.toContain(theirs.approvalId);
    const other = await ownerCall(w, tokenB, 'approvals', {});
    expect(other.body.data.items.map((i: any) => i.approval_id)).toEqual([theirs.approvalId]);
  });

  test('filtering approvals by another owner’s wallet is NOT_FOUND', async () => {
    const { w, b1, tokenA } = await twoOwners();
    expectError(await ownerCall(w, tokenA, 'approvals', { wallet_id: b1.walletId }), 404, 'NOT_FOUND');
  });

  test('approve moves the approval and its transaction to approved, with event and audit entry', async () => {
    const { w, a1, tokenA } = await twoOwners();
    const p = await addPendingPayment(w.services, a1.walletId);
    const res = await ownerCall(w, tokenA, 'approve', { approval_id: p.approvalId });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ approval_id: p.approvalId, status: 'approved', decided_by: expect.stringMatching(/^owner:own_.* via api$/) });
    expect(await w.services.db.get('SELECT status FROM transactions WHERE transaction_id = ?', p.transactionId)).toEqual({ status: 'approved' });
    expect((await events(w, a1.walletId)).map((e) => e.type)).toContain('payment.approved');
    const audit = await ownerCall(w, tokenA, 'audit_log', { wallet_id: a1.walletId });
    expect(audit.body.data.items[0]).toMatchObject({ kind: 'approval.approved', data: { approval_id: p.approvalId } });
  });

  test('approving twice is INVALID_STATUS naming the current status', async () => {
    const { w, a1, tokenA } = await twoOwners();
    const p = await addPendingPayment(w.services, a1.walletId);
    await ownerCall(w, tokenA, 'approve', { approval_id: p.approvalId });
    const res = await ownerCall(w, tokenA, 'reject', { approval_id: p.approvalId });
    expectError(res, 409, 'INVALID_STATUS');
    expect(res.body.error.status).toBe('approved');
  });

  test('another owner cannot approve or reject: NOT_FOUND and nothing changes', async () => {
    const { w, a1, tokenB } = await twoOwners();
    const p = await addPendingPayment(w.services, a1.walletId);
    for (const action of ['approve', 'reject']) {
      const res = await ownerCall(w, tokenB, action, { approval_id: p.approvalId });
      expectError(res, 404, 'NOT_FOUND');
    }
    expect((await getApproval(w.services.db, p.approvalId))?.status).toBe('pending');
  });

  test('reject moves the transaction to rejected; an unknown approval is NOT_FOUND', async () => {
    const { w, a1, tokenA } = await twoOwners();
    const p = await addPendingPayment(w.services, a1.walletId);
    expect((await ownerCall(w, tokenA, 'reject', { approval_id: p.approvalId })).body.data.status).toBe('rejected');
    expect(await w.services.db.get('SELECT status FROM transactions WHERE transaction_id = ?', p.transactionId)).toEqual({ status: 'rejected' });
    expectError(await ownerCall(w, tokenA, 'reject', { approval_id: 'apr_00000000000000000000000000' }), 404, 'NOT_FOUND');
  });

  test('an approval whose transaction no longer waits is INVALID_STATUS', async () => {
    const { w, a1, tokenA } = await twoOwners();
    const p = await addPendingPayment(w.services, a1.walletId);
    await w.services.db.run("UPDATE transactions SET status = 'expired' WHERE transaction_id = ?", p.transactionId);
    const res = await ownerCall(w, tokenA, 'approve', { approval_id: p.approvalId });
    expectError(res, 409, 'INVALID_STATUS');
    expect(res.body.error.message).toContain('no longer waits');
  });
});

describe('fund requests (arrive with a later issue)', () => {
  test('fund_requests is an empty list of the list shape', async () => {
    const { w, a1, tokenA } = await twoOwners();
    const res = await ownerCall(w, tokenA, 'fund_requests', { wallet_id: a1.walletId, limit: 5 });
    expect(res.body.data).toMatchObject({ items: [], total: 0, limit: 5, offset: 0 });
  });

  test('fund_requests of another owner’s wallet is NOT_FOUND', async () => {
    const { w, b1, tokenA } = await twoOwners();
    expectError(await ownerCall(w, tokenA, 'fund_requests', { wallet_id: b1.walletId }), 404, 'NOT_FOUND');
  });

  test('resolve_fund_request is NOT_FOUND; a bad decision is a VALIDATION_ERROR', async () => {
    const { w, tokenA } = await twoOwners();
    expectError(await ownerCall(w, tokenA, 'resolve_fund_request', { fund_request_id: 'fr_00000000000000000000000000', decision: 'declined' }), 404, 'NOT_FOUND');
    expectError(await ownerCall(w, tokenA, 'resolve_fund_request', { fund_request_id: 'fr_00000000000000000000000000', decision: 'maybe' }), 400, 'VALIDATION_ERROR');
  });
});

describe('audit log', () => {
  test('lists rail changes and decisions newest first; another owner’s wallet is NOT_FOUND', async () => {
    const { w, a1, tokenA, tokenB } = await twoOwners();
    await ownerCall(w, tokenA, 'set_guard_rails', { wallet_id: a1.walletId, rails: { approval_above: 1 } });
    const p = await addPendingPayment(w.services, a1.walletId);
    await ownerCall(w, tokenA, 'reject', { approval_id: p.approvalId });
    const res = await ownerCall(w, tokenA, 'audit_log', { wallet_id: a1.walletId });
    expect(res.body.data.items.map((i: any) => i.kind)).toEqual(['approval.rejected', 'guard_rails.set']);
    expect(res.body.data.total).toBe(2);
    expectError(await ownerCall(w, tokenB, 'audit_log', { wallet_id: a1.walletId }), 404, 'NOT_FOUND');
  });
});

describe('tokens', () => {
  test('tokens lists the caller’s tokens, marking the current one, never the secret', async () => {
    const { w, tokenA } = await twoOwners();
    await tokenFor(w.services, 'a@example.com');
    const res = await ownerCall(w, tokenA, 'tokens');
    expect(res.body.data.total).toBe(2);
    expect(res.body.data.items.filter((t: any) => t.current)).toHaveLength(1);
    expect(JSON.stringify(res.body)).not.toContain(tokenA.slice(13));
  });

  test('revoke_token revokes: the token stops working at once', async () => {
    const { w, tokenA } = await twoOwners();
    const second = await tokenFor(w.services, 'a@example.com');
    const list = await ownerCall(w, second, 'tokens');
    const id = list.body.data.items.find((t: any) => t.current).token_id;
    expect((await ownerCall(w, tokenA, 'revoke_token', { token_id: id })).status).toBe(200);
    expectError(await ownerCall(w, second, 'wallets'), 401, 'UNAUTHORIZED');
    expectError(await ownerCall(w, tokenA, 'revoke_token', { token_id: id }), 409, 'INVALID_STATUS');
  });

  test('another owner’s token cannot be revoked: NOT_FOUND', async () => {
    const { w, tokenA, tokenB } = await twoOwners();
    const idB = (await ownerCall(w, tokenB, 'tokens')).body.data.items[0].token_id;
    expectError(await ownerCall(w, tokenA, 'revoke_token', { token_id: idB }), 404, 'NOT_FOUND');
    expect((await ownerCall(w, tokenB, 'wallets')).status).toBe(200);
  });
});
