/** Idempotent pays and the signing-safety rules of DESIGN §4–§5, against simnet. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { appendTransactionMessageInstructions, compileTransaction, createTransactionMessage, pipe, setTransactionMessageFeePayer, setTransactionMessageLifetimeUsingBlockhash, type Address } from '@solana/kit';
import { transferCheckedInstruction } from '../../src/solana/instructions.ts';
import { ApiError } from '../../src/client/api.ts';
import { confirmSignSubmit, type ConfirmResponse } from '../../src/client/sign.ts';
import { CustodyCheckError } from '../../src/client/register.ts';
import { decodeSecretState } from '../../src/frost/codec.ts';
import { commitmentList } from '../../src/frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../../src/frost/ids.ts';
import { commit, signShare } from '../../src/frost/party.ts';
import { Secret } from '../../src/frost/secret.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../../src/frost/wire.ts';
import { buildUsdcTransfer } from '../../src/solana/transfer.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;

beforeAll(async () => {
  world = await startWorld();
  ({ alice, bob } = await world.payerAndPayee(1_000_000_000n));
});
afterAll(() => world.stop());

const key = () => new Secret(decodeSecretState(Buffer.from(alice.profile.key_package, 'base64')) as KeyPackage);

async function landedTransfersTo(owner: Address): Promise<number> {
  const ata = await usdcAta(owner, world.simnet.mint);
  return (await world.services.chain.getSignaturesForAddress(ata, { limit: 1000 })).filter((s) => s.err === null).length;
}

async function rawPay(body: Record<string, unknown>, idem: string) {
  const res = await fetch(`${world.url}/bot`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${alice.profile.api_key}`, 'x-idempotency-key': idem },
    body: JSON.stringify({ action: 'pay', ...body }),
  });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), retryAfter: res.headers.get('retry-after'), text: await res.text() };
}

/** One agent round: commitments in, share out. */
async function signRound(txId: string, message?: Uint8Array) {
  const k = key();
  const { nonces, commitments } = commit(k);
  const init = await alice.api.call<any>('bot', 'frost_sign_init', { transaction_id: txId, commitments: encodeCommitments(commitments) });
  const msg = message ?? new Uint8Array(Buffer.from(init.message, 'base64'));
  const share = signShare(k, nonces, commitmentList(commitments, decodeCommitments(init.server_commitments, SERVER_ID)), msg);
  return { init, share: encodeSignatureShare(AGENT_ID, share) };
}

async function errorOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

describe('idempotency', () => {
  test('5 sequential and 50 concurrent pays with one key: one transaction in the DB and on chain, identical bodies, replays marked', async () => {
    const body = { to: bob.username, amount: '3.25' };
    const first = await rawPay(body, 'order-42');
    expect(first.status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const again = await rawPay(body, 'order-42');
      expect(again.text).toBe(first.text);
      expect(again.replayed).toBe('true');
    }
    const concurrent = await Promise.all(
      Array.from({ length: 50 }, async () => {
        // A real client retries a 409 (first request still running) after Retry-After.
        for (;;) {
          const r = await rawPay(body, 'order-42');
          if (r.status !== 409) return r;
          await Bun.sleep(Number(r.retryAfter ?? 1) * 100);
        }
      }),
    );
    for (const r of concurrent) expect(r.text).toBe(first.text);
    const txId = JSON.parse(first.text).data.transaction_id;
    const rows = (await world.services.db.get("SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND direction = 'out' AND amount = 3250000", alice.walletId)) as { n: bigint };
    expect(rows.n).toBe(1n);
    const before = await landedTransfersTo(bob.address);
    await confirmSignSubmit(alice.api, alice.profile, txId);
    expect(await landedTransfersTo(bob.address)).toBe(before + 1);
  });

  test('50 concurrent first requests with one fresh key create exactly one intent', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => rawPay({ to: bob.username, amount: '0.77' }, 'burst-1')));
    const ok = results.filter((r) => r.status === 200);
    expect(new Set(ok.map((r) => JSON.parse(r.text).data.transaction_id)).size).toBe(1);
    expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const rows = (await world.services.db.get("SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND amount = 770000", alice.walletId)) as { n: bigint };
    expect(rows.n).toBe(1n);
  });

  test('the same key with another amount is 422 IDEMPOTENCY_CONFLICT', async () => {
    await rawPay({ to: bob.username, amount: 1 }, 'conflict-key');
    const other = await rawPay({ to: bob.username, amount: 2 }, 'conflict-key');
    expect(other.status).toBe(422);
    expect(JSON.parse(other.text).error.code).toBe('IDEMPOTENCY_CONFLICT');
  });
});

