import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { generateKeyPairSigner, getBase58Decoder, signBytes, type KeyPairSigner } from '@solana/kit';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { ChainRejectedError, ChainUnavailableError } from '../../src/solana/errors.ts';
import { createRpcChainPort, type ChainPort } from '../../src/solana/port.ts';
import { assembleSignedTransaction, buildUsdcTransfer, buildX402Transfer, transactionSignature } from '../../src/solana/transfer.ts';
import { memoOf } from '../../src/solana/decode.ts';
import { DEVNET_GENESIS_HASH } from '../../src/solana/networks.ts';
import { randomAddress } from './helpers.ts';

let sim: Simnet;
let port: ChainPort;

beforeAll(async () => {
  sim = await startSimnet({ port: 0, slotMs: 50 });
  port = createRpcChainPort(sim.url, { timeoutMs: 5_000 });
});

afterAll(async () => {
  await sim.stop();
});

/** A funded wallet (ordinary key here: the port does not care how the wallet signs), fee payer, treasury. */
async function parties(usdc: bigint) {
  const [wallet, feePayer] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
  const treasury = randomAddress();
  await sim.faucet(wallet.address, usdc);
  await sim.airdrop(feePayer.address, 1_000_000_000n);
  await sim.faucet(treasury, 0n);
  return { wallet, feePayer, treasury };
}

async function signed(messageBytes: Uint8Array, ...signers: KeyPairSigner[]): Promise<Uint8Array> {
  const sigs = await Promise.all(signers.map(async (s) => [s.address, await signBytes(s.keyPair.privateKey, messageBytes)] as const));
  return assembleSignedTransaction(messageBytes, new Map(sigs));
}

/** Polls until the cluster reports a status for `signature`, failing after the deadline. */
async function landed(signature: string, deadlineMs = 5_000) {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const [status] = await port.getSignatureStatuses([signature]);
    if (status?.confirmationStatus != null) return status;
    if (Date.now() > end) throw new Error(`${signature} did not land within ${deadlineMs} ms`);
    await Bun.sleep(20);
  }
}

