import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import {
  createSolanaRpc,
  devnet,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64Encoder,
  getBase64Decoder,
  isSolanaError,
  lamports,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type Address,
  type Base64EncodedWireTransaction,
  type KeyPairSigner,
  type Signature,
  type TransactionMessageBytesBase64,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { DEVNET_GENESIS_HASH, DEVNET_USDC } from '../../src/solana/networks.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { rawRpc, signedUsdcTransfer, until, usdcAta } from './helpers.ts';

let sim: Simnet;
let rpc: ReturnType<typeof rpcOf>;
let alice: KeyPairSigner;
let bob: KeyPairSigner;
const logs: Record<string, unknown>[] = [];

beforeAll(async () => {
  sim = await startSimnet({ port: 0, slotMs: 50, log: (e) => logs.push(e) });
  rpc = rpcOf(sim.url);
  alice = await generateKeyPairSigner();
  bob = await generateKeyPairSigner();
  await sim.faucet(alice.address, 10_000_000n, 1_000_000_000n);
});

afterAll(async () => {
  await sim.stop();
});

function rpcOf(url: string) {
  return createSolanaRpc(devnet(url));
}

async function balance(owner: Address): Promise<bigint> {
  return (await rpc.getBalance(owner).send()).value;
}

async function latest() {
  return (await rpc.getLatestBlockhash().send()).value;
}

async function send(wire: string, skipPreflight = false): Promise<Signature> {
  return rpc.sendTransaction(wire as Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight }).send();
}

async function landed(signature: string) {
  return until(async () => (await rpc.getSignatureStatuses([signature as Signature]).send()).value[0] ?? undefined, 5000, `status of ${signature}`);
}

async function tokenBalance(owner: Address): Promise<string> {
  return String((await rpc.getTokenAccountBalance(await usdcAta(owner)).send()).value.amount);
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail');
}

