import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test';
import { networkInterfaces } from 'node:os';
import {
  createSolanaRpc,
  generateKeyPairSigner,
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  type Address,
  type Base64EncodedWireTransaction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { rawRpc, signedUsdcTransfer, until, usdcAta } from './helpers.ts';

// One simnet on every interface: loopback callers use 127.0.0.1, the loopback gate is checked through eth0.
let sim: Simnet;
let url: string;
let rpc: ReturnType<typeof createSolanaRpc>;
let alice: KeyPairSigner;
const logs: Record<string, unknown>[] = [];

beforeAll(async () => {
  sim = await startSimnet({ port: 0, host: '0.0.0.0', slotMs: 10, log: (e) => logs.push(e) });
  url = `http://127.0.0.1:${sim.port}`;
  rpc = createSolanaRpc(url);
  alice = await generateKeyPairSigner();
  await sim.faucet(alice.address, 100_000_000n, 10_000_000_000n);
  // A chain older than the fee window (150 slots) and than any lag the tests set.
  await until(() => (sim.blockHeight() > 160n ? true : undefined), 20_000, '160 blocks');
});

afterEach(() => {
  sim.setCongestion(null);
  sim.setRateLimit(null);
  sim.setStatusLag(null);
  sim.setFault(null);
});

afterAll(async () => {
  await sim.stop();
});

async function latest() {
  return (await rpc.getLatestBlockhash().send()).value;
}

async function send(wire: string): Promise<Signature> {
  return rpc.sendTransaction(wire as Base64EncodedWireTransaction, { encoding: 'base64' }).send();
}

async function landed(signature: string) {
  return until(async () => (await rpc.getSignatureStatuses([signature as Signature]).send()).value[0] ?? undefined, 5000, `status of ${signature}`);
}

async function tokenAmount(owner: Address): Promise<bigint | null> {
  const { value } = await rpc.getMultipleAccounts([await usdcAta(owner)], { encoding: 'base64', dataSlice: { offset: 64, length: 8 } }).send();
  const account = value[0];
  if (account === null || account === undefined) return null;
  const bytes = Buffer.from(account.data[0], 'base64');
  return bytes.readBigUInt64LE(0);
}

async function blocksPass(n: bigint): Promise<void> {
  const start = sim.blockHeight();
  await until(() => (sim.blockHeight() >= start + n ? true : undefined), 10_000, `${n} blocks`);
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail');
}

function call(method: string, params: unknown[] = [], id: number = 1) {
  return { jsonrpc: '2.0', id, method, params };
}

describe('getRecentPrioritizationFees', () => {
  it('reports 150 consecutive slots oldest first, with a landed price on its slot for the accounts it wrote', async () => {
    const carol = await generateKeyPairSigner();
    const { wire, signature } = await signedUsdcTransfer(alice, carol.address, 1n, await latest(), 12_345n);
    await send(wire);
    const status = await landed(signature);
    const carolAta = await usdcAta(carol.address);
    const fees = await rpc.getRecentPrioritizationFees([carolAta]).send();
    expect(fees).toHaveLength(150);
    fees.forEach((f, i) => i > 0 && expect(f.slot).toBe(fees[i - 1]!.slot + 1n));
    expect(fees.at(-1)!.slot).toBeGreaterThanOrEqual(status.slot);
    expect(fees.find((f) => f.slot === status.slot)!.prioritizationFee).toBe(12_345n as never);
    // Carol's account was written in that slot only: every other slot reports the (unpriced) market.
    expect(fees.filter((f) => f.slot !== status.slot).every((f) => f.prioritizationFee === 0n)).toBe(true);
    const all = await rpc.getRecentPrioritizationFees().send();
    expect(all.find((f) => f.slot === status.slot)!.prioritizationFee as bigint).toBeLessThanOrEqual(12_345n);
  });

  it('raises every slot to the congestion floor, keeping prices above it', async () => {
    const dave = await generateKeyPairSigner();
    const { wire, signature } = await signedUsdcTransfer(alice, dave.address, 1n, await latest(), 9_000n);
    await send(wire);
    const { slot } = await landed(signature);
    sim.setCongestion(5_000n);
    const fees = await rpc.getRecentPrioritizationFees([await usdcAta(dave.address)]).send();
    expect(fees.every((f) => f.prioritizationFee >= 5_000n)).toBe(true);
    expect(fees.find((f) => f.slot === slot)!.prioritizationFee).toBe(9_000n as never);
    sim.setCongestion(null);
    expect((await rpc.getRecentPrioritizationFees([alice.address]).send()).some((f) => f.prioritizationFee === 0n)).toBe(true);
  });

  it('refuses more than 128 addresses with -32602, like the real node', async () => {
    const many = await Promise.all(Array.from({ length: 129 }, async () => (await generateKeyPairSigner()).address));
    const { json } = await rawRpc(url, call('getRecentPrioritizationFees', [many]));
    expect(json.error.code).toBe(-32602);
    const ok = await rawRpc(url, call('getRecentPrioritizationFees', [many.slice(0, 128)]));
    expect(ok.json.result).toHaveLength(150);
  });
});

describe('congestion fault', () => {
  it('drops an unpriced transfer (signature returned, never lands) while a priced one lands; the same bytes land once it is cleared', async () => {
    const erin = await generateKeyPairSigner();
    sim.resetStats();
    sim.setCongestion(1_000n);
    const before = await tokenAmount(alice.address);
    const unpriced = await signedUsdcTransfer(alice, erin.address, 10n, await latest());
    expect(await send(unpriced.wire)).toBe(unpriced.signature as Signature);
    expect(logs).toContainEqual(expect.objectContaining({ event: 'simnet.tx_dropped', signature: unpriced.signature, reason: 'priced below the congestion floor' }));

    const priced = await signedUsdcTransfer(alice, erin.address, 20n, await latest(), 1_000n);
    await send(priced.wire);
    expect((await landed(priced.signature)).err).toBeNull();
    await blocksPass(3n);
    expect((await rpc.getSignatureStatuses([unpriced.signature as Signature]).send()).value[0]).toBeNull();
    expect(await tokenAmount(erin.address)).toBe(20n);
    expect(await tokenAmount(alice.address)).toBe(before! - 20n);
    expect(sim.stats().dropped).toBe(1);

    sim.setCongestion(null);
    expect(await send(unpriced.wire)).toBe(unpriced.signature as Signature);
    expect((await landed(unpriced.signature)).err).toBeNull();
    expect(await tokenAmount(erin.address)).toBe(30n);
  });

  it('still runs preflight: a failing transfer is refused with -32002, not dropped', async () => {
    sim.resetStats();
    sim.setCongestion(1_000n);
    const { wire } = await signedUsdcTransfer(alice, alice.address, 10n ** 15n, await latest());
    const err = await rejection(send(wire));
    expect(isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)).toBe(true);
    expect(sim.stats().dropped).toBe(0);
  });
});