describe('createRpcChainPort against simnet', () => {
  it('reads a blockhash whose last valid height lies ahead of the current block height', async () => {
    const { blockhash, lastValidBlockHeight } = await port.getLatestBlockhash();
    expect(blockhash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(lastValidBlockHeight).toBeGreaterThan(await port.getBlockHeight());
  });

  it('reads token and SOL balances, and 0n / false for accounts that do not exist', async () => {
    const p = await parties(7_250_000n);
    expect(await port.getTokenBalance(p.wallet.address, sim.mint)).toBe(7_250_000n);
    expect(await port.tokenAccountExists(p.wallet.address, sim.mint)).toBe(true);
    expect(await port.getSolBalance(p.feePayer.address)).toBe(1_000_000_000n);
    expect(await port.accountExists(p.feePayer.address)).toBe(true);
    const nobody = randomAddress();
    expect(await port.getTokenBalance(nobody, sim.mint)).toBe(0n);
    expect(await port.tokenAccountExists(nobody, sim.mint)).toBe(false);
    expect(await port.getSolBalance(nobody)).toBe(0n);
    expect(await port.accountExists(nobody)).toBe(false);
  });

  it('sends a transfer, reports its status, its exact token deltas and finds it by reference', async () => {
    const p = await parties(20_000_000n);
    const recipient = randomAddress();
    const reference = randomAddress();
    const { messageBytes } = await buildUsdcTransfer({
      wallet: p.wallet.address, mint: sim.mint, recipientOwner: recipient, amount: 12_500_000n, fee: 62_500n,
      treasuryOwner: p.treasury, feePayer: p.feePayer.address, createRecipientAta: true, references: [reference],
      blockhash: await port.getLatestBlockhash(),
    });
    const wire = await signed(messageBytes, p.feePayer, p.wallet);
    const signature = await port.sendRawTransaction(wire);
    expect(signature).toBe(transactionSignature(wire));
    expect((await landed(signature)).err).toBeNull();

    expect(await port.getTokenBalance(recipient, sim.mint)).toBe(12_500_000n);
    expect(await port.getTokenBalance(p.treasury, sim.mint)).toBe(62_500n);
    expect(await port.getTokenBalance(p.wallet.address, sim.mint)).toBe(7_437_500n);

    const transfers = await port.getTokenTransfersOf(signature);
    expect(transfers?.err).toBeNull();
    const [walletAta, recipientAta, treasuryAta] = await Promise.all([
      usdcAta(p.wallet.address, sim.mint), usdcAta(recipient, sim.mint), usdcAta(p.treasury, sim.mint),
    ]);
    const byAccount = (a: { account: string }, b: { account: string }) => a.account.localeCompare(b.account);
    expect(transfers?.deltas.toSorted(byAccount)).toEqual([
      { owner: p.wallet.address, mint: sim.mint, account: walletAta, delta: -12_562_500n },
      { owner: recipient, mint: sim.mint, account: recipientAta, delta: 12_500_000n },
      { owner: p.treasury, mint: sim.mint, account: treasuryAta, delta: 62_500n },
    ].toSorted(byAccount));
    expect(transfers?.accountKeys).toContain(reference);
    // The landed bytes themselves, as the reconciliation after a restore reads them, with their memo.
    expect(await port.getTransactionWire(signature)).toEqual(wire);
    expect(memoOf(wire)).toBeNull();

    const found = await port.getSignaturesForAddress(reference, { limit: 10 });
    expect(found.map((s) => s.signature)).toEqual([signature]);
  });

  it('answers null for a signature the cluster does not know', async () => {
    const unknown = getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(64)));
    expect(await port.getSignatureStatuses([unknown])).toEqual([null]);
    expect(await port.getTokenTransfersOf(unknown)).toBeNull();
  });

  it('simulates a partially signed x402 payment without signature checks', async () => {
    const p = await parties(50_000n);
    const payTo = randomAddress();
    await sim.faucet(payTo, 0n);
    const { messageBytes } = await buildX402Transfer({
      wallet: p.wallet.address, mint: sim.mint, payTo, amount: 10_000n, feePayer: p.feePayer.address, blockhash: await port.getLatestBlockhash(),
    });
    const ok = await port.simulate(await signed(messageBytes, p.wallet));
    expect(ok.err).toBeNull();
    expect(ok.logs.length).toBeGreaterThan(0);
    const tooMuch = await buildX402Transfer({
      wallet: p.wallet.address, mint: sim.mint, payTo, amount: 60_000n, feePayer: p.feePayer.address, blockhash: await port.getLatestBlockhash(),
    });
    const failed = await port.simulate(await signed(tooMuch.messageBytes, p.wallet));
    expect(failed.err).toEqual({ InstructionError: [2, { Custom: 1 }] });
    expect(JSON.stringify(failed.err)).toBe('{"InstructionError":[2,{"Custom":1}]}');
  });
});

