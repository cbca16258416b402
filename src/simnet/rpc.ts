/**
 * The Solana JSON-RPC methods simnet serves, as a table: name → handler(params, context).
 * Answers follow the real RPC's shapes (`{context:{slot}, value}` where the real one wraps,
 * u64 values as numbers, the same error codes), so `@solana/kit`, web3.js-based clients and
 * the x402 facilitator use simnet as they would a cluster. Unknown names answer -32601.
 */
import { getCompiledTransactionMessageDecoder, getTransactionEncoder, isAddress, type Address, type TransactionMessageBytes } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { DEVNET_GENESIS_HASH } from '../solana/networks.ts';
import type { Chain, SubmitResult } from './chain.ts';
import { accountEncoding, encodeAccount, encodeTransaction, TRANSACTION_ENCODINGS, type DataSlice } from './encode.ts';
import type { Faucet } from './faucet.ts';
import type { ChainFaults, FaultPatch, FaultSettings } from './faults.ts';
import { computeUnitPrice } from './fees.ts';
import { invalidParam, invalidParams, RpcError } from './rpc-error.ts';
import type { CallStats } from './stats.ts';
import { decodeTokenAccount, TOKEN_2022_PROGRAM_ADDRESS, uiTokenAmount } from './tokens.ts';
import { decodeEncoded, decodeWire, verifySignatures, WireError, type DecodedTransaction } from './wire.ts';

/** What a handler may use: the chain, the faucet, the provider faults and counters, and facts about the caller. */
export interface RpcContext {
  chain: Chain;
  faucet: Faucet;
  faults: Readonly<ChainFaults>;
  stats: CallStats;
  /** Fault switching for `simnet_setFaults`: applies the patch, returns every fault's setting. */
  control: { setFaults(patch: FaultPatch): FaultSettings };
  /** True when the caller connected from a loopback address (gates `simnet_faucet` and the control methods). */
  loopback: boolean;
  log: (entry: Record<string, unknown>) => void;
}

type Handler = (params: unknown[], ctx: RpcContext) => unknown;

/** The RPC version simnet reports in `getVersion` and every `context`. */
const API_VERSION = '2.2.0';
const SLOTS_PER_EPOCH = 432_000n;
const MAX_SIGNATURES_PER_QUERY = 1000;
const MAX_STATUS_QUERIES = 256;
const MAX_MULTIPLE_ACCOUNTS = 100;
/** getRecentPrioritizationFees' cap on addresses (MAX_TX_ACCOUNT_LOCKS). */
const MAX_FEE_ACCOUNTS = 128;
const DROPPED_BELOW_FLOOR = 'priced below the congestion floor';

function withContext(ctx: RpcContext, value: unknown, slot = ctx.chain.blockHeight()): { context: { apiVersion: string; slot: bigint }; value: unknown } {
  return { context: { apiVersion: API_VERSION, slot }, value };
}

/** The slot a lagging node's status queries see: the chain's height less the lag fault's slots. */
function statusSlot(ctx: RpcContext): bigint {
  const height = ctx.chain.blockHeight();
  const lag = BigInt(ctx.faults.statusLagSlots ?? 0);
  return height > lag ? height - lag : 0n;
}

/** Whether a landed entry is visible at `slot` (a lagging node has not seen later ones). */
function visible(entry: { slot: number }, slot: bigint): boolean {
  return BigInt(entry.slot) <= slot;
}

function config(params: unknown[], index: number): Record<string, unknown> {
  const c = params[index];
  if (c === undefined || c === null) return {};
  if (typeof c !== 'object' || Array.isArray(c)) throw invalidParams(`expected a configuration object at position ${index}`);
  return c as Record<string, unknown>;
}

function text(params: unknown[], index: number, what: string): string {
  const v = params[index];
  if (typeof v !== 'string') throw invalidParams(`expected ${what} at position ${index}`);
  return v;
}

function address(value: unknown): Address {
  if (typeof value !== 'string' || !isAddress(value)) throw invalidParam('Invalid');
  return value;
}

function u64(value: unknown, what: string): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === 'string' && /^\d{1,20}$/.test(value) && BigInt(value) < 2n ** 64n) return BigInt(value);
  throw invalidParams(`invalid ${what}: expected a u64`);
}

/** Honours `minContextSlot`: the real node's -32016 when the answering view is older. Returns the view's slot. */
function contextSlot(cfg: Record<string, unknown>, slot: bigint): bigint {
  if (cfg.minContextSlot === undefined || cfg.minContextSlot === null) return slot;
  if (slot < u64(cfg.minContextSlot, 'minContextSlot')) {
    throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: slot });
  }
  return slot;
}

