/**
 * On PostgreSQL the database, not the event loop, keeps money's invariants: 16 agents' requests
 * race on different pool connections. A budget is read, checked and reserved in one transaction;
 * SERIALIZABLE makes the racing reservations of one wallet's daily budget add up to at most the
 * budget (the losers run again and see the winners). The same race under READ COMMITTED reserves
 * past the budget: isolation is what protects it. Runs when the suite runs on PostgreSQL
 * (AW_TEST_PG_URL); the SQLite suite proves the same budget with its single writer.
 */
import { afterAll, describe, expect, test } from 'bun:test';
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
async function race(world: World, round: number): Promise<{ reserved: number; refused: number }> {
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
  return { reserved: outcomes.filter((s) => s === 'pre_approved').length, refused: outcomes.filter((s) => s === 'rejected').length };
}

describe.skipIf(!PG_SERVER)('on PostgreSQL, 16 concurrent payers against one daily budget', () => {
  test('SERIALIZABLE: every round reserves exactly what fits the budget, the rest is rejected', async () => {
    const world = await startWorld();
    worlds.push(world);
    for (let round = 0; round < 3; round++) expect(await race(world, round)).toEqual({ reserved: FIT, refused: PAYERS - FIT });
  }, 120_000);

  test('READ COMMITTED (isolation removed): the same race reserves past the budget', async () => {
    const world = await startWorld({ isolation: 'read committed' });
    worlds.push(world);
    const reserved: number[] = [];
    // The race is lost as soon as two reservations overlap; a few rounds make that certain.
    for (let round = 0; round < 5 && !reserved.some((r) => r > FIT); round++) reserved.push((await race(world, round)).reserved);
    expect(Math.max(...reserved)).toBeGreaterThan(FIT);
  }, 120_000);
});
