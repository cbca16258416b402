/**
 * Conservation model: a seeded random workload (≥ 2,000 operations — deposits, payments,
 * approvals, rejections, cancels, expiries, withdrawals — at concurrency 1, 4 and 16) checked
 * against an independent model kept by this test. At every quiet point: wallet balances + fees +
 * withdrawals = deposits, each wallet's chain balance equals the model, and the ledger (completed
 * rows) equals the chain. A failure prints its seed (CONSERVATION_SEED=… reproduces it).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { ApiClient, ApiError } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { expireIntents } from '../../src/jobs/payments.ts';
import { rng } from '../helpers/random.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let agents: Agent[];
let owner: ApiClient;
let externals: Address[];

beforeAll(async () => {
  world = await startWorld();
  agents = [];
  for (let i = 0; i < 6; i++) agents.push(await world.agent(`Agent ${i}`));
  for (const a of agents) owner = world.claim(a.walletId, 'owner@example.com');
  externals = [(await generateKeyPairSigner()).address, (await generateKeyPairSigner()).address];
  // Every recipient account exists up front, so the model need not predict setup fees.
  for (const a of agents) await world.fund(a.address, 0n);
  for (const e of externals) await world.fund(e, 0n);
  // Two wallets need approval above 3 USDC; one blocks agent 0.
  await owner.call('owner', 'set_guard_rails', { wallet_id: agents[1]!.walletId, rails: { approval_above: '3' } });
  await owner.call('owner', 'set_guard_rails', { wallet_id: agents[2]!.walletId, rails: { approval_above: '3', blocked_recipients: [agents[0]!.username] } });
});
afterAll(() => world.stop());

/** The independent model: what each account must hold, in micro-USDC. */
class Model {
  balances = new Map<string, bigint>();
  deposits = 0n;
  fees = 0n;
  withdrawn = 0n;
  add(addr: string, d: bigint) {
    this.balances.set(addr, (this.balances.get(addr) ?? 0n) + d);
  }
  get(addr: string) {
    return this.balances.get(addr) ?? 0n;
  }
}

const fee = (amount: bigint) => {
  const p = (amount * 50n + 9_999n) / 10_000n;
  return p > 10_000n ? p : 10_000n;
};

