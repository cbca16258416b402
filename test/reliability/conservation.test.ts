/**
 * Conservation model: a seeded random workload (≥ 2,000 operations — deposits, payments,
 * approvals, rejections, cancels, expiries, withdrawals — at concurrency 1, 4 and 16) checked
 * against an independent model kept by this test. At every quiet point: wallet balances + fees +
 * withdrawals = deposits, each wallet's chain balance equals the model, and the ledger (completed
 * rows) equals the chain. A failure prints its seed (CONSERVATION_SEED=… reproduces it).
 *
 * Then races the model cannot predict in order: payments to recipients without a token account
 * (a freshly claimed wallet, a raw address) and payers of one paylink, all at once, checked with
 * moneyViolations (./money-invariants.ts) against what the chain did; and the check itself is
 * shown to catch a build that charges the setup fee per message or lets a paylink be paid twice,
 * by making those faults on chain with a plain Solana client.
 *
 * Last, the issue-20 and issue-28 steps at random — x402 purchases from honest and hostile sellers (a short
 * lastValidBlockHeight claim whose bytes the seller lands later, a receipt naming another
 * purchase or a failed transaction, a facilitator answering settlement_pending that lands the bytes later), MPP charges, paid MCP tools,
 * withdrawals to our own wallets, rails changed between confirm and signing — and the issue-40
 * ones (a purchase that landed and was then buried under 101 transactions touching the wallet
 * until its blockhash expired; an answer lost after settlement, the purchase completed by the
 * outcome job, then resumed; a gateway's 502 after settlement, then resumed) — with the ledger
 * checked against chain balances after every step (ledgerChainViolations).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { ApiClient, ApiError } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { expireIntents } from '../../src/jobs/payments.ts';
import { SolanaPayWallet } from '../earning/solana-pay-client.ts';
import { rng } from '../helpers/random.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { ledgerChainViolations, moneyViolations, observeLanded, observePaylinkPayments, type Books, type Rules, ledgerBalance } from './money-invariants.ts';
import { x402Fetch, x402Resume } from '../../src/client/x402.ts';
import { resolvePendingPurchases } from '../../src/x402/purchase.ts';
import { commit } from '../../src/frost/party.ts';
import { encodeCommitments } from '../../src/frost/wire.ts';
import { agentKey } from '../helpers/signing.ts';
import { failedTransactionListing, pendingFacilitator, sellerAddress, startFacilitator, startHostileSeller, startIdentifierSeller, startV2Seller } from '../x402/sellers.ts';
import { startMppSeller } from '../x402/mpp-seller.ts';
import { startPaidMcpServer } from '../x402/mcp-seller.ts';
import { x402CallTool } from '../../src/client/x402-mcp.ts';

let world: World;
let agents: Agent[];
let owner: ApiClient;
let externals: Address[];

beforeAll(async () => {
  // Loopback sellers for the x402 steps.
  // A paid answer the seller holds past 2 s is lost (the issue-40 steps).
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost', AGENT_WALLET_OUTBOUND_CONNECT_TIMEOUT_MS: '1000', AGENT_WALLET_OUTBOUND_TOTAL_TIMEOUT_MS: '2000' } });
  agents = [];
  for (let i = 0; i < 6; i++) agents.push(await world.agent(`Agent ${i}`));
  for (const a of agents) owner = await world.claim(a.walletId, 'owner@example.com');
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
    const expired = await expireIntents(world.services);
    for (let i = 0; i < expired; i++) count('expiry');
    await scanDeposits(world.services);
    const chainTotal = { wallets: 0n };
    for (const a of agents) {
      const chain = await world.balance(a.address);
      chainTotal.wallets += chain;
      const context = `seed ${seed} at ${label}: ${a.username}`;
      if (chain !== m.get(a.address)) throw new Error(`${context}: chain ${chain} ≠ model ${m.get(a.address)}`);
      const ledger = (await world.services.db
        .get(`SELECT coalesce(sum(CASE WHEN direction = 'in' THEN amount ELSE -(amount + fee + setup_fee) END), 0) AS b
           FROM transactions WHERE wallet_id = ? AND status = 'completed'`, a.walletId)) as { b: bigint };
      if (ledger.b !== chain) throw new Error(`${context}: ledger ${ledger.b} ≠ chain ${chain}`);
      const outstanding = (await world.services.db.get("SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND status IN ('pre_approved', 'approved', 'awaiting_approval', 'pending')", a.walletId)) as { n: bigint };
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

const SETUP_FEE = 250_000n;
const RULES: Rules = { setupFee: SETUP_FEE, platformFee: fee };

const ledgerOf = async (walletId: string): Promise<bigint> => await ledgerBalance(world.services.db, walletId);

test('racing payments to new recipients (a claimed wallet, a raw address) and racing payers of one paylink: one setup fee per account created, one payment per paylink, on chain', async () => {
  const seed = Number(process.env.CONSERVATION_SEED ?? Date.now() % 1_000_000);
  const r = rng(seed + 1);
  const payers = agents.slice(0, 5);
  const payee = agents[5]!;
  const treasury = world.services.feePayer.address;
  const mint = world.simnet.mint;
  for (let round = 0; round < 3; round++) {
    const context = `seed ${seed}, round ${round}`;
    const fresh = await world.agent(`Fresh ${round}`, { claimBy: 'owner@example.com' });
    const raw = (await generateKeyPairSigner()).address;
    const link = await payee.api.call<any>('bot', 'create_payment_request', { description: `Order ${round}`, amount: '1.5' });
    // Enough for every payment to land even if one payer draws them all (12 × 2.26 + 1.51 < 30).
    for (const p of payers) await world.fund(p.address, 30_000_000n);
    const wallets = [...payers, payee, fresh];
    const accounts: Address[] = [...wallets.map((w) => w.address), raw, treasury];
    const before = new Map(await Promise.all(accounts.map(async (a) => [a, await world.balance(a)] as const)));
    const existed = await Promise.all([fresh.address, raw].map((a) => world.services.chain.tokenAccountExists(a, mint)));

    // The model: what each account must gain, from the payments that completed.
    const expected = new Map<string, bigint>();
    const add = (a: string, d: bigint) => expected.set(a, (expected.get(a) ?? 0n) + d);
    const landed: { signature: string; payer: Address; recipient: Address }[] = [];
    const refused: Record<string, number> = {};
    let paylinkPaid = 0;
    const payOne = async (a: Agent, params: Record<string, unknown>, recipient: Address, allowed: string[]) => {
      try {
        const intent = await a.api.call<any>('bot', 'pay', params);
        const done = await confirmSignSubmit(a.api, a.profile, intent.transaction_id);
        if (done.status !== 'completed') throw new Error(`${context}: payment ${intent.transaction_id} ended ${done.status}`);
        const amount = BigInt(Math.round(Number(done.amount) * 1e6));
        const setup = BigInt(Math.round(Number((done.fee_breakdown as any).account_setup_fee) * 1e6));
        add(a.address, -(amount + fee(amount) + setup));
        add(recipient, amount);
        add(treasury, fee(amount) + setup);
        landed.push({ signature: String(done.signature), payer: a.address, recipient });
        if (params.payment_request_id) paylinkPaid++;
      } catch (err) {
        if (!(err instanceof ApiError) || !allowed.includes(err.errorCode)) throw new Error(`${context}: ${(err as Error).message}`, { cause: err });
        refused[err.errorCode] = (refused[err.errorCode] ?? 0) + 1;
      }
    };
    const jobs: Promise<void>[] = [];
    for (let i = 0; i < 12; i++) {
      const toFresh = r() < 0.5;
      const amount = BigInt(1 + Math.floor(r() * 200)) * 10_000n; // 0.01 … 2 USDC
      jobs.push(payOne(pick(r, payers), { to: toFresh ? fresh.username : raw, amount: Number(amount) / 1e6 }, toFresh ? fresh.address : raw, []));
    }
    for (const p of payers.slice(0, 4)) jobs.push(payOne(p, { payment_request_id: link.request_id }, payee.address, ['INVALID_STATUS']));
    await Promise.all(jobs);
    await scanDeposits(world.services);

    const facts = {
      landed: await Promise.all(landed.map((l) => observeLanded(world.services.chain, mint, treasury, l))),
      recipients: await Promise.all(
        [fresh.address, raw].map(async (address, i) => ({ address, created: !existed[i] && (await world.services.chain.tokenAccountExists(address, mint)), ours: address === fresh.address })),
      ),
      paylinks: [{ requestId: link.request_id, payments: await observePaylinkPayments(world.services.chain, mint, link.reference_key, payee.address) }],
    };
    expect({ context, violations: moneyViolations(facts, RULES) }).toEqual({ context, violations: [] });
    expect({ context, paylinkPaid, onChain: facts.paylinks[0]!.payments, refused: refused.INVALID_STATUS }).toEqual({ context, paylinkPaid: 1, onChain: 1, refused: 3 });
    for (const a of accounts) {
      const delta = (await world.balance(a)) - before.get(a)!;
      expect({ context, account: a, delta }).toEqual({ context, account: a, delta: expected.get(a) ?? 0n });
    }
    for (const w of wallets) expect({ context, wallet: w.username, ledger: await ledgerOf(w.walletId) }).toEqual({ context, wallet: w.username, ledger: await world.balance(w.address) });
    const open = (await world.services.db.get("SELECT count(*) AS n FROM transactions WHERE status IN ('pre_approved', 'approved', 'awaiting_approval', 'pending')")) as { n: bigint };
    expect({ context, open: open.n }).toEqual({ context, open: 0n });
  }
}, 120_000);

/** A random element of `xs`. */
function pick<T>(r: () => number, xs: T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

test('the check catches, on chain, a build that charges the setup fee in every message and a paylink paid twice', async () => {
  const chain = world.services.chain;
  const mint = world.simnet.mint;
  const treasury = world.services.feePayer.address;
  const rogue = await SolanaPayWallet.create(world.simnet.url);
  await world.simnet.faucet(rogue.address, 20_000_000n, 1_000_000_000n);
  const victim = (await generateKeyPairSigner()).address;
  const ata = async (owner: Address) => (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
  const [source, destination, treasuryAta] = await Promise.all([ata(rogue.address), ata(victim), ata(treasury)]);
  // The faulty build of issue 18: each message its own idempotent create AND its own setup-fee transfer.
  const perMessage = [];
  for (const amount of [1_000_000n, 1_000_001n, 1_000_002n]) {
    perMessage.push(
      await rogue.send([
        getCreateAssociatedTokenIdempotentInstruction({ payer: rogue.signer, ata: destination, owner: victim, mint }),
        getTransferCheckedInstruction({ source, mint, destination, authority: rogue.signer, amount, decimals: 6 }),
        getTransferCheckedInstruction({ source, mint, destination: treasuryAta, authority: rogue.signer, amount: fee(amount) + SETUP_FEE, decimals: 6 }),
      ]),
    );
  }
  // A paylink paid twice: two landed payments carrying its reference key.
  const link = await agents[5]!.api.call<any>('bot', 'create_payment_request', { description: 'Paid twice', amount: '1.5' });
  await rogue.payUrl(link.solana_pay_url);
  await rogue.payUrl(link.solana_pay_url, { amount: 1_500_001n });

  const landed = await Promise.all(perMessage.map((signature) => observeLanded(chain, mint, treasury, { signature, payer: rogue.address, recipient: victim })));
  const recipients = [{ address: victim, created: true, ours: false }];
  const paylinks = [{ requestId: link.request_id, payments: await observePaylinkPayments(chain, mint, link.reference_key, agents[5]!.address) }];
  expect(moneyViolations({ landed, recipients, paylinks }, RULES)).toEqual([
    `${victim}: setup fees ${3n * SETUP_FEE} charged for one account created; at most ${SETUP_FEE}`,
    `paylink ${link.request_id} paid 2 times`,
  ]);
  // The first of those messages alone, and one payment of the paylink, are what a correct build does.
  expect(moneyViolations({ landed: landed.slice(0, 1), recipients, paylinks: [{ requestId: link.request_id, payments: 1 }] }, RULES)).toEqual([]);
  // Our claimed wallets' payers never pay a setup fee, even for the one account created.
  expect(moneyViolations({ landed: landed.slice(0, 1), recipients: [{ address: victim, created: true, ours: true }], paylinks: [] }, RULES)).toHaveLength(1);
}, 60_000);

test('issue-20, issue-28 and issue-40 steps, each once then at random (hostile x402 sellers, settlement_pending landing later, a landed purchase buried under 101 transactions, answers lost after settlement and resumed, MPP charges, paid MCP tools, withdrawals to our own wallets, rails changed between confirm and signing): ledger = chain after every step', async () => {
  const seed = Number(process.env.CONSERVATION_SEED ?? Date.now() % 1_000_000);
  const r = rng(seed + 2);
  // The first test moved the clock 49 h a quiet point; purchases are matched to the chain's block times.
  world.clock.offsetMs = 0;
  const facilitator = await startFacilitator(world);
  const payTo = await sellerAddress(world);
  const hostile = await startHostileSeller(world, facilitator, { payTo, amount: '10000' });
  const honest = await startV2Seller(world, facilitator, { payTo });
  // Issue 28: a seller whose facilitator answers settlement_pending (and lands the bytes later), and an MPP charge.
  const pending = pendingFacilitator(facilitator);
  const slow = await startV2Seller(world, pending.facilitator, { payTo });
  const mpp = await startMppSeller(world, { payTo, amount: '10000', externalId: 'conservation' });
  const tools = await startPaidMcpServer(world, facilitator, { payTo });
  // Issue 40: a seller that declared payment-identifier, whose answers can be lost after its settlement.
  const once = await startIdentifierSeller(world, facilitator, { payTo, stallMs: 3_000 });
  try {
    const crew: Agent[] = [];
    for (let i = 0; i < 3; i++) crew.push(await world.agent(`Crew ${i}`, { claimBy: 'owner@example.com' }));
    for (const a of crew) await world.fund(a.address, 20_000_000n);
    hostile.fakeReceipt = await failedTransactionListing(world, crew[0]!.address);
    const payTo0 = await world.balance(payTo);
    const done: Record<string, number> = {};
    const others = (a: Agent) => crew.filter((c) => c !== a);

    const steps: Record<string, (a: Agent) => Promise<unknown>> = {
      'x402 honest': (a) => x402Fetch(a.api, a.profile, { url: `${honest.url}/paid` }),
      'x402 stolen receipt': (a) => x402Fetch(a.api, a.profile, { url: `${hostile.url}/steal` }),
      'x402 short claim': (a) => x402Fetch(a.api, a.profile, { url: `${hostile.url}/short-claim` }),
      'x402 receipt naming a failed transaction': (a) => x402Fetch(a.api, a.profile, { url: `${hostile.url}/fake-receipt` }),
      'x402 settlement pending': (a) => x402Fetch(a.api, a.profile, { url: `${slow.url}/paid` }),
      'pending facilitator lands': async () => {
        // Bytes past their blockhash cannot land any more: the facilitator refuses them.
        await pending.release().catch(() => undefined);
      },
      'mpp charge': (a) => x402Fetch(a.api, a.profile, { url: `${mpp.url}/charge` }),
      // Issue 40, item 6: landed, then buried under 101 transactions touching the wallet, then its blockhash expired.
      'x402 landed then buried': async (a) => {
        const bought = await x402Fetch(a.api, a.profile, { url: `${slow.url}/paid` });
        await pending.release().catch(() => undefined);
        for (let i = 0; i < 101; i++) await world.fund(a.address, 1n);
        world.simnet.skipBlocks(152);
        return bought;
      },
      // Issue 40, item 8: the answer lost after settlement, the outcome job completes the purchase, a resume gets the answer.
      'x402 answer lost, completed by the outcome job, resumed': async (a) => {
        once.state.stall = 1;
        const lost = await x402Fetch(a.api, a.profile, { url: `${once.url}/once` }).catch((err: unknown) => err as ApiError);
        if (!(lost instanceof ApiError)) throw new Error(`seed ${seed}: the stalled answer came through`);
        await resolvePendingPurchases(world.services);
        await expectAnswered(a, String(lost.details.fetch_id));
      },
      'x402 502 after settlement, resumed': async (a) => {
        once.state.badGateway = 1;
        const first = await x402Fetch(a.api, a.profile, { url: `${once.url}/once` });
        await expectAnswered(a, String(first.fetch_id));
      },
      'paid mcp tool': (a) => x402CallTool(a.api, a.profile, { name: 'paid-tools', url: tools.url }, { tool: 'analyze', arguments: { ticker: 'SOL' } }),
      'seller lands held bytes': async () => {
        const held = hostile.held.splice(0, hostile.held.length);
        // Bytes past their blockhash cannot land any more: the facilitator refuses them.
        for (const h of held) await hostile.settleHeld(h).catch(() => undefined);
      },
      'withdrawal to our wallet': async (a) => {
        const w = await a.api.call<any>('bot', 'withdraw', { to_address: pick(r, others(a)).address, amount: Number(BigInt(1 + Math.floor(r() * 50)) * 10_000n) / 1e6, reason: 'sibling' });
        await owner.call('owner', 'approve', { approval_id: w.approval_id });
        return confirmSignSubmit(a.api, a.profile, w.transaction_id, { confirmAction: 'confirm_withdrawal' });
      },
      'rails changed between confirm and signing': async (a) => {
        const intent = await a.api.call<any>('bot', 'pay', { to: pick(r, others(a)).address, amount: 1 });
        await a.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
        await owner.call('owner', 'set_guard_rails', { wallet_id: a.walletId, rails: r() < 0.5 ? { approval_above: '0.5' } : { blocked_recipients: crew.map((c) => c.username) } });
        try {
          await a.api.call('bot', 'frost_sign_init', { transaction_id: intent.transaction_id, commitments: encodeCommitments(commit(agentKey(a.profile)).commitments) });
          throw new Error(`seed ${seed}: frost_sign_init signed under rails that forbid it`);
        } catch (err) {
          if (!(err instanceof ApiError) || !['AWAITING_APPROVAL', 'INVALID_STATUS'].includes(err.errorCode)) throw err;
          await owner.call('owner', 'set_guard_rails', { wallet_id: a.walletId, rails: {} });
          if (err.errorCode === 'AWAITING_APPROVAL') {
            await owner.call('owner', r() < 0.5 ? 'approve' : 'reject', { approval_id: err.details.approval_id });
            if ((await getTxStatus(intent.transaction_id)) === 'approved') return confirmSignSubmit(a.api, a.profile, intent.transaction_id);
          }
        }
      },
    };
    /** A resume of a paid purchase gets the seller's 200 without the seller running its paid handler again. */
    async function expectAnswered(a: Agent, fetchId: string): Promise<void> {
      const hits = once.state.paidHits;
      const resumed = await x402Resume(a.api, a.profile, fetchId);
      expect({ seed, fetchId, outcome: resumed.outcome, http: resumed.response?.status, hits: once.state.paidHits }).toEqual({ seed, fetchId, outcome: 'completed', http: 200, hits });
    }
    const names = Object.keys(steps);
    // Every step once (in a seeded order), then 40 at random.
    const order = [...names].sort(() => r() - 0.5);
    for (let i = 0; i < names.length + 40; i++) {
      const name = order[i] ?? pick(r, names);
      const a = pick(r, crew);
      await steps[name]!(a);
      done[name] = (done[name] ?? 0) + 1;
      await resolvePendingPurchases(world.services);
      await scanDeposits(world.services);
      const books: Books[] = [];
      for (const c of crew) books.push({ account: c.username, ledger: await ledgerOf(c.walletId), chain: await world.balance(c.address) });
      const sold = (await world.services.db.get("SELECT coalesce(sum(amount), 0) AS s FROM transactions WHERE type = 'x402' AND status = 'completed' AND to_address = ?", payTo)) as { s: bigint };
      books.push({ account: `seller ${payTo}`, ledger: sold.s, chain: (await world.balance(payTo)) - payTo0 });
      expect({ seed, step: i, violations: ledgerChainViolations(`${name} by ${a.username}`, books) }).toEqual({ seed, step: i, violations: [] });
    }
    console.log(`issue-20 steps, seed ${seed}:`, done);
  } finally {
    await hostile.stop();
    await once.stop();
    await honest.stop();
    await slow.stop();
    await mpp.stop();
    await tools.stop();
  }
}, 180_000);

async function getTxStatus(id: string): Promise<string> {
  return ((await world.services.db.get('SELECT status FROM transactions WHERE transaction_id = ?', id)) as { status: string }).status;
}
