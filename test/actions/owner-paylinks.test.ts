/**
 * The owner's `paylinks` action (issue 43: the owner sees the agents' open paylinks without the
 * agent's key): the paylinks of the owner's claimed wallets, newest first, optionally one wallet,
 * paged and filtered like `fund_requests`; another owner's wallet is NOT_FOUND.
 */
import { describe, expect, test } from 'bun:test';
import { getBase58Decoder } from '@solana/kit';
import { newId } from '../../src/contract/ids.ts';
import { insertPaylink } from '../../src/db/paylinks.ts';
import type { Services } from '../../src/services.ts';
import { addWallet, claimFor, ownerCall, ownerWorld, tokenFor } from './fixtures.ts';

const HOUR = 3_600_000;
let codes = 0;

async function addPaylink(services: Services, walletId: string, o: { description: string; amount?: bigint; expiresInMs?: number; status?: 'paid' | 'cancelled' }) {
  const now = services.now().getTime();
  const requestId = newId('paymentRequest');
  await insertPaylink(services.db, {
    request_id: requestId,
    short_code: `k7qm4tzp${String(codes++).padStart(2, '0')}`,
    payee: { kind: 'wallet', id: walletId },
    description: o.description,
    amount: o.amount ?? 1_000_000n,
    items: null,
    reference: null,
    reference_key: getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32))),
    reveal_owner: false,
    expires_at: now + (o.expiresInMs ?? 24 * HOUR),
    now,
  });
  if (o.status) await services.db.run('UPDATE payment_requests SET status = ? WHERE request_id = ?', o.status, requestId);
  return requestId;
}

async function world() {
  const w = ownerWorld();
  const a1 = await addWallet(w.services, { name: 'Alpha One' });
  const a2 = await addWallet(w.services, { name: 'Alpha Two' });
  const b1 = await addWallet(w.services, { name: 'Beta One' });
  await claimFor(w.services, a1.walletId, 'a@example.com');
  await claimFor(w.services, a2.walletId, 'a@example.com');
  await claimFor(w.services, b1.walletId, 'b@example.com');
  const first = await addPaylink(w.services, a1.walletId, { description: 'Breakfast order 77', amount: 12_000_000n });
  w.advance(1000);
  const paid = await addPaylink(w.services, a1.walletId, { description: 'Paid already', status: 'paid' });
  w.advance(1000);
  const second = await addPaylink(w.services, a2.walletId, { description: 'Lunch', expiresInMs: 2 * HOUR });
  w.advance(1000);
  const others = await addPaylink(w.services, b1.walletId, { description: 'Beta sells' });
  return { w, a1, a2, b1, first, paid, second, others, tokenA: await tokenFor(w.services, 'a@example.com') };
}

describe('owner paylinks', () => {
  test("lists the paylinks of all the owner's wallets newest first, each with its wallet and checkout page, never another owner's", async () => {
    const { w, a1, a2, first, paid, second, tokenA } = await world();
    const res = await ownerCall(w, tokenA, 'paylinks');
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({ total: 3, limit: 20, offset: 0 });
    expect(data.items.map((i: any) => i.request_id)).toEqual([second, paid, first]);
    expect(data.items[2]).toMatchObject({ wallet_id: a1.walletId, wallet_name: 'Alpha One', wallet_username: a1.username, description: 'Breakfast order 77', amount: 12, status: 'open' });
    expect(data.items[2].url).toMatch(/\/pay\/k7qm4tzp/);
    expect(data.items[0].wallet_id).toBe(a2.walletId);
    expect(JSON.stringify(data)).not.toContain('Beta sells');
  });

  test('one wallet, a status and a page: open lists what a payer can still pay (not an expired one the job has not moved yet)', async () => {
    const { w, a1, first, second, tokenA } = await world();
    const one = await ownerCall(w, tokenA, 'paylinks', { wallet_id: a1.walletId, status: 'open' });
    expect(one.body.data.items.map((i: any) => i.request_id)).toEqual([first]);
    const page = await ownerCall(w, tokenA, 'paylinks', { limit: 1, offset: 1 });
    expect(page.body.data).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.body.data.items).toHaveLength(1);
    w.advance(3 * HOUR);
    const open = await ownerCall(w, tokenA, 'paylinks', { status: 'open' });
    expect(open.body.data.items.map((i: any) => i.request_id)).toEqual([first]);
    const expired = await ownerCall(w, tokenA, 'paylinks', { status: 'expired' });
    expect(expired.body.data.items.map((i: any) => [i.request_id, i.status])).toEqual([[second, 'expired']]);
  });

  test("another owner's wallet id is NOT_FOUND, as fund_requests answers it", async () => {
    const { w, b1, tokenA } = await world();
    const res = await ownerCall(w, tokenA, 'paylinks', { wallet_id: b1.walletId });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    expect(JSON.stringify(res.body)).not.toContain('Beta sells');
  });

  test('a status a paylink never has is a VALIDATION_ERROR', async () => {
    const { w, tokenA } = await world();
    const res = await ownerCall(w, tokenA, 'paylinks', { status: 'fulfilled' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toContain('/status');
  });
});
