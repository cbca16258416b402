import { describe, expect, test } from 'bun:test';
import { newId } from '../../src/contract/ids.ts';
import { computeUsage } from '../../src/db/usage.ts';
import { insertTx, moveTx, outstandingOut, setUnsignedTxAmount, type TxStatus } from '../../src/db/transactions.ts';
import { CATEGORIES, type Category } from '../../src/domain/guardrails.ts';
import { addWallet } from '../actions/fixtures.ts';
import { rng } from '../helpers/random.ts';
import { testServices } from '../helpers/services.ts';

const COUNTING: TxStatus[] = ['pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed'];
// Every move the ledger makes, from → to.
const MOVES: [TxStatus[], TxStatus][] = [
  [['pre_approved', 'approved'], 'pending'],
  [['pending'], 'completed'],
  [['pending'], 'failed'],
  [['pending'], 'pre_approved'],
  [['awaiting_approval'], 'approved'],
  [['awaiting_approval'], 'rejected'],
  [['pre_approved', 'approved', 'awaiting_approval'], 'cancelled'],
  [['pre_approved', 'approved', 'awaiting_approval'], 'expired'],
];

describe('computeUsage', () => {
  test('trigger-kept totals, reservations and 15-minute buckets agree with a model of a random life of payments, withdrawals and deposits (status moves and amount changes)', async () => {
    const seed = 20261122;
    const random = rng(seed);
    const services = testServices();
    const wallets = [await addWallet(services, { name: 'Spender One' }), await addWallet(services, { name: 'Spender Two' })];
    const DAY = 86_400_000;
    const T0 = Date.parse('2030-03-01T00:00:00Z');
    const pick = <T,>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    interface ModelRow { wallet: string; type: string; out: boolean; status: TxStatus; cost: bigint; fees: bigint; category: Category | null; at: number }
    const model = new Map<string, ModelRow>();
    for (let step = 0; step < 1_500; step++) {
      await services.db
        .transaction(async () => {
          if (model.size === 0 || random() < 0.4) {
            const id = newId('transaction');
            const type = pick(['payment', 'payment', 'x402', 'withdrawal', 'deposit'] as const);
            const category: Category | null = type === 'withdrawal' ? 'withdrawal' : type === 'x402' ? 'x402' : type === 'deposit' ? null : pick(['wallet', 'merchant', 'paylink'] as const);
            const row: ModelRow = {
              wallet: pick(wallets).walletId,
              type,
              out: type !== 'deposit',
              status: pick(['pre_approved', 'awaiting_approval', 'rejected', 'completed'] as const),
              cost: 0n,
              fees: 0n,
              category,
              // Spread over 60 days, to the millisecond: bucket edges and window edges both get hit.
              at: T0 + Math.floor(random() * 60 * DAY),
            };
            const amount = BigInt(1 + Math.floor(random() * 5_000_000));
            const fee = BigInt(Math.floor(random() * 1_000));
            const setupFee = random() < 0.2 ? 2_000n : 0n;
            row.fees = fee + setupFee;
            row.cost = amount + row.fees;
            await insertTx(services.db, {
              transaction_id: id,
              wallet_id: row.wallet,
              type,
              direction: row.out ? 'out' : 'in',
              category,
              status: row.status,
              amount,
              fee,
              setup_fee: setupFee,
              now: row.at,
            });
            model.set(id, row);
          } else if (random() < 0.1) {
            // A message built again over a changed balance (a sweep's): the amount moves, the status does not.
            const id = pick([...model.keys()]);
            const amount = BigInt(1 + Math.floor(random() * 5_000_000));
            await setUnsignedTxAmount(services.db, id, amount, T0);
            model.get(id)!.cost = amount + model.get(id)!.fees;
          } else {
            const [from, to] = pick(MOVES);
            const id = pick([...model.keys()]);
            if (await moveTx(services.db, id, from, to, T0)) model.get(id)!.status = to;
          }
        });
    }
    const counts = (r: ModelRow) => r.out && COUNTING.includes(r.status);
    const sum = (rows: ModelRow[]) => rows.reduce((a, r) => a + r.cost, 0n);
    for (const w of wallets) {
      const mine = [...model.values()].filter((r) => r.wallet === w.walletId);
      expect({ seed, outstanding: await outstandingOut(services.db, w.walletId) }).toEqual({ seed, outstanding: sum(mine.filter((r) => r.out && r.status !== 'completed' && COUNTING.includes(r.status))) });
      for (let k = 0; k < 40; k++) {
        // Half the window starts on the 15-minute grid (bucket path), half anywhere (row path).
        const start = () => {
          const t = T0 + Math.floor(random() * 60 * DAY);
          return k % 2 === 0 ? t - (t % 900_000) : t;
        };
        const [daily, weekly, monthly] = [start(), start(), start()];
        const usage = await computeUsage(services.db, w.walletId, { daily: new Date(daily), weekly: new Date(weekly), monthly: new Date(monthly) }, { address: '' });
        const spend = mine.filter((r) => counts(r) && r.type !== 'withdrawal');
        const expected = {
          daily: sum(spend.filter((r) => r.at >= daily)),
          weekly: sum(spend.filter((r) => r.at >= weekly)),
          monthly: sum(spend.filter((r) => r.at >= monthly)),
          total: sum(spend),
          payments_today: spend.filter((r) => r.at >= daily).length,
          by_category: Object.fromEntries(
            CATEGORIES.map((c) => {
              const inCat = mine.filter((r) => counts(r) && r.category === c);
              return [c, { daily: sum(inCat.filter((r) => r.at >= daily)), monthly: sum(inCat.filter((r) => r.at >= monthly)) }];
            }),
          ),
        };
        const { recipient_known: _, ...got } = usage;
        expect({ seed, k, ...got } as Record<string, unknown>).toEqual({ seed, k, ...expected });
      }
    }
  });

  test('windows count only rows since their start; a recipient is known after a completed payment to its address', async () => {
    const services = testServices();
    const w = await addWallet(services);
    const add = async (status: TxStatus, amount: bigint, at: number, to = 'Addr1') =>
      await services.db
        .transaction(async () =>
          await insertTx(services.db, { transaction_id: newId('transaction'), wallet_id: w.walletId, type: 'payment', direction: 'out', category: 'wallet', status, amount, to_address: to, now: at }),
        );
    await add('completed', 1_000_000n, 100);
    await add('pre_approved', 2_000_000n, 200, 'Addr2');
    await add('cancelled', 4_000_000n, 300);
    const usage = await computeUsage(services.db, w.walletId, { daily: new Date(150), weekly: new Date(50), monthly: new Date(120) }, { address: 'Addr1' });
    expect(usage).toMatchObject({ daily: 2_000_000n, weekly: 3_000_000n, monthly: 2_000_000n, total: 3_000_000n, payments_today: 1, recipient_known: true });
    expect(usage.by_category.wallet).toEqual({ daily: 2_000_000n, monthly: 2_000_000n });
    // Addr2's payment is not completed yet: not known.
    expect((await computeUsage(services.db, w.walletId, { daily: new Date(0), weekly: new Date(0), monthly: new Date(0) }, { address: 'Addr2' })).recipient_known).toBe(false);
  });
});
