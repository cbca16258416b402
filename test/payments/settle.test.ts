/** The confirmation rules of DESIGN §5 against simnet: re-send the same bytes, re-sign only after expiry AND absence. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ApiError } from '../../src/client/api.ts';
import { commit } from '../../src/frost/party.ts';
import { encodeCommitments } from '../../src/frost/wire.ts';
import { confirmPending } from '../../src/jobs/payments.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { getTx } from '../../src/db/transactions.ts';
import { agentKey, signWithoutSubmit } from '../helpers/signing.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;

beforeAll(async () => {
  // Fast blocks: a blockhash expires (150 blocks) in about 1.5 s.
  world = await startWorld({ slotMs: 10 });
  ({ alice, bob } = await world.payerAndPayee(100_000_000n));
});
afterAll(() => world.stop());

async function landed(): Promise<number> {
  const ata = await usdcAta(bob.address, world.simnet.mint);
  return (await world.services.chain.getSignaturesForAddress(ata, { limit: 1000 })).filter((s) => s.err === null).length;
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await Bun.sleep(20);
  }
}

describe('confirmation job', () => {
  test('a transaction withheld and landed later (sent by someone else) is recorded once', async () => {
    const txId = await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: 1 });
    const tx = (await getTx(world.services.db, txId))!;
    const before = await landed();
    await world.services.chain.sendRawTransaction(tx.signed_tx!);
    await confirmPending(world.services);
    await confirmPending(world.services);
    expect((await getTx(world.services.db, txId))!.status).toBe('completed');
    expect(await landed()).toBe(before + 1);
    const completedEvents = (await world.services.db.get("SELECT count(*) AS n FROM events WHERE type = 'payment.completed' AND data LIKE ?", `%${txId}%`)) as { n: bigint };
    expect(completedEvents.n).toBe(1n);
    const inRows = (await world.services.db.get("SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND signature = ?", bob.walletId, tx.signature)) as { n: bigint };
    expect(inRows.n).toBe(1n);
    // The deposit watcher sees the same signature on Bob's account and does not count it again.
    await scanDeposits(world.services);
    expect(((await world.services.db.get("SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND signature = ?", bob.walletId, tx.signature)) as { n: bigint }).n).toBe(1n);
  });

  test('an unlanded signed transaction is never re-signed while valid; after expiry AND absence it is re-signed once and lands once', async () => {
    const txId = await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: 2 });
    const signed = (await getTx(world.services.db, txId))!;
    const before = await landed();
    // While its blockhash is valid: still pending, and a new signing round is refused.
    await confirmPending(world.services);
    expect((await getTx(world.services.db, txId))!.status).toBe('pending');
    const key = agentKey(alice.profile);
    let refused: unknown;
    try {
      await alice.api.call('bot', 'frost_sign_init', { transaction_id: txId, commitments: encodeCommitments(commit(key).commitments) });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).errorCode).toBe('INVALID_STATUS');
    // Let the blockhash expire without sending: back to confirmable, with an event.
    await until(() => world.services.chain.getBlockHeight(), (h) => h > signed.last_valid_block_height!);
    await confirmPending(world.services);
    const reset = await getTx(world.services.db, txId);
    expect(reset!.status).toBe('pre_approved');
    expect(reset!.signature).toBeNull();
    // The old bytes can no longer land.
    await world.services.chain.sendRawTransaction(signed.signed_tx!).catch(() => undefined);
    const { confirmSignSubmit } = await import('../../src/client/sign.ts');
    const done = await confirmSignSubmit(alice.api, alice.profile, txId);
    expect(done.status).toBe('completed');
    expect(done.signature).not.toBe(signed.signature);
    expect(await landed()).toBe(before + 1);
    const events = await alice.api.call<any>('bot', 'events', { types: ['payment.resign_required'] });
    expect(events.items.length).toBe(1);
  });
});

describe('deposit watcher', () => {
  test('an external deposit is recorded once with a payment.received event', async () => {
    await world.fund(bob.address, 7_000_000n);
    const first = await scanDeposits(world.services);
    const second = await scanDeposits(world.services);
    expect(first).toBeGreaterThanOrEqual(1);
    expect(second).toBe(0);
    const deposits = await bob.api.call<any>('bot', 'transactions', { type: 'deposit' });
    expect(deposits.items.some((t: any) => t.amount === 7)).toBe(true);
    const events = await bob.api.call<any>('bot', 'events', { types: ['payment.received'] });
    expect(events.items.some((e: any) => e.data.kind === 'deposit' && e.data.amount === 7)).toBe(true);
  });
});