function dataSlice(cfg: Record<string, unknown>): DataSlice | undefined {
  const s = cfg.dataSlice as { offset?: unknown; length?: unknown } | undefined;
  if (s === undefined) return undefined;
  if (typeof s.offset !== 'number' || typeof s.length !== 'number') throw invalidParams('dataSlice needs numeric offset and length');
  return { offset: s.offset, length: s.length };
}

function accountValue(ctx: RpcContext, who: Address, cfg: Record<string, unknown>): unknown {
  const account = ctx.chain.account(who);
  return account === null ? null : encodeAccount(account, accountEncoding(cfg.encoding), (m) => ctx.chain.decimalsOf(m), dataSlice(cfg));
}

function decodeTransactionParam(params: unknown[], cfg: Record<string, unknown>): DecodedTransaction {
  const encoding = cfg.encoding ?? 'base58';
  try {
    return decodeWire(decodeEncoded(text(params, 0, 'an encoded transaction'), String(encoding)));
  } catch (e) {
    if (e instanceof WireError) throw invalidParams(e.message);
    throw e;
  }
}

function statusOf(ctx: RpcContext, signature: unknown, slot: bigint): unknown {
  const entry = typeof signature === 'string' ? ctx.chain.ledger.get(signature) : undefined;
  if (entry === undefined || !visible(entry, slot)) return null;
  return {
    slot: BigInt(entry.slot),
    confirmations: null,
    err: entry.err,
    status: entry.err === null ? { Ok: null } : { Err: entry.err },
    confirmationStatus: 'finalized',
  };
}

function sendResult(ctx: RpcContext, result: SubmitResult): string {
  switch (result.status) {
    case 'landed':
      return result.signature;
    case 'dropped':
      ctx.log({ event: 'simnet.tx_dropped', signature: result.signature, reason: result.reason });
      return result.signature;
    case 'rejected':
      if (result.kind === 'signature') throw new RpcError(-32003, 'Transaction signature verification failure');
      throw new RpcError(-32002, `Transaction simulation failed: ${result.outcome.errText ?? 'unknown error'}`, {
        err: result.outcome.err,
        logs: result.outcome.logs,
        accounts: null,
        unitsConsumed: result.outcome.unitsConsumed,
        returnData: result.outcome.returnData,
        innerInstructions: null,
        replacementBlockhash: null,
        loadedAccountsDataSize: 0,
        fee: null,
      });
  }
}

/**
 * sendTransaction. Preflight runs as usual; then, under the congestion fault, a transaction
 * priced below the floor is answered with its signature but never lands, as an overloaded
 * leader drops it. The same bytes land if re-sent once the fault is off.
 */
function send(params: unknown[], ctx: RpcContext): string {
  const cfg = config(params, 1);
  const d = decodeTransactionParam(params, cfg);
  const skipPreflight = cfg.skipPreflight === true;
  const floor = ctx.faults.congestionFloor;
  if (floor !== null && computeUnitPrice(d.message) < floor) {
    const refused = skipPreflight ? null : ctx.chain.preflight(d);
    if (refused !== null) return sendResult(ctx, refused);
    ctx.stats.dropped++;
    ctx.log({ event: 'simnet.tx_dropped', signature: d.signature, reason: DROPPED_BELOW_FLOOR, floor: floor.toString() });
    return d.signature;
  }
  return sendResult(ctx, ctx.chain.submit(d, { skipPreflight }));
}

function prioritizationFees(params: unknown[], ctx: RpcContext): unknown {
  const list = params[0] ?? [];
  if (!Array.isArray(list)) throw invalidParams('expected an array of account addresses');
  if (list.length > MAX_FEE_ACCOUNTS) throw invalidParams(`Too many inputs provided; max ${MAX_FEE_ACCOUNTS}`);
  return ctx.chain.fees.recent(ctx.chain.blockHeight(), list.map(address), ctx.faults.congestionFloor);
}

