/**
 * The batched confirmation look against the real app and simnet, counted with simnet's own call
 * statistics: one block height (getEpochInfo: height and slot of one view) and one
 * getSignatureStatuses per look however many transactions
 * are pending, the same bytes re-sent at most every REBROADCAST_MS, waiting agents sharing one
 * look, and completion only at the configured commitment.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { confirmPending } from '../../src/jobs/payments.ts';
import { REBROADCAST_MS, WAIT_TICK_MS, waitTickMs } from '../../src/payments/settle.ts';
import { getTx } from '../../src/db/transactions.ts';
import type { ChainPort, SignatureStatus } from '../../src/solana/port.ts';
import { ChainUnavailableError } from '../../src/solana/errors.ts';
import { signWithoutSubmit } from '../helpers/signing.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { ledgerChainViolations } from '../reliability/money-invariants.ts';
import { drainFeePayer } from '../helpers/fee-payer.ts';
import { commitsFrom, commitsOf, OUTCOME_COMMITS } from '../../src/db/commit-count.ts';

let world: World;
let alice: Agent;
let bob: Agent;

beforeAll(async () => {
  world = await startWorld();
  ({ alice, bob } = await world.payerAndPayee(100_000_000n));
});
afterAll(() => world.stop());

const calls = (method: string): number => world.simnet.stats().calls[method] ?? 0;

async function signedPayments(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: 0.01 }));
  return ids;
}

describe('the confirmation job', () => {
  test('ten pending transactions cost one block height and one status call per pass, and each is re-sent once, one interval after it was first seen', async () => {
    const ids = await signedPayments(10);
    world.simnet.resetStats();
    const firstSeen = Date.now();
    await confirmPending(world.services);
    // First sight (as after a restart): looked at, nothing re-sent yet.
    expect(world.simnet.stats().calls).toEqual({ getEpochInfo: 1, getSignatureStatuses: 1 });

    let passes = 1;
    const deadline = Date.now() + 20_000;
    while ((await Promise.all(ids.map((id) => getTx(world.services.db, id)))).some((t) => t!.status === 'pending') && Date.now() < deadline) {
      await Bun.sleep(50);
      await confirmPending(world.services);
      passes++;
      if (calls('sendTransaction') === 0) expect(Date.now() - firstSeen).toBeLessThan(REBROADCAST_MS + 1_000);
    }
    for (const id of ids) expect((await getTx(world.services.db, id))!.status).toBe('completed');
    const stats = world.simnet.stats();
    expect(stats.calls.getEpochInfo).toBe(passes);
    expect(stats.calls.getSignatureStatuses).toBe(passes);
    expect(stats.calls.sendTransaction).toBe(10);
    expect(stats.total).toBe(2 * passes + 10);
  });

  test('a pass with nothing pending makes no call', async () => {
    world.simnet.resetStats();
    await confirmPending(world.services);
    expect(world.simnet.stats().total).toBe(0);
  });
});

describe('a send that cannot get through', () => {
  test('does not stop the pass: a later transaction that landed is still recorded', async () => {
    const [stuck, landing] = (await signedPayments(2)) as [string, string];
    const sendsFail: ChainPort = {
      ...world.services.chain,
      sendRawTransaction: async () => {
        throw new ChainUnavailableError('sendTransaction failed: the send endpoint is down');
      },
    };
    const services = { ...world.services, chain: sendsFail };
    // First sight: looked at, nothing re-sent yet. One interval later the oldest is due a re-send.
    await confirmPending(services);
    await Bun.sleep(REBROADCAST_MS + 100);
    await world.services.chain.sendRawTransaction((await getTx(world.services.db, landing))!.signed_tx!);
    await confirmPending(services);
    expect((await getTx(world.services.db, landing))!.status).toBe('completed');
    expect((await getTx(world.services.db, stuck))!.status).toBe('pending');
    await world.services.chain.sendRawTransaction((await getTx(world.services.db, stuck))!.signed_tx!);
    await confirmPending(world.services);
    expect((await getTx(world.services.db, stuck))!.status).toBe('completed');
  });
});

describe('a re-send whose preflight fails', () => {
  test('leaves the transaction pending for expiry and absence to decide: an earlier send of the same bytes may still land', async () => {
    const [signed] = (await signedPayments(1)) as [string];
    // The wallet is emptied by another payment: a simulation of the signed bytes now fails.
    const rest = (await world.balance(alice.address)) - 1_000_000n;
    const drain = await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: Number(rest) / 1e6 });
    expect((await alice.api.call<{ status: string }>('bot', 'submit_signed_tx', { transaction_id: drain, wait: true })).status).toBe('completed');
    await confirmPending(world.services);
    await Bun.sleep(REBROADCAST_MS + 100);
    await confirmPending(world.services);
    expect((await getTx(world.services.db, signed))!.status).toBe('pending');
    await world.fund(alice.address, 100_000_000n);
  });

  test('the wait looks stretch to half of solana.rpc_max_rps', () => {
    expect(waitTickMs(0)).toBe(WAIT_TICK_MS);
    expect(waitTickMs(100)).toBe(WAIT_TICK_MS);
    expect(waitTickMs(8)).toBe(500);
    expect(waitTickMs(2)).toBe(2_000);
  });
});

describe('agents waiting in submit_signed_tx', () => {
  test('ten concurrent waits share one look per tick instead of polling each', async () => {
    const ids = await signedPayments(10);
    world.simnet.resetStats();
    const started = Date.now();
    const done = await Promise.all(ids.map((id) => alice.api.call<{ status: string }>('bot', 'submit_signed_tx', { transaction_id: id, wait: true })));
    const elapsed = Date.now() - started;
    expect(done.map((d) => d.status)).toEqual(Array(10).fill('completed'));
    const stats = world.simnet.stats();
    const ticks = Math.ceil(elapsed / WAIT_TICK_MS) + 1;
    expect(stats.calls.sendTransaction).toBe(10);
    expect(stats.calls.getSignatureStatuses).toBeLessThanOrEqual(ticks);
    expect(stats.calls.getEpochInfo ?? 0).toBeLessThanOrEqual(ticks);
    // Polling each would have been at least one status call per transaction.
    expect(stats.calls.getSignatureStatuses).toBeLessThan(10);
  });
});

describe('completion at the configured commitment', () => {
  test('a processed status is not completion; a signature that disappears after processed is re-sent, not recorded', async () => {
    const [id] = await signedPayments(1);
    const tx = (await getTx(world.services.db, id!))!;
    const real = world.services.chain;
    // A node view that reports the landed signature as `processed` only, then forgets it (a dropped fork).
    let view: 'processed' | 'dropped' = 'processed';
    const processedOnly: ChainPort = {
      ...real,
      async getSignatureStatusesAt(sigs) {
        const { contextSlot, statuses } = await real.getSignatureStatusesAt(sigs);
        const shown = statuses.map((s): SignatureStatus | null => (s === null || view === 'dropped' ? null : { ...s, confirmationStatus: 'processed' }));
        return { contextSlot, statuses: shown };
      },
    };
    world.services.chain = processedOnly;
    try {
      await real.sendRawTransaction(tx.signed_tx!);
      const landedDeadline = Date.now() + 10_000;
      while ((await real.getSignatureStatuses([tx.signature!]))[0] === null && Date.now() < landedDeadline) await Bun.sleep(50);
      await confirmPending(world.services);
      await confirmPending(world.services);
      expect((await getTx(world.services.db, id!))!.status).toBe('pending');

      view = 'dropped';
      world.simnet.resetStats();
      const deadline = Date.now() + REBROADCAST_MS + 5_000;
      while (calls('sendTransaction') === 0 && Date.now() < deadline) {
        await Bun.sleep(50);
        await confirmPending(world.services);
      }
      expect(calls('sendTransaction')).toBe(1);
      const after = (await getTx(world.services.db, id!))!;
      expect(after.status).toBe('pending');
      expect(after.signature).toBe(tx.signature);
    } finally {
      world.services.chain = real;
    }
    await confirmPending(world.services);
    const done = (await getTx(world.services.db, id!))!;
    expect(done.status).toBe('completed');
    expect(done.signature).toBe(tx.signature);
  });
});

describe('a repeated submit (issue 24.3)', () => {
  test('an agent re-submitting bytes the first send handed to a congested node, while the fee payer is briefly out of SOL, leaves them pending; when they land the ledger agrees with the chain', async () => {
    const floor = 10_000_000_000n;
    const before = { alice: await world.balance(alice.address), bob: await world.balance(bob.address) };
    const intent = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount: 1 });
    // The first send goes out with the signing and is accepted, then dropped by a congested leader.
    world.simnet.setCongestion(floor);
    const first = await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id, { wait: false });
    expect(first.status).toBe('pending');
    const bytes = (await getTx(world.services.db, intent.transaction_id))!.signed_tx!;
    // The fee payer is briefly without SOL: every preflight of the payment now fails.
    await drainFeePayer(world, 0n, floor);
    world.simnet.setCongestion(null);
    // The API's own advice after a slow or dropped send: call submit_signed_tx again.
    const again = await alice.api.call<{ status: string }>('bot', 'submit_signed_tx', { transaction_id: intent.transaction_id });
    expect(again.status).toBe('pending');
    await confirmPending(world.services);
    expect((await getTx(world.services.db, intent.transaction_id))!.status).toBe('pending');
    // Topped up, the earlier bytes land (here sent by whoever still held them).
    await world.simnet.airdrop(world.services.feePayer.address, 100_000_000_000n);
    await world.services.chain.sendRawTransaction(bytes).catch(() => {});
    const deadline = Date.now() + 15_000;
    while ((await getTx(world.services.db, intent.transaction_id))!.status === 'pending' && Date.now() < deadline) {
      await confirmPending(world.services);
      await Bun.sleep(50);
    }
    const tx = (await getTx(world.services.db, intent.transaction_id))!;
    const chainBob = (await world.balance(bob.address)) - before.bob;
    const chainAlice = before.alice - (await world.balance(alice.address));
    expect({ status: tx.status, chainBob }).toEqual({ status: 'completed', chainBob: 1_000_000n });
    // Ledger = chain for both accounts: Alice's outgoing row (amount and fees) and Bob's incoming row.
    const incoming = (await world.services.db.get("SELECT amount FROM transactions WHERE wallet_id = ? AND direction = 'in' AND signature = ?", bob.walletId, tx.signature)) as { amount: bigint } | null;
    expect(ledgerChainViolations('a re-submit during a fee payer outage', [
      { account: alice.username, ledger: tx.amount + tx.fee + tx.setup_fee, chain: chainAlice },
      { account: bob.username, ledger: incoming ? BigInt(incoming.amount) : 0n, chain: chainBob },
    ])).toEqual([]);
  });
});

describe('outcomes of one look are recorded together', () => {
  test('of three landed payments, one whose row fails to record stays pending without rolling back the others, and the next pass records it; ledger = chain', async () => {
    const ids = await signedPayments(3);
    const before = { alice: await world.balance(alice.address), bob: await world.balance(bob.address) };
    for (const id of ids) await world.services.chain.sendRawTransaction((await getTx(world.services.db, id))!.signed_tx!);
    const bad = ids[1]!;
    // A real fault in the ledger for that one row: its completion is refused by SQLite.
    await world.services.db.run(`CREATE TEMP TRIGGER refuse_one BEFORE UPDATE OF status ON transactions WHEN OLD.transaction_id = '${bad}' BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
    try {
      const deadline = Date.now() + 10_000;
      while ((await Promise.all([ids[0]!, ids[2]!].map((id) => getTx(world.services.db, id)))).some((t) => t!.status === 'pending') && Date.now() < deadline) {
        await confirmPending(world.services);
        await Bun.sleep(20);
      }
      expect((await getTx(world.services.db, ids[0]!))!.status).toBe('completed');
      expect((await getTx(world.services.db, ids[2]!))!.status).toBe('completed');
      expect((await getTx(world.services.db, bad))!.status).toBe('pending');
    } finally {
      await world.services.db.run('DROP TRIGGER refuse_one');
    }
    await confirmPending(world.services);
    expect((await getTx(world.services.db, bad))!.status).toBe('completed');
    // Ledger = chain for the three: Alice's outgoing rows (amount and fees) and Bob's incoming rows.
    const rows = (await Promise.all(ids.map((id) => getTx(world.services.db, id)))).map((t) => t!);
    const incoming = await Promise.all(rows.map((t) => world.services.db.get<{ amount: bigint }>("SELECT amount FROM transactions WHERE wallet_id = ? AND direction = 'in' AND signature = ?", bob.walletId, t.signature)));
    expect(ledgerChainViolations('a batch with one bad row', [
      { account: alice.username, ledger: rows.reduce((n, t) => n + t.amount + t.fee + t.setup_fee, 0n), chain: before.alice - (await world.balance(alice.address)) },
      { account: bob.username, ledger: incoming.reduce((n, r) => n + (r ? BigInt(r.amount) : 0n), 0n), chain: (await world.balance(bob.address)) - before.bob },
    ])).toEqual([]);
  });
});

describe('many outcomes of one look', () => {
  test('are recorded in slices of the event loop: work that arrives meanwhile runs between them, and each payment is recorded once; ledger = chain', async () => {
    const n = 40;
    const ids = await signedPayments(n);
    const before = { alice: await world.balance(alice.address), bob: await world.balance(bob.address) };
    for (const id of ids) await world.services.chain.sendRawTransaction((await getTx(world.services.db, id))!.signed_tx!);
    const completed = async () => (await Promise.all(ids.map((id) => getTx(world.services.db, id)))).filter((t) => t!.status === 'completed').length;
    // What other work sees, one turn of the event loop at a time, while the pass records.
    const seen: number[] = [];
    let passing = true;
    const observe = async () => {
      if (!passing) return;
      seen.push(await completed());
      setImmediate(observe);
    };
    setImmediate(observe);
    const commits = { all: commitsOf(world.services.db), outcomes: commitsFrom(world.services.db, OUTCOME_COMMITS) };
    await confirmPending(world.services).finally(() => (passing = false));
    expect(await completed()).toBe(n);
    // Every commit of the pass recorded outcomes, several payments each.
    const outcomeCommits = commitsFrom(world.services.db, OUTCOME_COMMITS) - commits.outcomes;
    expect(outcomeCommits).toBe(commitsOf(world.services.db) - commits.all);
    expect(outcomeCommits).toBeGreaterThan(1);
    expect(outcomeCommits).toBeLessThan(n);
    // Recorded in one go, no turn would see a part of them.
    expect(seen.some((k) => k > 0 && k < n)).toBe(true);
    const rows = (await Promise.all(ids.map((id) => getTx(world.services.db, id)))).map((t) => t!);
    const incoming = await Promise.all(rows.map((t) => world.services.db.all<{ amount: bigint }>("SELECT amount FROM transactions WHERE wallet_id = ? AND direction = 'in' AND signature = ?", bob.walletId, t.signature)));
    expect(incoming.every((r) => r.length === 1)).toBe(true);
    expect(ledgerChainViolations('a look with 40 outcomes', [
      { account: alice.username, ledger: rows.reduce((s, t) => s + t.amount + t.fee + t.setup_fee, 0n), chain: before.alice - (await world.balance(alice.address)) },
      { account: bob.username, ledger: incoming.reduce((s, r) => s + BigInt(r[0]!.amount), 0n), chain: (await world.balance(bob.address)) - before.bob },
    ])).toEqual([]);
  });
});