describe('signing safety', () => {
  test('two equal payments built in the same slot are distinct transactions: both land, with different ids', async () => {
    const [a, b] = await Promise.all([
      alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 0.42 }),
      alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 0.42 }),
    ]);
    const before = await landedTransfersTo(bob.address);
    const [da, db] = await Promise.all([confirmSignSubmit(alice.api, alice.profile, a.transaction_id), confirmSignSubmit(alice.api, alice.profile, b.transaction_id)]);
    expect([da.status, db.status]).toEqual(['completed', 'completed']);
    expect(da.signature).not.toBe(db.signature);
    expect(await landedTransfersTo(bob.address)).toBe(before + 2);
  });

  test('frost_sign_complete twice returns the same result from one share; a different share is refused', async () => {
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 });
    await alice.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
    const { init, share } = await signRound(intent.transaction_id);
    const a = await alice.api.call<any>('bot', 'frost_sign_complete', { transaction_id: intent.transaction_id, sign_session_id: init.sign_session_id, signature_share: share });
    const b = await alice.api.call<any>('bot', 'frost_sign_complete', { transaction_id: intent.transaction_id, sign_session_id: init.sign_session_id, signature_share: share });
    expect(b).toEqual(a);
    const other = { ...share, share: share.share.replace(/^../, (h: string) => ((parseInt(h, 16) + 1) % 256).toString(16).padStart(2, '0')) };
    const err = (await errorOf(alice.api.call('bot', 'frost_sign_complete', { transaction_id: intent.transaction_id, sign_session_id: init.sign_session_id, signature_share: other }))) as ApiError;
    expect(err.errorCode).toBe('INVALID_STATUS');
    const sessions = (await world.services.db.get("SELECT count(*) AS n FROM sign_sessions WHERE transaction_id = ? AND status = 'used'", intent.transaction_id)) as { n: bigint };
    expect(sessions.n).toBe(1n);
    const done = await alice.api.call<any>('bot', 'submit_signed_tx', { transaction_id: intent.transaction_id, wait: true });
    expect(done.status).toBe('completed');
  });

  test('identical frost_sign_complete calls at once (each combines on the worker pool) answer one signature; one round used', async () => {
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 });
    await alice.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
    const { init, share } = await signRound(intent.transaction_id);
    const before = await landedTransfersTo(bob.address);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => alice.api.call<any>('bot', 'frost_sign_complete', { transaction_id: intent.transaction_id, sign_session_id: init.sign_session_id, signature_share: share })),
    );
    expect(new Set(results.map((r) => r.signature)).size).toBe(1);
    const used = (await world.services.db.get("SELECT count(*) AS n FROM sign_sessions WHERE transaction_id = ? AND status = 'used'", intent.transaction_id)) as { n: bigint };
    expect(used.n).toBe(1n);
    const done = await alice.api.call<any>('bot', 'submit_signed_tx', { transaction_id: intent.transaction_id, wait: true });
    expect(done.status).toBe('completed');
    expect(done.signature).toBe(results[0].signature);
    expect(await landedTransfersTo(bob.address)).toBe(before + 1);
  });

  test('a client share over another message is refused and burns the nonces', async () => {
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 });
    await alice.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
    const { init, share } = await signRound(intent.transaction_id, new TextEncoder().encode('some other message'));
    const err = (await errorOf(alice.api.call('bot', 'frost_sign_complete', { transaction_id: intent.transaction_id, sign_session_id: init.sign_session_id, signature_share: share }))) as ApiError;
    expect(err.errorCode).toBe('VALIDATION_ERROR');
    expect(err.message).toContain('does not verify');
    const row = (await world.services.db.get('SELECT status, nonces FROM sign_sessions WHERE sign_session_id = ?', init.sign_session_id)) as { status: string; nonces: unknown };
    expect(row).toEqual({ status: 'failed', nonces: null });
    const tx = (await world.services.db.get('SELECT signed_tx FROM transactions WHERE transaction_id = ?', intent.transaction_id)) as { signed_tx: unknown };
    expect(tx.signed_tx).toBeNull();
    await alice.api.call('bot', 'cancel_payment', { transaction_id: intent.transaction_id });
  });

  test('100 concurrent sign attempts on one transaction yield at most one signature and one landed transfer', async () => {
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 });
    await alice.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
    const attempts = await Promise.allSettled(
      Array.from({ length: 100 }, async () => {
        const { init, share } = await signRound(intent.transaction_id);
        return alice.api.call<any>('bot', 'frost_sign_complete', { transaction_id: intent.transaction_id, sign_session_id: init.sign_session_id, signature_share: share });
      }),
    );
    const signatures = new Set(attempts.filter((a) => a.status === 'fulfilled').map((a) => (a as PromiseFulfilledResult<any>).value.signature));
    // Each frost_sign_init supersedes older open rounds, so under load every racer may lose; never two win.
    expect(signatures.size).toBeLessThanOrEqual(1);
    const before = await landedTransfersTo(bob.address);
    if (signatures.size === 0) signatures.add((await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id)).signature);
    await Promise.all([
      alice.api.call('bot', 'submit_signed_tx', { transaction_id: intent.transaction_id, wait: true }),
      alice.api.call('bot', 'submit_signed_tx', { transaction_id: intent.transaction_id, wait: true }),
    ]);
    const again = await alice.api.call<any>('bot', 'submit_signed_tx', { transaction_id: intent.transaction_id });
    expect(again.status).toBe('completed');
    expect(again.signature).toBe([...signatures][0]);
    const used = (await world.services.db.get("SELECT count(*) AS n FROM sign_sessions WHERE transaction_id = ? AND status = 'used'", intent.transaction_id)) as { n: bigint };
    expect(used.n).toBe(1n);
    expect(await landedTransfersTo(bob.address)).toBe(before + 1);
  });

  /** A message with the expected transfer plus one more instruction the agent never agreed to. */
  async function withExtraInstruction(): Promise<Uint8Array> {
    const s = world.services;
    const mint = s.config.usdcMint as Address;
    const [source, dest, treasury] = await Promise.all([usdcAta(alice.address, mint), usdcAta(bob.address, mint), usdcAta(s.feePayer.address, mint)]);
    const { blockhash, lastValidBlockHeight } = await s.chain.getLatestBlockhash();
    const ix = (destination: Address, amount: bigint) => transferCheckedInstruction({ source, mint, destination, authority: alice.address, amount, decimals: 6 });
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(s.feePayer.address, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as never, lastValidBlockHeight }, m),
      (m) => appendTransactionMessageInstructions([ix(dest, 1_000_000n), ix(treasury, 10_000n), ix(treasury, 50_000_000n)], m),
    );
    return new Uint8Array(compileTransaction(message).messageBytes);
  }

  test.each([
    ['amount', { amount: 2_000_000n }],
    ['recipient', { recipientOwner: 'treasury' }],
    ['fee', { fee: 5_000_000n }],
    ['mint', { mint: 'other' }],
    ['extra instruction', { extra: true }],
  ])('the client refuses a stored message altered in %s before it signs', async (_name, change: Record<string, unknown>) => {
    const intent = await alice.api.call<any>('bot', 'pay', { to: bob.username, amount: 1 });
    await alice.api.call<ConfirmResponse>('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
    const s = world.services;
    const otherMint = (await usdcAta(alice.address, s.config.usdcMint as Address)) as Address;
    const tampered = change.extra
      ? await withExtraInstruction()
      : (
          await buildUsdcTransfer({
            wallet: alice.address,
            mint: (change.mint ? otherMint : s.config.usdcMint) as Address,
            recipientOwner: (change.recipientOwner ? s.feePayer.address : bob.address) as Address,
            amount: (change.amount as bigint) ?? 1_000_000n,
            fee: (change.fee as bigint) ?? 10_000n,
            treasuryOwner: s.feePayer.address,
            feePayer: s.feePayer.address,
            createRecipientAta: true,
            blockhash: await s.chain.getLatestBlockhash(),
          })
        ).messageBytes;
    await s.db.run('UPDATE transactions SET message = ? WHERE transaction_id = ?', tampered, intent.transaction_id);
    // The confirm answer opens the round (fast path); the refusal comes before the agent's share exists.
    const released = async () => ((await s.db.get('SELECT count(*) AS n FROM sign_sessions WHERE transaction_id = ? AND (agent_share IS NOT NULL OR status != ?)', intent.transaction_id, 'open')) as { n: bigint }).n;
    const err = await errorOf(confirmSignSubmit(alice.api, alice.profile, intent.transaction_id, { expect: { recipientAddress: bob.address, amount: 1_000_000n } }));
    expect(err).toBeInstanceOf(CustodyCheckError);
    expect(err.message).toContain('refusing to sign');
    expect(await released()).toBe(0n);
    expect(await s.db.get('SELECT signed_tx FROM transactions WHERE transaction_id = ?', intent.transaction_id)).toEqual({ signed_tx: null });
    await alice.api.call('bot', 'cancel_payment', { transaction_id: intent.transaction_id });
  });
});
