/**
 * Chain outage: simnet's RPC answers errors or hangs in the middle of payments. Callers get
 * SERVICE_UNAVAILABLE, intents keep their state, the same signed bytes are re-sent, nothing is
 * re-signed before expiry, and after recovery each intent has exactly one transfer.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { AGENT_ID } from '../../src/frost/ids.ts';
import { getTx } from '../../src/db/transactions.ts';
import { confirmPending } from '../../src/jobs/payments.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { ChainUnavailableError } from '../../src/solana/errors.ts';
import { errorOf } from '../helpers/errors.ts';
import { signWithoutSubmit } from '../helpers/signing.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;

beforeAll(async () => {
  world = await startWorld({ chainTimeoutMs: 1500 });
  alice = await world.agent('Alice', { claimBy: 'o@example.com' });
  bob = await world.agent('Bob', { claimBy: 'o@example.com' });
  await world.fund(alice.address, 100_000_000n);
  await world.fund(bob.address, 0n);
});
afterAll(async () => {
  world.simnet.setFault(null);
  await world.stop();
});


async function landed(): Promise<string[]> {
  const ata = await usdcAta(bob.address as Address, world.simnet.mint);
  return (await world.services.chain.getSignaturesForAddress(ata, { limit: 1000 })).filter((s) => s.err === null).map((s) => s.signature);
}

describe.each(['error', 'hang'] as const)('RPC %s', (mode) => {
  test('pay and submit answer SERVICE_UNAVAILABLE; the intent keeps its state; after recovery the same bytes land once', async () => {
    const txId = await signWithoutSubmit(alice.api, alice.profile, { to: bob.username, amount: 1 });
    const before = (await getTx(world.services.db, txId))!;
    const landedBefore = await landed();
    world.simnet.setFault(mode);
    try {
      const submit = await errorOf(alice.api.call('bot', 'submit_signed_tx', { transaction_id: txId }));
      expect(submit.errorCode).toBe('SERVICE_UNAVAILABLE');
      // A new recipient needs the chain (does its token account exist?): refused, nothing created.
      const pay = await errorOf(alice.api.call('bot', 'pay', { to: (await generateKeyPairSigner()).address, amount: 1 }));
      expect(pay.errorCode).toBe('SERVICE_UNAVAILABLE');
      // An unreachable chain ends the pass with the error, so the job runner backs off.
      await expect(confirmPending(world.services)).rejects.toBeInstanceOf(ChainUnavailableError);
      const during = (await getTx(world.services.db, txId))!;
      expect(during.status).toBe('pending');
      expect(during.signature).toBe(before.signature);
      // Nothing is re-signed while the signed bytes may still land.
      const reinit = await errorOf(alice.api.call('bot', 'frost_sign_init', { transaction_id: txId, commitments: { identifier: AGENT_ID, hiding: '00'.repeat(32), binding: '00'.repeat(32) } }));
      expect(['INVALID_STATUS', 'VALIDATION_ERROR']).toContain(reinit.errorCode);
    } finally {
      world.simnet.setFault(null);
    }
    await confirmPending(world.services);
    const deadline = Date.now() + 20_000;
    while ((await getTx(world.services.db, txId))!.status === 'pending' && Date.now() < deadline) {
      await confirmPending(world.services);
      await Bun.sleep(50);
    }
    const after = (await getTx(world.services.db, txId))!;
    expect(after.status).toBe('completed');
    expect(after.signature).toBe(before.signature);
    const now = await landed();
    expect(now.length).toBe(landedBefore.length + 1);
    expect(now).toContain(before.signature!);
    const creates = (await world.services.db.get("SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND direction = 'out'", alice.walletId)) as { n: bigint };
    expect(Number(creates.n)).toBe(mode === 'error' ? 1 : 2); // one signed payment per run; the refused pays created nothing
  });
});
