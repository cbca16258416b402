/**
 * What happens when a signed message's blockhash expires, against the real app and simnet with
 * fast blocks (150 blocks ≈ 1.5 s): a message a congested leader dropped for its price is re-signed
 * at a higher price and lands; a message that landed but is not yet visible to a lagging status
 * view is never sent back for a second signing (issue 21.1).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ApiError } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { getTx } from '../../src/db/transactions.ts';
import { MIN_ESCALATION_STEP } from '../../src/domain/priority-fee.ts';
import { commit } from '../../src/frost/party.ts';
import { encodeCommitments } from '../../src/frost/wire.ts';
import { confirmPending } from '../../src/jobs/payments.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { decodeMessage } from '../../src/solana/decode.ts';
import { agentKey, signWithoutSubmit } from '../helpers/signing.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;

beforeAll(async () => {
  world = await startWorld({ slotMs: 10 });
  ({ alice, bob } = await world.payerAndPayee(100_000_000n));
});
afterAll(() => world.stop());

/** The compute-unit price a message offers. */
function priceOf(message: Uint8Array): bigint {
  const ix = decodeMessage(message).instructions.find((i) => i.kind === 'computeUnitPrice');
  if (ix?.kind !== 'computeUnitPrice') throw new Error('the message offers no compute-unit price');
  return ix.microLamports;
}

/** Signatures that landed on Bob's token account. */
async function landedToBob(): Promise<string[]> {
  const ata = await usdcAta(bob.address, world.simnet.mint);
  return (await world.services.chain.getSignaturesForAddress(ata, { limit: 1000 })).filter((s) => s.err === null).map((s) => s.signature);
}

async function untilHeightPast(height: bigint): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await world.services.chain.getBlockHeight()) <= height) {
    if (Date.now() > deadline) throw new Error(`block height did not pass ${height}`);
    await Bun.sleep(20);
  }
}

async function resignEvents(txId: string): Promise<number> {
  const row = (await world.services.db.get("SELECT count(*) AS n FROM events WHERE type = 'payment.resign_required' AND data LIKE ?", `%${txId}%`)) as { n: bigint };
  return Number(row.n);
}

describe('a re-sign after expiry', () => {
  test('pays a higher price: a payment a congested leader dropped for its price is re-signed above the floor and lands once', async () => {
    const txId = await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: 1 });
    const first = (await getTx(world.services.db, txId))!;
    const firstPrice = priceOf(first.message!);
    expect(first.priority_fee).toBe(firstPrice);
    const before = await landedToBob();
    // The leader now drops anything priced below the floor: the signed bytes never land.
    const floor = firstPrice + MIN_ESCALATION_STEP / 2n;
    world.simnet.setCongestion(floor);
    try {
      const waited = await alice.api.call<{ status: string }>('bot', 'submit_signed_tx', { transaction_id: txId, wait: true });
      // The shared look saw the blockhash expire with the signature absent: back for a new signing round.
      expect(waited.status).toBe('pre_approved');
      expect(await resignEvents(txId)).toBe(1);
      expect(world.simnet.stats().dropped).toBeGreaterThanOrEqual(1);

      const done = await confirmSignSubmit(alice.api, alice.profile, txId);
      expect(done.status).toBe('completed');
      const second = (await getTx(world.services.db, txId))!;
      const secondPrice = priceOf(second.message!);
      expect(secondPrice).toBeGreaterThanOrEqual(floor);
      expect(secondPrice).toBeGreaterThanOrEqual(firstPrice * 2n);
      expect(secondPrice).toBeGreaterThanOrEqual(firstPrice + MIN_ESCALATION_STEP);
      expect(second.priority_fee).toBe(secondPrice);
      expect(second.signature).not.toBe(first.signature);
      const after = await landedToBob();
      expect(after.length).toBe(before.length + 1);
      expect(after).toContain(second.signature!);
      expect(after).not.toContain(first.signature!);
    } finally {
      world.simnet.setCongestion(null);
    }
  });
});

describe('the height race (issue 21.1)', () => {
  test('a payment that landed while the status view lags behind expiry is never signed twice', async () => {
    const txId = await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: 2 });
    const signed = (await getTx(world.services.db, txId))!;
    const before = await landedToBob();
    // Status queries now answer from a node far behind: it does not see the transfer land.
    world.simnet.setStatusLag(1_000_000);
    try {
      await world.services.chain.sendRawTransaction(signed.signed_tx!);
      await untilHeightPast(signed.last_valid_block_height!);
      // The height read first is past expiry, and the status view answers "absent" — from a view
      // older than expiry, which proves nothing: the payment stays pending with its one signature.
      for (let i = 0; i < 3; i++) await confirmPending(world.services);
      const during = (await getTx(world.services.db, txId))!;
      expect(during.status).toBe('pending');
      expect(during.signature).toBe(signed.signature);
      expect(await resignEvents(txId)).toBe(0);
      let refused: unknown;
      try {
        await alice.api.call('bot', 'frost_sign_init', { transaction_id: txId, commitments: encodeCommitments(commit(agentKey(alice.profile)).commitments) });
      } catch (err) {
        refused = err;
      }
      expect((refused as ApiError).errorCode).toBe('INVALID_STATUS');
    } finally {
      world.simnet.setStatusLag(null);
    }
    await confirmPending(world.services);
    const done = (await getTx(world.services.db, txId))!;
    expect(done.status).toBe('completed');
    expect(done.signature).toBe(signed.signature);
    const after = await landedToBob();
    expect(after.length).toBe(before.length + 1);
    expect(after).toContain(signed.signature!);
    expect(await resignEvents(txId)).toBe(0);
  });

  test('a lasting lag delays the re-sign of a truly absent payment until the lagging view has seen the expiry, but does not stall it', async () => {
    const txId = await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: 3 });
    const signed = (await getTx(world.services.db, txId))!;
    world.simnet.setStatusLag(20);
    try {
      await untilHeightPast(signed.last_valid_block_height!);
      // The first look past expiry asks a view 20 slots behind it: not proof of absence yet.
      await confirmPending(world.services);
      expect((await getTx(world.services.db, txId))!.status).toBe('pending');
      const deadline = Date.now() + 10_000;
      while ((await getTx(world.services.db, txId))!.status === 'pending' && Date.now() < deadline) {
        await Bun.sleep(20);
        await confirmPending(world.services);
      }
      expect((await getTx(world.services.db, txId))!.status).toBe('pre_approved');
      expect(await resignEvents(txId)).toBe(1);
    } finally {
      world.simnet.setStatusLag(null);
    }
  });
});