describe('simnet JSON-RPC through @solana/kit', () => {
  it('presents itself as devnet and reports block height, slot and a blockhash valid for 150 blocks', async () => {
    expect(String(await rpc.getGenesisHash().send())).toBe(DEVNET_GENESIS_HASH);
    expect(await rpc.getHealth().send()).toBe('ok');
    const height = await rpc.getBlockHeight().send();
    const { blockhash, lastValidBlockHeight } = await latest();
    expect(lastValidBlockHeight).toBeGreaterThanOrEqual(height + 150n);
    expect((await rpc.isBlockhashValid(blockhash).send()).value).toBe(true);
    const slot = await rpc.getSlot().send();
    expect(slot).toBeGreaterThanOrEqual(height);
  });

  it('advances block height on its timer', async () => {
    const start = sim.blockHeight();
    await until(() => (sim.blockHeight() >= start + 2n ? true : undefined), 5000, 'two blocks');
  });

  it('moves the SOL balance with requestAirdrop', async () => {
    const who = await generateKeyPairSigner();
    const signature = await rpc.requestAirdrop(who.address, lamports(2_000_000_000n)).send();
    expect((await landed(signature)).err).toBeNull();
    expect(await balance(who.address)).toBe(2_000_000_000n);
  });

  it('lands a USDC transferChecked signed by a plain keypair and moves token balances', async () => {
    const { wire, signature } = await signedUsdcTransfer(alice, bob.address, 1_250_000n, await latest());
    expect(await send(wire)).toBe(signature as Signature);
    const status = await landed(signature);
    expect(status.err).toBeNull();
    expect(status.confirmationStatus).toBe('finalized');
    expect(await tokenBalance(alice.address)).toBe('8750000');
    expect(await tokenBalance(bob.address)).toBe('1250000');
  });

  it('reports the landed transfer in getTransaction with fee, balances and token balances as the legacy JSON shape', async () => {
    const before = await balance(alice.address);
    const { wire, signature } = await signedUsdcTransfer(alice, bob.address, 250_000n, await latest());
    await send(wire);
    await landed(signature);
    const tx = await rpc.getTransaction(signature as Signature, { encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    expect(tx).not.toBeNull();
    const meta = tx!.meta!;
    expect(meta.err).toBeNull();
    expect(BigInt(meta.fee)).toBe(5000n);
    expect(meta.preBalances[0]! - meta.postBalances[0]!).toBe(5000n);
    expect(await balance(alice.address)).toBe(before - 5000n);
    expect(meta.logMessages).toContain('Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA success');
    const bobAta = await usdcAta(bob.address);
    const keys = tx!.transaction.message.accountKeys;
    const pre = meta.preTokenBalances!.find((b) => keys[Number(b.accountIndex)] === bobAta)!;
    const post = meta.postTokenBalances!.find((b) => keys[Number(b.accountIndex)] === bobAta)!;
    expect(String(pre.uiTokenAmount.amount)).toBe('1250000');
    expect(String(post.uiTokenAmount.amount)).toBe('1500000');
    expect(String(post.uiTokenAmount.uiAmountString)).toBe('1.5');
    expect(post.mint).toBe(DEVNET_USDC);
    expect(post.owner).toBe(bob.address);
    expect(tx!.version).toBe(0);
    expect(tx!.transaction.signatures[0]).toBe(signature as never);
  });

  it('refuses a v0 transaction to clients that do not declare maxSupportedTransactionVersion, like a real node', async () => {
    const { wire, signature } = await signedUsdcTransfer(alice, bob.address, 1n, await latest());
    await send(wire);
    await landed(signature);
    const { json } = await rawRpc(sim.url, { jsonrpc: '2.0', id: 1, method: 'getTransaction', params: [signature] });
    expect(json.error.code).toBe(-32015);
  });

  it('serves getTransaction as base64 (the exact wire bytes) and as jsonParsed', async () => {
    const { wire, signature } = await signedUsdcTransfer(alice, bob.address, 2n, await latest());
    await send(wire);
    await landed(signature);
    const b64 = await rpc.getTransaction(signature as Signature, { encoding: 'base64', maxSupportedTransactionVersion: 0 }).send();
    expect(b64!.transaction[0]).toBe(wire as never);
    const parsed = await rpc.getTransaction(signature as Signature, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }).send();
    const transfer = parsed!.transaction.message.instructions.find((i) => 'parsed' in i && i.parsed.type === 'transferChecked');
    expect(transfer).toMatchObject({ program: 'spl-token', parsed: { info: { mint: DEVNET_USDC, authority: alice.address, tokenAmount: { amount: '2' } } } });
    expect(parsed!.transaction.message.accountKeys[0]).toMatchObject({ pubkey: alice.address, signer: true, writable: true });
  });

  it('finds the transfer through getSignaturesForAddress on the recipient token account, newest first', async () => {
    const { wire, signature } = await signedUsdcTransfer(alice, bob.address, 3n, await latest());
    await send(wire);
    await landed(signature);
    const list = await rpc.getSignaturesForAddress(await usdcAta(bob.address), { limit: 2 }).send();
    expect(list).toHaveLength(2);
    expect(list[0]!.signature).toBe(signature as Signature);
    expect(list[0]!.confirmationStatus).toBe('finalized');
    const older = await rpc.getSignaturesForAddress(await usdcAta(bob.address), { before: signature as Signature, limit: 1 }).send();
    expect(older[0]!.signature).toBe(list[1]!.signature);
  });

  it('rejects a transaction with a corrupted signature with -32003 and does not record it', async () => {
    const { wire, signature } = await signedUsdcTransfer(alice, bob.address, 5n, await latest());
    const bytes = new Uint8Array(getBase64Encoder().encode(wire));
    bytes[10]! ^= 0xff;
    const corrupted = getBase64Decoder().decode(bytes);
    const err = await rejection(send(corrupted));
    expect(isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE)).toBe(true);
    const sent = await send(corrupted, true);
    expect(sent).not.toBe(signature as Signature);
    expect((await rpc.getSignatureStatuses([sent]).send()).value[0]).toBeNull();
  });

  it('rejects a transaction whose blockhash it never issued with the BlockhashNotFound preflight error', async () => {
    const unknown = getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)));
    const { wire } = await signedUsdcTransfer(alice, bob.address, 5n, { blockhash: unknown, lastValidBlockHeight: 1000n });
    const err = await rejection(send(wire));
    expect(isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)).toBe(true);
    expect(isSolanaError((err as Error).cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)).toBe(true);
  });

  it('refuses a failing transfer at preflight (-32002 with the instruction error) but records it with meta.err when preflight is skipped', async () => {
    const { wire, signature } = await signedUsdcTransfer(alice, bob.address, 999_000_000n, await latest());
    const { json } = await rawRpc(sim.url, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [wire, { encoding: 'base64' }] });
    expect(json.error.code).toBe(-32002);
    expect(json.error.data.err).toEqual({ InstructionError: [1, { Custom: 1 }] });
    expect(json.error.message).toContain('custom program error: 0x1');
    expect((await rpc.getSignatureStatuses([signature as Signature]).send()).value[0]).toBeNull();

    const lamportsBefore = await balance(alice.address);
    await send(wire, true);
    const status = await landed(signature);
    expect(status.err).toEqual({ InstructionError: [1n, { Custom: 1n }] } as never);
    const tx = await rpc.getTransaction(signature as Signature, { encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    expect(tx!.meta!.err).not.toBeNull();
    expect(await balance(alice.address)).toBe(lamportsBefore - 5000n);
  });

  it('answers a resent landed transaction: signature again without preflight, AlreadyProcessed with it', async () => {
    const { wire, signature } = await signedUsdcTransfer(alice, bob.address, 7n, await latest());
    await send(wire);
    await landed(signature);
    const bobBefore = await tokenBalance(bob.address);
    expect(await send(wire, true)).toBe(signature as Signature);
    const { json } = await rawRpc(sim.url, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [wire, { encoding: 'base64' }] });
    expect(json.error.code).toBe(-32002);
    expect(json.error.data.err).toBe('AlreadyProcessed');
    expect(await tokenBalance(bob.address)).toBe(bobBefore);
  });

  it('simulates without signatures when sigVerify is false and replaces the blockhash on request', async () => {
    const unknown = getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)));
    const { wire } = await signedUsdcTransfer(alice, bob.address, 1n, { blockhash: unknown, lastValidBlockHeight: 0n });
    const bytes = new Uint8Array(getBase64Encoder().encode(wire));
    bytes.fill(0, 1, 65);
    const unsigned = getBase64Decoder().decode(bytes) as Base64EncodedWireTransaction;
    const stale = await rpc.simulateTransaction(unsigned, { encoding: 'base64', sigVerify: false }).send();
    expect(stale.value.err).toBe('BlockhashNotFound');
    const sim2 = await rpc.simulateTransaction(unsigned, { encoding: 'base64', replaceRecentBlockhash: true }).send();
    expect(sim2.value.err).toBeNull();
    expect(sim2.value.replacementBlockhash?.blockhash).toBeString();
    expect(sim2.value.unitsConsumed).toBeGreaterThan(0n);
  });

  it('answers jsonParsed getAccountInfo for the mint and for a token account as the real RPC does', async () => {
    const mint = await rpc.getAccountInfo(DEVNET_USDC, { encoding: 'jsonParsed' }).send();
    expect(mint.value!.data).toMatchObject({ program: 'spl-token', parsed: { type: 'mint', info: { decimals: 6, isInitialized: true, freezeAuthority: null } }, space: 82n });
    const ata = await rpc.getAccountInfo(await usdcAta(alice.address), { encoding: 'jsonParsed' }).send();
    expect(ata.value!.data).toMatchObject({
      program: 'spl-token',
      parsed: { type: 'account', info: { mint: DEVNET_USDC, owner: alice.address, state: 'initialized', isNative: false, tokenAmount: { decimals: 6 } } },
      space: 165n,
    });
    const wallet = await rpc.getAccountInfo(alice.address, { encoding: 'jsonParsed' }).send();
    expect(wallet.value!.data).toEqual(['', 'base64'] as never);
    const raw = await rpc.getAccountInfo(DEVNET_USDC, { encoding: 'base64' }).send();
    expect(raw.value!.owner).toBe('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' as Address);
  });

  it('lists token accounts by owner with a mint filter', async () => {
    const res = await rpc.getTokenAccountsByOwner(bob.address, { mint: DEVNET_USDC }, { encoding: 'jsonParsed' }).send();
    expect(res.value).toHaveLength(1);
    expect(res.value[0]!.pubkey).toBe(await usdcAta(bob.address));
  });

  it('answers getMultipleAccounts, getEpochInfo, getVersion, rent and fee queries in the real shapes', async () => {
    const many = await rpc.getMultipleAccounts([DEVNET_USDC, bob.address, (await generateKeyPairSigner()).address], { encoding: 'base64' }).send();
    expect(many.value[0]!.owner).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(many.value[2]).toBeNull();
    const epoch = await rpc.getEpochInfo().send();
    expect(epoch.blockHeight).toBeGreaterThan(0n);
    expect(epoch.slotsInEpoch).toBe(432_000n);
    expect((await rpc.getVersion().send())['solana-core']).toBeString();
    expect(BigInt(await rpc.getMinimumBalanceForRentExemption(165n).send())).toBe(2_039_280n);
    const { wire } = await signedUsdcTransfer(alice, bob.address, 1n, await latest());
    const message = getBase64Decoder().decode(new Uint8Array(getBase64Encoder().encode(wire)).subarray(65));
    const fee = await rpc.getFeeForMessage(message as TransactionMessageBytesBase64).send();
    expect(fee.value === null ? null : BigInt(fee.value)).toBe(5000n);
  });

  it('accepts a base58-encoded sendTransaction, the encoding the real RPC defaults to', async () => {
    // An amount no other test of this file sends: under one blockhash (a late tick on a loaded
    // machine) the same transfer would be the same signed bytes, refused as already processed.
    const { wire, signature } = await signedUsdcTransfer(alice, bob.address, 4n, await latest());
    const base58 = getBase58Decoder().decode(new Uint8Array(getBase64Encoder().encode(wire)));
    const { json } = await rawRpc(sim.url, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [base58] });
    expect(json.result).toBe(signature);
    expect((await landed(signature)).err).toBeNull();
  });

  it('answers an unknown method with -32601, malformed JSON with -32700, and batches in order', async () => {
    expect((await rawRpc(sim.url, { jsonrpc: '2.0', id: 7, method: 'getNoSuchThing', params: [] })).json).toEqual({
      jsonrpc: '2.0',
      error: { code: -32601, message: 'Method not found' },
      id: 7,
    });
    expect((await rawRpc(sim.url, '{not json')).json.error.code).toBe(-32700);
    const batch = await rawRpc(sim.url, [
      { jsonrpc: '2.0', id: 1, method: 'getGenesisHash' },
      { jsonrpc: '2.0', id: 2, method: 'nope' },
    ]);
    expect(batch.json[0]).toMatchObject({ id: 1, result: DEVNET_GENESIS_HASH });
    expect(batch.json[1]).toMatchObject({ id: 2, error: { code: -32601 } });
  });

  it('serves simnet_faucet to loopback callers: the owner gets a token account with the minted USDC', async () => {
    const carol = await generateKeyPairSigner();
    const { json } = await rawRpc(sim.url, { jsonrpc: '2.0', id: 1, method: 'simnet_faucet', params: [carol.address, '2500000', '1000000000'] });
    await landed(json.result);
    expect(await tokenBalance(carol.address)).toBe('2500000');
    expect(await balance(carol.address)).toBe(1_000_000_000n);
  });

  it('fails every call with HTTP 503 under the error fault and recovers when it is cleared', async () => {
    sim.setFault('error');
    const err = await rejection(rpc.getSlot().send());
    expect(isSolanaError(err, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR) && err.context.statusCode === 503).toBe(true);
    sim.setFault(null);
    expect(await rpc.getSlot().send()).toBeGreaterThan(0n);
  });

  it('holds calls under the hang fault until it is cleared', async () => {
    let settled = false;
    sim.setFault('hang');
    const pending = rpc.getGenesisHash().send().finally(() => (settled = true));
    await until(() => (logs.some((l) => l.event === 'simnet.rpc_held') ? true : undefined), 5000, 'a held call');
    expect(settled).toBe(false);
    sim.setFault(null);
    expect(String(await pending)).toBe(DEVNET_GENESIS_HASH);
  });
});
