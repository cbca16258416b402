import { describe, expect, test } from 'bun:test';
import { addWallet, botCall, claimFor, ownerCall, ownerWorld, tokenFor, type OwnerWorld } from './fixtures.ts';

/** Owner A with a claimed wallet, owner B with another; tokens for both. */
async function world() {
  const w = ownerWorld();
  const a = await addWallet(w.services, { name: 'Alpha' });
  const b = await addWallet(w.services, { name: 'Beta' });
  await claimFor(w.services, a.walletId, 'a@example.com');
  await claimFor(w.services, b.walletId, 'b@example.com');
  return { w, a, b, tokenA: await tokenFor(w.services, 'a@example.com'), tokenB: await tokenFor(w.services, 'b@example.com') };
}

async function exportOf(w: OwnerWorld, apiKey: string): Promise<{ export_id: string; import_token: string }> {
  const res = await botCall(w, apiKey, 'wallet_export');
  expect(res.status).toBe(200);
  return { export_id: res.body.data.export_id, import_token: res.body.data.import_token };
}

const events = async (w: OwnerWorld, walletId: string) =>
  (await w.services.db.all<{ type: string; data: string }>('SELECT type, data FROM events WHERE wallet_id = ? ORDER BY seq', walletId)).map((e) => ({ type: e.type, data: JSON.parse(e.data) }));

const changes = async (w: OwnerWorld) => Number(((await w.services.db.get('SELECT total_changes() AS n')) as { n: bigint }).n);

describe('revoke_export', () => {
  test("the agent's revocation is in its event feed and the owner's audit log; the key is never released again", async () => {
    const { w, a, tokenA } = await world();
    const exp = await exportOf(w, a.apiKey);
    const res = await botCall(w, a.apiKey, 'revoke_export', { export_id: exp.export_id });
    expect(res.body.data).toMatchObject({ export_id: exp.export_id, wallet_id: a.walletId, revoked_at: new Date(w.clock.ms).toISOString() });
    expect(await events(w, a.walletId)).toContainEqual({ type: 'export.revoked', data: { export_id: exp.export_id, by: 'agent' } });
    const audit = await ownerCall(w, tokenA, 'audit_log', { wallet_id: a.walletId });
    expect(audit.body.data.items[0]).toMatchObject({ kind: 'export.revoked', actor: 'agent', data: { export_id: exp.export_id } });
    w.advance(48 * 3_600_000);
    const imp = await botCall(w, '', 'wallet_import_key', exp);
    expect(imp.status).toBe(409);
    expect(imp.body.error).toMatchObject({ code: 'INVALID_STATUS', revoked_at: res.body.data.revoked_at });
    expect(imp.body.error.file_key).toBeUndefined();
  });

  test('an export of another wallet or another owner is NOT_FOUND and changes nothing', async () => {
    const { w, a, b, tokenB } = await world();
    const exp = await exportOf(w, a.apiKey);
    const before = await changes(w);
    expect((await botCall(w, b.apiKey, 'revoke_export', { export_id: exp.export_id })).body.error.code).toBe('NOT_FOUND');
    expect((await ownerCall(w, tokenB, 'revoke_export', { export_id: exp.export_id })).body.error.code).toBe('NOT_FOUND');
    expect(await changes(w)).toBe(before);
    expect((await botCall(w, '', 'wallet_import_key', exp)).status).toBe(200);
  });
});

describe('exports (owner)', () => {
  test('lists newest first with imports and pages', async () => {
    const { w, a, tokenA } = await world();
    const first = await exportOf(w, a.apiKey);
    w.advance(1000);
    const second = await exportOf(w, a.apiKey);
    await botCall(w, '', 'wallet_import_key', first);
    await botCall(w, '', 'wallet_import_key', first);
    const page1 = await ownerCall(w, tokenA, 'exports', { wallet_id: a.walletId, limit: 1 });
    expect(page1.body.data).toMatchObject({ total: 2, limit: 1, offset: 0, items: [{ export_id: second.export_id, imports: 0, last_import_at: null, active: true }] });
    const page2 = await ownerCall(w, tokenA, 'exports', { wallet_id: a.walletId, limit: 1, offset: 1 });
    expect(page2.body.data.items).toEqual([
      { export_id: first.export_id, created_at: new Date(w.clock.ms - 1000).toISOString(), active: true, revoked_at: null, imports: 2, last_import_at: new Date(w.clock.ms).toISOString() },
    ]);
  });
});

describe('rotate_api_key', () => {
  test('the old key is 401 at once, the new one opens the same wallet; live exports are revoked with it, an earlier revocation keeps its time', async () => {
    const { w, a, tokenA } = await world();
    const revokedBefore = await exportOf(w, a.apiKey);
    await botCall(w, a.apiKey, 'revoke_export', { export_id: revokedBefore.export_id });
    w.advance(1000);
    const live = await exportOf(w, a.apiKey);
    w.advance(60_000);
    const res = await ownerCall(w, tokenA, 'rotate_api_key', { wallet_id: a.walletId });
    expect(res.status).toBe(200);
    const newKey = res.body.data.api_key as string;
    expect(res.body.data).toMatchObject({ wallet_id: a.walletId, revoked_exports: [live.export_id] });

    expect((await botCall(w, a.apiKey, 'info')).status).toBe(401);
    expect((await botCall(w, newKey, 'info')).body.data.wallet_id).toBe(a.walletId);
    const listed = (await ownerCall(w, tokenA, 'exports', { wallet_id: a.walletId })).body.data.items;
    expect(listed.map((e: any) => [e.export_id, e.revoked_at])).toEqual([
      [live.export_id, new Date(w.clock.ms).toISOString()],
      [revokedBefore.export_id, new Date(w.clock.ms - 61_000).toISOString()],
    ]);
    expect((await events(w, a.walletId)).at(-1)).toEqual({ type: 'api_key.rotated', data: { revoked_exports: [live.export_id] } });
    expect((await botCall(w, '', 'wallet_import_key', live)).body.error.message).toContain("rotated the wallet's API key");
  });

  test("another owner's wallet is NOT_FOUND and its key keeps working", async () => {
    const { w, b, tokenA } = await world();
    const before = await changes(w);
    expect((await ownerCall(w, tokenA, 'rotate_api_key', { wallet_id: b.walletId })).body.error.code).toBe('NOT_FOUND');
    expect(await changes(w)).toBe(before);
    expect((await botCall(w, b.apiKey, 'info')).status).toBe(200);
  });
});