describe('createRpcChainPort refusals', () => {
  async function transfer(amount: bigint, blockhash?: { blockhash: string; lastValidBlockHeight: bigint }) {
    const p = await parties(1_000_000n);
    const { messageBytes } = await buildUsdcTransfer({
      wallet: p.wallet.address, mint: sim.mint, recipientOwner: p.treasury, amount, fee: 0n, treasuryOwner: p.treasury,
      feePayer: p.feePayer.address, createRecipientAta: false, blockhash: blockhash ?? (await port.getLatestBlockhash()),
    });
    return { p, messageBytes };
  }

  async function rejection(wire: Uint8Array): Promise<ChainRejectedError> {
    const error = await port.sendRawTransaction(wire).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(ChainRejectedError);
    return error as ChainRejectedError;
  }

  it('names a bad signature signature_failure', async () => {
    const { p, messageBytes } = await transfer(1n);
    const wire = await signed(messageBytes, p.feePayer, p.wallet);
    wire[70] = (wire[70] ?? 0) ^ 1;
    expect((await rejection(wire)).kind).toBe('signature_failure');
  });

  it('names an unknown blockhash blockhash_not_found', async () => {
    const { p, messageBytes } = await transfer(1n, { blockhash: randomAddress(), lastValidBlockHeight: 10n });
    const error = await rejection(await signed(messageBytes, p.feePayer, p.wallet));
    expect(error.kind).toBe('blockhash_not_found');
    expect(error.reason).toContain('Blockhash not found');
  });

  it('names a re-sent landed transaction already_processed', async () => {
    const { p, messageBytes } = await transfer(1n);
    const wire = await signed(messageBytes, p.feePayer, p.wallet);
    await landed(await port.sendRawTransaction(wire));
    expect((await rejection(wire)).kind).toBe('already_processed');
  });

  it('names a failing program simulation_failed, with the program logs', async () => {
    const { p, messageBytes } = await transfer(2_000_000n);
    const error = await rejection(await signed(messageBytes, p.feePayer, p.wallet));
    expect(error.kind).toBe('simulation_failed');
    expect(error.reason).toContain('custom program error: 0x1');
    expect(error.logs).toContain('Program log: Error: insufficient funds');
  });
});

describe('createRpcChainPort reads for the operator', () => {
  it('knows the genesis hash, the chain clock and the memo of a landed transfer', async () => {
    expect(await port.getGenesisHash()).toBe(DEVNET_GENESIS_HASH);
    const skew = BigInt(Math.floor(Date.now() / 1000)) - (await port.getChainUnixTime());
    expect(skew < 0n ? -skew : skew).toBeLessThan(60n);
    const p = await parties(5_000_000n);
    const { messageBytes } = await buildUsdcTransfer({
      wallet: p.wallet.address, mint: sim.mint, recipientOwner: randomAddress(), amount: 1_000_000n, fee: 0n,
      treasuryOwner: p.treasury, feePayer: p.feePayer.address, createRecipientAta: true, memo: 'order-9 tx_abc',
      blockhash: await port.getLatestBlockhash(),
    });
    const signature = await port.sendRawTransaction(await signed(messageBytes, p.feePayer, p.wallet));
    await landed(signature);
    const wire = await port.getTransactionWire(signature);
    expect(wire === null ? null : memoOf(wire)).toBe('order-9 tx_abc');
    expect(await port.getTransactionWire(getBase58Decoder().decode(new Uint8Array(64).fill(7)))).toBeNull();
  });
});

describe('createRpcChainPort when the chain is unreachable', () => {
  it('throws ChainUnavailableError while the RPC answers HTTP 503, once retries reach the deadline', async () => {
    const brief = createRpcChainPort(sim.url, { timeoutMs: 5_000, deadlineMs: 600 });
    sim.setFault('error');
    try {
      await expect(brief.getBlockHeight()).rejects.toBeInstanceOf(ChainUnavailableError);
      await expect(brief.getLatestBlockhash()).rejects.toThrow('HTTP 503');
      await expect(brief.sendRawTransaction(new Uint8Array(200))).rejects.toBeInstanceOf(ChainUnavailableError);
    } finally {
      sim.setFault(null);
    }
  });

  it('throws ChainUnavailableError when the RPC does not answer within the timeout', async () => {
    const impatient = createRpcChainPort(sim.url, { timeoutMs: 200 });
    sim.setFault('hang');
    try {
      const started = Date.now();
      await expect(impatient.getBlockHeight()).rejects.toBeInstanceOf(ChainUnavailableError);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      sim.setFault(null);
    }
    expect(await impatient.getBlockHeight()).toBeGreaterThan(0n);
  });

  it('throws ChainUnavailableError when nothing listens at the URL', async () => {
    const gone = await startSimnet({ port: 0 });
    await gone.stop();
    const orphan = createRpcChainPort(gone.url, { timeoutMs: 2_000 });
    await expect(orphan.getTokenBalance(randomAddress(), gone.mint)).rejects.toBeInstanceOf(ChainUnavailableError);
  });
});