function simulate(params: unknown[], ctx: RpcContext): unknown {
  const cfg = config(params, 1);
  const sigVerify = cfg.sigVerify === true;
  const replaceRecentBlockhash = cfg.replaceRecentBlockhash === true;
  if (sigVerify && replaceRecentBlockhash) throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
  const d = decodeTransactionParam(params, cfg);
  if (sigVerify && !verifySignatures(d)) throw new RpcError(-32003, 'Transaction signature verification failure');
  const sim = ctx.chain.simulate(d, { replaceRecentBlockhash });
  const wanted = cfg.accounts as { addresses?: unknown; encoding?: unknown } | undefined;
  let accounts: unknown = null;
  if (wanted !== undefined) {
    if (!Array.isArray(wanted.addresses)) throw invalidParams('accounts.addresses must be an array');
    const encoding = accountEncoding(wanted.encoding ?? 'base64');
    const post = sim.postAccounts();
    accounts = wanted.addresses.map((a: unknown) => {
      const account = post.get(address(a)) ?? ctx.chain.account(address(a));
      return account === null ? null : encodeAccount(account, encoding, (m) => ctx.chain.decimalsOf(m));
    });
  }
  const o = sim.outcome;
  return withContext(ctx, {
    err: o.err,
    logs: o.logs,
    accounts,
    unitsConsumed: o.unitsConsumed,
    returnData: o.returnData,
    innerInstructions: cfg.innerInstructions === true ? o.innerInstructions : null,
    replacementBlockhash: sim.replacementBlockhash,
    loadedAccountsDataSize: 0,
    fee: o.err === null ? o.fee : null,
  });
}

function tokenAccountsByOwner(params: unknown[], ctx: RpcContext): unknown {
  const owner = address(params[0]);
  const filter = config(params, 1);
  const cfg = config(params, 2);
  let program: Address;
  let mint: Address | null = null;
  if (filter.mint !== undefined) {
    mint = address(filter.mint);
    const mintAccount = ctx.chain.account(mint);
    if (mintAccount === null || ctx.chain.decimalsOf(mint) === null) throw invalidParam('could not find mint');
    program = mintAccount.programAddress;
  } else if (filter.programId !== undefined) {
    program = address(filter.programId);
    if (program !== TOKEN_PROGRAM_ADDRESS && program !== TOKEN_2022_PROGRAM_ADDRESS) throw invalidParam('unrecognized Token program id');
  } else {
    throw invalidParams('expected a filter object with `mint` or `programId`');
  }
  const encoding = accountEncoding(cfg.encoding);
  const value = ctx.chain
    .programAccounts(program)
    .filter((a) => {
      const t = decodeTokenAccount(a);
      return t !== null && t.owner === owner && (mint === null || t.mint === mint);
    })
    .map((a) => ({ pubkey: a.address, account: encodeAccount(a, encoding, (m) => ctx.chain.decimalsOf(m), dataSlice(cfg)) }));
  return withContext(ctx, value);
}

function feeForMessage(params: unknown[], ctx: RpcContext): unknown {
  let d: DecodedTransaction;
  try {
    const messageBytes = decodeEncoded(text(params, 0, 'a base64 message'), 'base64') as unknown as TransactionMessageBytes;
    const header = getCompiledTransactionMessageDecoder().decode(messageBytes);
    const signers = header.staticAccounts.slice(0, header.header.numSignerAccounts);
    const wire = getTransactionEncoder().encode({ messageBytes, signatures: Object.fromEntries(signers.map((s) => [s, null])) });
    d = decodeWire(new Uint8Array(wire));
  } catch (e) {
    throw invalidParams(`invalid message: ${(e as Error).message}`);
  }
  return withContext(ctx, ctx.chain.feeForMessage(d));
}

