import { describe, expect, test } from 'bun:test';
import { newId } from '../../src/contract/ids.ts';
import { computeUsage } from '../../src/db/usage.ts';
import { insertTx, moveTx, type TxStatus } from '../../src/db/transactions.ts';
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
  test('the trigger-kept lifetime total equals the sum over history after a random life of payments, withdrawals and deposits', () => {
    const seed = 20261122;
    const random = rng(seed);
    const services = testServices();
    const wallets = [addWallet(services, { name: 'Spender One' }), addWallet(services, { name: 'Spender Two' })];
    const ids: string[] = [];
    const pick = <T,>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    for (let step = 0; step < 1_500; step++) {
      services.db
        .transaction(() => {
          if (ids.length === 0 || random() < 0.4) {
            const id = newId('transaction');
            const type = pick(['payment', 'payment', 'x402', 'withdrawal', 'deposit'] as const);
            insertTx(services.db, {
              transaction_id: id,
              wallet_id: pick(wallets).walletId,
              type,
              direction: type === 'deposit' ? 'in' : 'out',
              status: pick(['pre_approved', 'awaiting_approval', 'rejected', 'completed'] as const),
              amount: BigInt(1 + Math.floor(random() * 5_000_000)),
              fee: BigInt(Math.floor(random() * 1_000)),
              setup_fee: random() < 0.2 ? 2_000n : 0n,
              now: step,
            });
            ids.push(id);
          } else {
            const [from, to] = pick(MOVES);
            moveTx(services.db, pick(ids), from, to, step);
          }
        })
        .immediate();
    }
    for (const w of wallets) {
      const model = services.db
        .query<{ s: bigint | null }, [string]>(
          `SELECT sum(amount + fee + setup_fee) AS s FROM transactions WHERE wallet_id = ? AND direction = 'out' AND type != 'withdrawal' AND status IN (${COUNTING.map((s) => `'${s}'`).join(', ')})`,
        )
        .get(w.walletId)?.s ?? 0n;
      const usage = computeUsage(services.db, w.walletId, { daily: new Date(0), weekly: new Date(0), monthly: new Date(0) }, { address: '' });
      expect({ seed, total: usage.total }).toEqual({ seed, total: model });
      // With every window open since the epoch, the windows see exactly the lifetime spend too.
      expect(usage.monthly).toBe(model);
    }
  });

  test('windows count only rows since their start; a recipient is known after a completed payment to its address', () => {
    const services = testServices();
    const w = addWallet(services);
    const add = (status: TxStatus, amount: bigint, at: number, to = 'Addr1') =>
      services.db
        .transaction(() =>
          insertTx(services.db, { transaction_id: newId('transaction'), wallet_id: w.walletId, type: 'payment', direction: 'out', category: 'wallet', status, amount, to_address: to, now: at }),
        )
        .immediate();
    add('completed', 1_000_000n, 100);
    add('pre_approved', 2_000_000n, 200, 'Addr2');
    add('cancelled', 4_000_000n, 300);
    const usage = computeUsage(services.db, w.walletId, { daily: new Date(150), weekly: new Date(50), monthly: new Date(120) }, { address: 'Addr1' });
    expect(usage).toMatchObject({ daily: 2_000_000n, weekly: 3_000_000n, monthly: 2_000_000n, total: 3_000_000n, payments_today: 1, recipient_known: true });
    expect(usage.by_category.wallet).toEqual({ daily: 2_000_000n, monthly: 2_000_000n });
    // Addr2's payment is not completed yet: not known.
    expect(computeUsage(services.db, w.walletId, { daily: new Date(0), weekly: new Date(0), monthly: new Date(0) }, { address: 'Addr2' }).recipient_known).toBe(false);
  });
});
