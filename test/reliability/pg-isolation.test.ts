/**
 * On PostgreSQL the database, not the event loop, keeps money's invariants: 16 requests race on
 * different pool connections. A budget is read, checked and reserved in one transaction, as is the
 * account setup fee of a recipient without a token account; every transaction takes the store's
 * writer lock first (an advisory lock, src/db/pg-store.ts), so racing reservations add up to at
 * most the budget and one payment carries the fee. The same races without the lock reserve past
 * the budget and charge the fee more than once: the database's lock is what protects them. Runs
 * when the suite runs on PostgreSQL (AW_TEST_PG_URL); the SQLite suite proves the same with its
 * single writer.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { generateKeyPairSigner } from '@solana/kit';
import { ApiError } from '../../src/client/api.ts';
import { PG_SERVER } from '../helpers/ledger.ts';
import { startWorld, type World } from '../helpers/world.ts';

const PAYERS = 16;
const BUDGET_USDC = 10;
/** Each pay is 1 USDC + the 0.01 minimum fee: at most 9 fit a 10-USDC daily budget. */
const FIT = 9;

const worlds: World[] = [];
afterAll(async () => {
  for (const w of worlds) await w.stop();
});

/** 16 racing pays of 1 USDC against one wallet's daily budget; how many were reserved (pre-approved). */
async function race(world: World, round: number): Promise<{ reserved: number; refused: number; outcomes: string[] }> {
  const payer = await world.agent(`Payer ${round}`);
  const payee = await world.agent(`Payee ${round}`);
  const owner = await world.claim(payer.walletId, `owner${round}@example.com`);
  await world.claim(payee.walletId, `payee${round}@example.com`);
  await world.fund(payer.address, 100_000_000n);
  await owner.call('owner', 'set_guard_rails', { wallet_id: payer.walletId, rails: { budgets: { daily: String(BUDGET_USDC) }, on_budget_exceeded: 'reject' } });
  const outcomes = await Promise.all(
    Array.from({ length: PAYERS }, () =>
      payer.api.call<{ status: string }>('bot', 'pay', { to: payee.username, amount: 1 }).then(
        (r) => r.status,
        (err: unknown) => (err instanceof ApiError ? err.errorCode : 'error'),
      ),
    ),
  );
  return { reserved: outcomes.filter((s) => s === 'pre_approved').length, refused: outcomes.filter((s) => s === 'rejected').length, outcomes };
}

/** 16 racing pays from one wallet to a fresh address without a USDC account; how many carry its setup fee. */
async function feeRace(world: World, round: number): Promise<number> {
  const payer = await world.agent(`Fee payer ${round}`);
  await world.claim(payer.walletId, `fee${round}@example.com`);
  await world.fund(payer.address, 100_000_000n);
  const raw = (await generateKeyPairSigner()).address;
  const intents = await Promise.all(Array.from({ length: PAYERS }, () => payer.api.call<{ fee_breakdown: { account_setup_fee: number } }>('bot', 'pay', { to: raw, amount: 1 })));
  return intents.filter((i) => i.fee_breakdown.account_setup_fee > 0).length;
}

describe.skipIf(!PG_SERVER)('on PostgreSQL, 16 concurrent payers', () => {
  test('with the writer lock: every round reserves exactly what fits the budget, the rest is rejected', async () => {
    const world = await startWorld();
    worlds.push(world);
    for (let round = 0; round < 3; round++) {
      const r = await race(world, round);
      // Never past the budget; exactly the budget when every pay was decided (none refused for load).
      expect(r.reserved).toBeLessThanOrEqual(FIT);
      expect(r.reserved).toBeGreaterThan(0);
      if (r.reserved + r.refused === PAYERS) expect(r.reserved).toBe(FIT);
      else console.log(`round ${round}: pays not decided by the rails: ${r.outcomes.filter((s) => s !== 'pre_approved' && s !== 'rejected').join(', ')}`);
    }
  }, 120_000);

  test('without the writer lock: the same race reserves past the budget', async () => {
    const world = await startWorld({ pgWriterLock: false });
    worlds.push(world);
    const reserved: number[] = [];
    // The race is lost as soon as two reservations overlap; a few rounds make that certain.
    for (let round = 0; round < 5 && !reserved.some((r) => r > FIT); round++) reserved.push((await race(world, round)).reserved);
    expect(Math.max(...reserved)).toBeGreaterThan(FIT);
  }, 120_000);

  test('with the writer lock: one of 16 racing payments to a new address carries its account setup fee', async () => {
    const world = worlds[0]!;
    for (let round = 0; round < 3; round++) expect(await feeRace(world, round)).toBe(1);
  }, 120_000);

  test('without the writer lock, what a constraint guards still holds: 16 pays with one idempotency key make one intent, 6 decisions of one approval leave one', async () => {
    const world = worlds[1]!;
    const payer = await world.agent('Keyed payer');
    const payee = await world.agent('Keyed payee');
    const owner = await world.claim(payer.walletId, 'keyed@example.com');
    await world.claim(payee.walletId, 'keyed-payee@example.com');
    await world.fund(payer.address, 100_000_000n);
    // The unique index on (wallet, type, idempotency key): the database's own guard.
    const same = await Promise.all(Array.from({ length: PAYERS }, () => payer.api.call<{ transaction_id: string }>('bot', 'pay', { to: payee.username, amount: 1 }, { idempotencyKey: 'one-order' }).catch((err: ApiError) => err)));
    const ids = new Set(same.filter((r): r is { transaction_id: string } => !(r instanceof ApiError)).map((r) => r.transaction_id));
    expect(ids.size).toBe(1);
    // A decision moves an approval only from pending (a conditional UPDATE).
    await owner.call('owner', 'set_guard_rails', { wallet_id: payer.walletId, rails: { approval_above: '5' } });
    const big = await payer.api.call<{ approval_id: string }>('bot', 'pay', { to: payee.username, amount: 6 });
    const decided = await Promise.all(['approve', 'reject', 'approve', 'reject', 'approve', 'reject'].map((a) => owner.call('owner', a, { approval_id: big.approval_id }).then(() => 'decided', (err: ApiError) => err.errorCode)));
    expect(decided.filter((d) => d === 'decided')).toHaveLength(1);
  }, 120_000);

  test('without the writer lock: the same race charges the setup fee more than once', async () => {
    const world = worlds[1]!;
    const carried: number[] = [];
    for (let round = 0; round < 5 && !carried.some((n) => n > 1); round++) carried.push(await feeRace(world, round));
    expect(Math.max(...carried)).toBeGreaterThan(1);
  }, 120_000);
});