describe('rate-limit fault', () => {
  it('answers HTTP 429 with Retry-After: 1 past the limit, executes nothing of it, and counts it', async () => {
    sim.resetStats();
    sim.setRateLimit({ rps: 5, retryAfter: true });
    for (let i = 0; i < 5; i++) expect((await rawRpc(url, call('getSlot'))).status).toBe(200);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call('getBlockHeight')) });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.text()).toBe('{"jsonrpc":"2.0","error":{"code":429,"message":"Too many requests for a specific RPC call"},"id":null}');
    const err = await rejection(rpc.getSlot().send());
    expect(isSolanaError(err, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR) && err.context.statusCode === 429).toBe(true);
    const stats = sim.stats();
    expect(stats.calls).toEqual({ getSlot: 5 });
    expect(stats.rateLimited).toBe(2);
    expect(stats.httpRequests).toBe(7);
  });

  it('sends no Retry-After header when configured so', async () => {
    sim.setRateLimit({ rps: 1, retryAfter: false });
    expect((await rawRpc(url, call('getSlot'))).status).toBe(200);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call('getSlot')) });
    expect(res.status).toBe(429);
    expect(res.headers.has('retry-after')).toBe(false);
  });

  it('counts each call of a batch and refuses a batch above the limit whole', async () => {
    sim.resetStats();
    sim.setRateLimit({ rps: 5, retryAfter: true });
    const five = await rawRpc(url, [1, 2, 3, 4, 5].map((id) => call('getSlot', [], id)));
    expect(five.status).toBe(200);
    expect(five.json).toHaveLength(5);
    expect(sim.stats().calls.getSlot).toBe(5);

    sim.setRateLimit(null);
    sim.setRateLimit({ rps: 5, retryAfter: true });
    const frank = await generateKeyPairSigner();
    const six = await rawRpc(url, [call('requestAirdrop', [frank.address, 1_000_000_000], 1), ...[2, 3, 4, 5, 6].map((id) => call('getSlot', [], id))]);
    expect(six.status).toBe(429);
    sim.setRateLimit(null);
    expect((await rpc.getBalance(frank.address).send()).value).toBe(0n as never);
    const stats = sim.stats();
    expect(stats.rateLimited).toBe(6);
    expect(stats.calls.requestAirdrop).toBeUndefined();
  });

  it('serves every call again once cleared', async () => {
    sim.setRateLimit({ rps: 1, retryAfter: true });
    await rpc.getSlot().send();
    sim.setRateLimit(null);
    for (let i = 0; i < 20; i++) await rpc.getSlot().send();
  });
});

