import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createSolanaRpc,
  generateKeyPairSigner,
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type Base64EncodedWireTransaction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { signedUsdcTransfer, until, usdcAta } from './helpers.ts';

describe('blockhash lifetime on a fast simnet (5 ms blocks)', () => {
  let sim: Simnet;
  let rpc: ReturnType<typeof createSolanaRpc>;
  let payer: KeyPairSigner;

  beforeAll(async () => {
    sim = await startSimnet({ port: 0, slotMs: 5 });
    rpc = createSolanaRpc(sim.url);
    payer = await generateKeyPairSigner();
    await sim.faucet(payer.address, 1_000_000n, 1_000_000_000n);
  });

  afterAll(async () => {
    await sim.stop();
  });

  it('lands a transaction signed with a blockhash issued a few blocks earlier', async () => {
    const lifetime = (await rpc.getLatestBlockhash().send()).value;
    const issuedAt = sim.blockHeight();
    await until(() => (sim.blockHeight() >= issuedAt + 3n ? true : undefined), 5000, 'three blocks');
    const { wire, signature } = await signedUsdcTransfer(payer, payer.address, 1n, lifetime);
    await rpc.sendTransaction(wire as Base64EncodedWireTransaction, { encoding: 'base64' }).send();
    const status = await until(async () => (await rpc.getSignatureStatuses([signature as Signature]).send()).value[0] ?? undefined);
    expect(status.err).toBeNull();
  });

  it('rejects a transaction whose blockhash is more than 150 blocks old as BlockhashNotFound', async () => {
    const lifetime = (await rpc.getLatestBlockhash().send()).value;
    await until(async () => ((await rpc.isBlockhashValid(lifetime.blockhash).send()).value ? undefined : true), 10_000, 'blockhash expiry');
    expect(await rpc.getBlockHeight().send()).toBeGreaterThan(lifetime.lastValidBlockHeight);
    const { wire } = await signedUsdcTransfer(payer, payer.address, 1n, lifetime);
    let err: unknown;
    try {
      await rpc.sendTransaction(wire as Base64EncodedWireTransaction, { encoding: 'base64' }).send();
    } catch (e) {
      err = e;
    }
    expect(isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)).toBe(true);
    expect(isSolanaError((err as Error).cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)).toBe(true);
  });
});

describe('persistence across stop() and start with the same stateFile', () => {
  it('keeps balances, transaction history, recent priority fees and the faucet mint authority, creates the state directory and frees the port', async () => {
    const stateFile = join(mkdtempSync(join(tmpdir(), 'simnet-state-')), 'nested', 'simnet.state');
    const first = await startSimnet({ port: 0, slotMs: 50, stateFile });
    const rpc1 = createSolanaRpc(first.url);
    const alice = await generateKeyPairSigner();
    const bob = await generateKeyPairSigner();
    await first.faucet(alice.address, 3_000_000n, 1_000_000_000n);
    const { wire, signature } = await signedUsdcTransfer(alice, bob.address, 1_000_000n, (await rpc1.getLatestBlockhash().send()).value, 4_321n);
    await rpc1.sendTransaction(wire as Base64EncodedWireTransaction, { encoding: 'base64' }).send();
    const heightBefore = first.blockHeight();
    await first.stop();
    await first.stop();

    const second = await startSimnet({ port: first.port, slotMs: 50, stateFile });
    try {
      const rpc2 = createSolanaRpc(second.url);
      expect(second.blockHeight()).toBeGreaterThan(heightBefore);
      expect(String((await rpc2.getTokenAccountBalance(await usdcAta(bob.address)).send()).value.amount)).toBe('1000000');
      expect(String((await rpc2.getTokenAccountBalance(await usdcAta(alice.address)).send()).value.amount)).toBe('2000000');
      const tx = await rpc2.getTransaction(signature as Signature, { encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
      expect(tx!.meta!.postTokenBalances!.map((b) => String(b.uiTokenAmount.amount)).sort()).toEqual(['1000000', '2000000']);
      expect((await rpc2.getSignaturesForAddress(bob.address).send()).map((s) => s.signature)).toContain(signature as Signature);
      const fees = await rpc2.getRecentPrioritizationFees([await usdcAta(bob.address)]).send();
      expect(fees.find((f) => f.slot === tx!.slot)?.prioritizationFee).toBe(4_321n as never);
      await second.faucet(bob.address, 500_000n);
      expect(String((await rpc2.getTokenAccountBalance(await usdcAta(bob.address)).send()).value.amount)).toBe('1500000');
    } finally {
      await second.stop();
    }
  });
});