/** The served methods. Every handler validates its own params and throws `RpcError`. */
export const METHODS: Readonly<Record<string, Handler>> = {
  getHealth: () => 'ok',
  getVersion: () => ({ 'solana-core': API_VERSION, 'feature-set': 0 }),
  getGenesisHash: () => DEVNET_GENESIS_HASH,
  getSlot: (_p, ctx) => ctx.chain.blockHeight(),
  getBlockHeight: (p, ctx) => contextSlot(config(p, 0), ctx.chain.blockHeight()),
  getEpochInfo: (_p, ctx) => {
    const slot = ctx.chain.blockHeight();
    return {
      absoluteSlot: slot,
      blockHeight: slot,
      epoch: slot / SLOTS_PER_EPOCH,
      slotIndex: slot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount: BigInt(ctx.chain.ledger.all().length),
    };
  },
  getLatestBlockhash: (p, ctx) => withContext(ctx, ctx.chain.latestBlockhash(), contextSlot(config(p, 0), ctx.chain.blockHeight())),
  isBlockhashValid: (p, ctx) => withContext(ctx, ctx.chain.isBlockhashValid(text(p, 0, 'a blockhash'))),
  getMinimumBalanceForRentExemption: (p, ctx) => ctx.chain.minimumBalanceForRentExemption(u64(p[0], 'data length')),
  getFeeForMessage: feeForMessage,
  getRecentPrioritizationFees: prioritizationFees,

  getBalance: (p, ctx) => withContext(ctx, ctx.chain.account(address(p[0]))?.lamports ?? 0n),
  getAccountInfo: (p, ctx) => {
    const cfg = config(p, 1);
    const slot = contextSlot(cfg, ctx.chain.blockHeight());
    return withContext(ctx, accountValue(ctx, address(p[0]), cfg), slot);
  },
  getMultipleAccounts: (p, ctx) => {
    const list = p[0];
    if (!Array.isArray(list)) throw invalidParams('expected an array of addresses');
    if (list.length > MAX_MULTIPLE_ACCOUNTS) throw invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
    const cfg = config(p, 1);
    const slot = contextSlot(cfg, ctx.chain.blockHeight());
    return withContext(ctx, list.map((a: unknown) => accountValue(ctx, address(a), cfg)), slot);
  },
  getTokenAccountBalance: (p, ctx) => {
    const account = ctx.chain.account(address(p[0]));
    if (account === null) throw invalidParam('could not find account');
    const token = decodeTokenAccount(account);
    const decimals = token === null ? null : ctx.chain.decimalsOf(token.mint);
    if (token === null || decimals === null) throw invalidParam('not a Token account');
    return withContext(ctx, uiTokenAmount(token.amount, decimals));
  },
  getTokenAccountsByOwner: tokenAccountsByOwner,

  sendTransaction: send,
  simulateTransaction: simulate,
  getSignatureStatuses: (p, ctx) => {
    const list = p[0];
    if (!Array.isArray(list)) throw invalidParams('expected an array of signatures');
    if (list.length > MAX_STATUS_QUERIES) throw invalidParams(`Too many inputs provided; max ${MAX_STATUS_QUERIES}`);
    const slot = contextSlot(config(p, 1), statusSlot(ctx));
    return withContext(ctx, list.map((s: unknown) => statusOf(ctx, s, slot)), slot);
  },
  getTransaction: (p, ctx) => {
    const signature = text(p, 0, 'a signature');
    const raw = p[1];
    const cfg = typeof raw === 'string' ? { encoding: raw } : config(p, 1);
    const encoding = cfg.encoding ?? 'json';
    if (typeof encoding !== 'string' || !TRANSACTION_ENCODINGS.includes(encoding)) throw invalidParams(`unknown variant \`${String(encoding)}\``);
    const max = cfg.maxSupportedTransactionVersion;
    if (max !== undefined && max !== null && typeof max !== 'number') throw invalidParams('maxSupportedTransactionVersion must be a number');
    const entry = ctx.chain.ledger.get(signature);
    return entry === undefined || !visible(entry, statusSlot(ctx)) ? null : encodeTransaction(entry, encoding, typeof max === 'number' ? max : undefined);
  },
  getSignaturesForAddress: (p, ctx) => {
    const who = address(p[0]);
    const cfg = config(p, 1);
    const limit = cfg.limit ?? MAX_SIGNATURES_PER_QUERY;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_SIGNATURES_PER_QUERY) {
      throw invalidParams(`Invalid limit; max ${MAX_SIGNATURES_PER_QUERY}`);
    }
    const bound = (v: unknown) => (typeof v === 'string' ? v : undefined);
    const maxSlot = Number(contextSlot(cfg, statusSlot(ctx)));
    return ctx.chain.ledger.signaturesFor(who, { limit, before: bound(cfg.before), until: bound(cfg.until), maxSlot }).map((e) => ({
      signature: e.signature,
      slot: BigInt(e.slot),
      err: e.err,
      memo: e.memo,
      blockTime: BigInt(e.blockTime),
      confirmationStatus: 'finalized',
    }));
  },

  requestAirdrop: async (p, ctx) => {
    const to = address(p[0]);
    const amount = u64(p[1], 'lamports');
    try {
      return await ctx.faucet.airdrop(ctx.chain, to, amount);
    } catch (e) {
      throw new RpcError(-32603, `airdrop request failed: ${(e as Error).message}`);
    }
  },
  /** Simnet's own faucet for `agent-wallet admin faucet`: [owner, usdcBaseUnits, lamports?] → mint signature. */
  simnet_faucet: async (p, ctx) => {
    if (!ctx.loopback) throw new RpcError(-32601, 'Method not found');
    const owner = address(p[0]);
    const usdc = u64(p[1], 'USDC amount');
    const sol = p[2] === undefined || p[2] === null ? undefined : u64(p[2], 'lamports');
    try {
      return await ctx.faucet.fund(ctx.chain, owner, usdc, sol);
    } catch (e) {
      throw new RpcError(-32603, (e as Error).message);
    }
  },
};