describe('lagging-node fault', () => {
  it('hides a fresh transaction from status queries until the lag has passed, then shows it', async () => {
    const lag = 50;
    sim.setStatusLag(lag);
    const gina = await generateKeyPairSigner();
    const { wire, signature } = await signedUsdcTransfer(alice, gina.address, 1n, await latest());
    const heightBefore = sim.blockHeight();
    await send(wire);
    const statuses = await rpc.getSignatureStatuses([signature as Signature]).send();
    const heightAfter = sim.blockHeight();
    expect(statuses.value[0]).toBeNull();
    expect(statuses.context.slot).toBeGreaterThanOrEqual(heightBefore - BigInt(lag));
    expect(statuses.context.slot).toBeLessThanOrEqual(heightAfter - BigInt(lag));
    expect(await rpc.getTransaction(signature as Signature, { encoding: 'json', maxSupportedTransactionVersion: 0 }).send()).toBeNull();
    expect(await rpc.getSignaturesForAddress(await usdcAta(gina.address)).send()).toEqual([]);
    // The account itself is current: only the status view lags.
    expect(await tokenAmount(gina.address)).toBe(1n);

    const status = await landed(signature);
    expect(status.slot).toBeLessThanOrEqual(sim.blockHeight() - BigInt(lag));
    expect(await rpc.getTransaction(signature as Signature, { encoding: 'json', maxSupportedTransactionVersion: 0 }).send()).not.toBeNull();
    expect((await rpc.getSignaturesForAddress(await usdcAta(gina.address)).send()).map((s) => s.signature)).toEqual([signature as Signature]);
  });

  it('answers -32016 when minContextSlot is ahead of the answering view, and serves it once reached', async () => {
    sim.setStatusLag(10);
    const height = await rpc.getBlockHeight().send();
    const err = await rejection(rpc.getSignatureStatuses([], { minContextSlot: height } as never).send());
    expect(isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED)).toBe(true);
    const { json } = await rawRpc(url, call('getSignatureStatuses', [[], { minContextSlot: Number(height) }]));
    expect(json.error).toMatchObject({ code: -32016, message: 'Minimum context slot has not been reached' });
    expect(json.error.data.contextSlot).toBeLessThan(Number(height));
    sim.setStatusLag(null);
    expect((await rpc.getSignatureStatuses([], { minContextSlot: height } as never).send()).context.slot).toBeGreaterThanOrEqual(height);

    const ahead = (await rpc.getBlockHeight().send()) + 1_000n;
    for (const pending of [
      rpc.getBlockHeight({ minContextSlot: ahead }).send(),
      rpc.getLatestBlockhash({ minContextSlot: ahead }).send(),
      rpc.getAccountInfo(alice.address, { minContextSlot: ahead }).send(),
      rpc.getMultipleAccounts([alice.address], { minContextSlot: ahead }).send(),
    ]) {
      expect(isSolanaError(await rejection(pending), SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED)).toBe(true);
    }
    const reached = await rpc.getBlockHeight().send();
    expect(await rpc.getBlockHeight({ minContextSlot: reached }).send()).toBeGreaterThanOrEqual(reached);
    expect((await rpc.getAccountInfo(alice.address, { minContextSlot: reached }).send()).value).not.toBeNull();
  });
});