test('2,000+ random operations at concurrency 1, 4 and 16 conserve money; ledger = chain = model', async () => {
  const seed = Number(process.env.CONSERVATION_SEED ?? Date.now() % 1_000_000);
  const r = rng(seed);
  const m = new Model();
  const pick = <T,>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  let ops = 0;
  const done: Record<string, number> = {};
  const count = (k: string) => {
    ops++;
    done[k] = (done[k] ?? 0) + 1;
  };
  // Money an agent has promised but not yet settled: keeps the model's choices affordable.
  const reserved = new Map<string, bigint>();
  const reserve = (a: Agent, v: bigint) => reserved.set(a.address, (reserved.get(a.address) ?? 0n) + v);
  const spendable = (a: Agent) => m.get(a.address) - (reserved.get(a.address) ?? 0n);

  async function operation(): Promise<void> {
    const a = pick(agents);
    const roll = r();
    if (roll < 0.25 || spendable(a) < 20_000_000n) {
      const amount = BigInt(1 + Math.floor(r() * 50)) * 1_000_000n;
      await world.fund(a.address, amount);
      m.deposits += amount;
      m.add(a.address, amount);
      return count('deposit');
    }
    const b = pick(agents.filter((x) => x !== a));
    const amount = BigInt(1 + Math.floor(r() * 500)) * 10_000n; // 0.01 … 5 USDC
    const cost = amount + fee(amount);
    reserve(a, cost);
    try {
      if (roll < 0.27) {
        const w = await a.api.call<any>('bot', 'withdraw', { amount: Number(amount) / 1e6, to_address: pick(externals), reason: 'model' });
        const total = amount + 100_000n;
        if (r() < 0.3) {
          await owner.call('owner', 'reject', { approval_id: w.approval_id });
          return count('withdrawal.rejected');
        }
        await owner.call('owner', 'approve', { approval_id: w.approval_id });
        const res = await confirmSignSubmit(a.api, a.profile, w.transaction_id, { confirmAction: 'confirm_withdrawal' });
        expect(res.status).toBe('completed');
        m.add(a.address, -total);
        m.fees += 100_000n;
        m.withdrawn += amount;
        return count('withdrawal');
      }
      const intent = await a.api.call<any>('bot', 'pay', { to: b.username, amount: Number(amount) / 1e6 });
      if (intent.status === 'rejected') return count('rejected.by_rails');
      if (roll < 0.55) {
        await a.api.call('bot', 'cancel_payment', { transaction_id: intent.transaction_id });
        return count('cancel');
      }
      if (intent.status === 'awaiting_approval') {
        if (r() < 0.4) {
          await owner.call('owner', 'reject', { approval_id: intent.approval_id });
          return count('rejected.by_owner');
        }
        await owner.call('owner', 'approve', { approval_id: intent.approval_id });
        count('approval');
      }
      if (roll < 0.94) return count('left.to.expire');
      const res = await confirmSignSubmit(a.api, a.profile, intent.transaction_id);
      expect(res.status).toBe('completed');
      m.add(a.address, -cost);
      m.add(b.address, amount);
      m.fees += cost - amount;
      return count('payment');
    } catch (err) {
      if (err instanceof ApiError && err.errorCode === 'INSUFFICIENT_FUNDS') return count('insufficient');
      throw new Error(`seed ${seed}, operation ${ops}: ${(err as Error).message}`, { cause: err });
    } finally {
      reserve(a, -cost);
    }
  }

  async function quietPoint(label: string): Promise<void> {
    // Intents left pending age out: 48 h later they expire and release everything.
    world.clock.offsetMs += 49 * 60 * 60 * 1000;
    const expired = expireIntents(world.services);
    for (let i = 0; i < expired; i++) count('expiry');
    await scanDeposits(world.services);
    const chainTotal = { wallets: 0n };
    for (const a of agents) {
      const chain = await world.balance(a.address);
      chainTotal.wallets += chain;
      const context = `seed ${seed} at ${label}: ${a.username}`;
      if (chain !== m.get(a.address)) throw new Error(`${context}: chain ${chain} ≠ model ${m.get(a.address)}`);
      const ledger = world.services.db
        .query(
          `SELECT coalesce(sum(CASE WHEN direction = 'in' THEN amount ELSE -(amount + fee + setup_fee) END), 0) AS b
           FROM transactions WHERE wallet_id = ? AND status = 'completed'`,
        )
        .get(a.walletId) as { b: bigint };
      if (ledger.b !== chain) throw new Error(`${context}: ledger ${ledger.b} ≠ chain ${chain}`);
      const outstanding = world.services.db.query("SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND status IN ('pre_approved', 'approved', 'awaiting_approval', 'pending')").get(a.walletId) as { n: bigint };
      if (outstanding.n !== 0n) throw new Error(`${context}: ${outstanding.n} intents still open at a quiet point`);
    }
    const treasury = await world.balance(world.services.feePayer.address);
    let external = 0n;
    for (const e of externals) external += await world.balance(e);
    expect({ label, treasury, external }).toEqual({ label, treasury: m.fees, external: m.withdrawn });
    expect(chainTotal.wallets + treasury + external).toBe(m.deposits);
  }

  for (const concurrency of [1, 4, 16]) {
    for (let round = 0; round < 3; round++) {
      const target = ops + 200;
      while (ops < target) await Promise.all(Array.from({ length: concurrency }, () => operation()));
      await quietPoint(`concurrency ${concurrency}, round ${round}`);
    }
  }
  while (ops < 2000) await operation();
  await quietPoint('final');
  console.log(`conservation seed ${seed}: ${ops} operations`, done);
  expect(ops).toBeGreaterThanOrEqual(2000);
}, 170_000);