describe('getMultipleAccounts as the chain client reads it', () => {
  it('slices a token account to its amount (offset 64, length 8) and answers null for a missing account', async () => {
    const missing = (await generateKeyPairSigner()).address;
    const { value } = await rpc.getMultipleAccounts([await usdcAta(alice.address), missing], { encoding: 'base64', dataSlice: { offset: 64, length: 8 } }).send();
    expect(value).toHaveLength(2);
    expect(value[0]!.owner).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(value[0]!.space).toBe(165n);
    const amount = Buffer.from(value[0]!.data[0], 'base64');
    expect(amount).toHaveLength(8);
    expect(amount.readBigUInt64LE(0)).toBe(BigInt((await rpc.getTokenAccountBalance(await usdcAta(alice.address)).send()).value.amount));
    expect(value[1]).toBeNull();
  });
});

describe('call accounting and control methods', () => {
  it('counts calls per method, HTTP requests and batch elements; control calls are not counted', async () => {
    sim.resetStats();
    await rpc.getSlot().send();
    await rpc.getSlot().send();
    await rawRpc(url, [call('getBlockHeight', [], 1), call('getHealth', [], 2), call('getSlot', [], 3)]);
    const expected = { calls: { getSlot: 3, getBlockHeight: 1, getHealth: 1 }, total: 5, httpRequests: 3, rateLimited: 0, dropped: 0 };
    expect(sim.stats()).toEqual(expected);
    expect((await rawRpc(url, call('simnet_stats'))).json.result).toEqual(expected);
    expect((await rawRpc(url, call('simnet_stats'))).json.result).toEqual(expected);
    expect((await rawRpc(url, call('simnet_resetStats'))).json.result).toBe(true);
    expect(sim.stats()).toEqual({ calls: {}, total: 0, httpRequests: 0, rateLimited: 0, dropped: 0 });
  });

  it('switches faults with simnet_setFaults (only the keys given change) and lets control calls through every fault', async () => {
    const set = async (faults: unknown) => (await rawRpc(url, call('simnet_setFaults', [faults]))).json;
    expect((await set({ congestion_floor: 2000, status_lag_slots: 3 })).result).toEqual({
      congestion_floor: 2000,
      rate_limit_rps: null,
      rate_limit_retry_after: null,
      status_lag_slots: 3,
      mode: null,
    });
    expect((await set({ rate_limit_rps: 1 })).result).toMatchObject({ congestion_floor: 2000, rate_limit_rps: 1, rate_limit_retry_after: true, status_lag_slots: 3 });
    expect(sim.faults()).toMatchObject({ congestionFloor: 2000n, rateLimit: { rps: 1, retryAfter: true }, statusLagSlots: 3 });
    expect((await set({ rate_limit_retry_after: false })).result.rate_limit_retry_after).toBe(false);

    expect((await rawRpc(url, call('getSlot'))).status).toBe(200);
    expect((await rawRpc(url, call('getSlot'))).status).toBe(429);
    expect((await rawRpc(url, call('simnet_stats'))).status).toBe(200);
    await set({ mode: 'error' });
    expect((await rawRpc(url, call('getSlot'))).status).toBe(503);
    expect((await set({ mode: null, rate_limit_rps: null, congestion_floor: null, status_lag_slots: null })).result).toEqual({
      congestion_floor: null,
      rate_limit_rps: null,
      rate_limit_retry_after: null,
      status_lag_slots: null,
      mode: null,
    });
    expect((await rawRpc(url, call('getSlot'))).status).toBe(200);
  });

  it('refuses a malformed fault patch with -32602 and changes nothing', async () => {
    for (const bad of [{ rate_limit_rps: 0 }, { congestion_floor: -1 }, { status_lag_slots: 1.5 }, { mode: 'slow' }, { surprise: true }, { rate_limit_retry_after: false }, 'error']) {
      const { json } = await rawRpc(url, call('simnet_setFaults', [bad]));
      expect(json.error.code).toBe(-32602);
    }
    expect(sim.faults()).toEqual({ congestionFloor: null, rateLimit: null, statusLagSlots: null, mode: null });
  });

  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i !== undefined && !i.internal && i.family === 'IPv4')?.address;

  it.skipIf(external === undefined)('answers the control methods with -32601 to a caller from another host, like simnet_faucet', async () => {
    const remote = `http://${external}:${sim.port}`;
    for (const method of ['simnet_stats', 'simnet_resetStats', 'simnet_setFaults']) {
      const { json } = await rawRpc(remote, call(method, [{ mode: 'error' }]));
      expect(json.error).toEqual({ code: -32601, message: 'Method not found' });
    }
    expect(sim.faults().mode).toBeNull();
    expect((await rawRpc(remote, call('getSlot'))).status).toBe(200);
  });
});
