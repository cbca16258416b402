/**
 * The chain port: the ONLY module that talks to a Solana RPC endpoint (devnet, mainnet, or the
 * embedded simnet, which serves the same JSON-RPC). Everything above it sees plain data and two
 * error types: ChainUnavailableError (retry later) and ChainRejectedError (the cluster refused a
 * transaction). Reads use `confirmed` commitment: a payment shows as soon as a supermajority voted.
 */
import {
  createSolanaRpcFromTransport,
  getBase64Decoder,
  getBase64Encoder,
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_LEN_MISMATCH,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__JSON_RPC__INTERNAL_ERROR,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NODE_UNHEALTHY,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  SOLANA_ERROR__TRANSACTION_ERROR__SIGNATURE_FAILURE,
  type Address,
  type Base64EncodedWireTransaction,
  type Signature,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { usdcAta } from './ata.ts';
import { ChainRejectedError, ChainUnavailableError, type ChainRejectionKind } from './errors.ts';
import { RpcBudget } from './rpc-budget.ts';
import { createProviderTransport, type RpcObserver } from './rpc-transport.ts';

/** A status as `getSignatureStatuses` reports it; null when the cluster does not know the signature. */
export interface SignatureStatus {
  slot: bigint;
  err: unknown | null;
  confirmationStatus: string | null;
}

/** One transaction touching an address, newest first as the RPC lists them. */
export interface AddressSignature {
  signature: string;
  slot: bigint;
  err: unknown | null;
  blockTime: bigint | null;
}

/** How one token account's balance changed in a transaction (post − pre, base units). */
export interface TokenDelta {
  owner: Address;
  mint: Address;
  account: Address;
  delta: bigint;
}

/** The token movements of one landed transaction, read from its pre/post token balances. */
export interface TokenTransfers {
  slot: bigint;
  blockTime: bigint | null;
  err: unknown | null;
  /** Non-zero changes only. */
  deltas: TokenDelta[];
  /** All account keys, static then loaded (lookup tables), as the RPC lists them. */
  accountKeys: Address[];
  /** The transaction's signatures (base58) in signer order; the first is its id. */
  signatures: string[];
}

/** What the rest of the daemon may ask of the chain. Every method throws ChainUnavailableError when the RPC cannot answer. */
export interface ChainPort {
  getLatestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: bigint }>;
  getBlockHeight(): Promise<bigint>;
  /**
   * The block height and the slot of the one node view that reported it (getEpochInfo), so a later
   * answer's context slot can be compared with the slot at which that height was seen.
   */
  getBlockHeightAndSlot(): Promise<{ blockHeight: bigint; slot: bigint }>;
  /** Base units in ATA(owner, mint); 0n when that account does not exist. */
  getTokenBalance(owner: Address, mint: Address): Promise<bigint>;
  tokenAccountExists(owner: Address, mint: Address): Promise<boolean>;
  getSolBalance(address: Address): Promise<bigint>;
  accountExists(address: Address): Promise<boolean>;
  /**
   * Broadcasts signed wire bytes with preflight; returns the signature. Throws ChainRejectedError
   * when the cluster refuses them. A ChainUnavailableError here is ambiguous (the bytes may have
   * arrived): poll the signature and re-send the SAME bytes, never re-sign.
   */
  sendRawTransaction(wire: Uint8Array): Promise<string>;
  getSignatureStatuses(sigs: string[]): Promise<(SignatureStatus | null)[]>;
  /**
   * One getSignatureStatuses call (at most 256 signatures) with the slot of the node view that
   * answered it, so an absence can be trusted only from a view at or past a known height.
   */
  getSignatureStatusesAt(sigs: string[]): Promise<{ contextSlot: bigint; statuses: (SignatureStatus | null)[] }>;
  /** `minContextSlot`: answered only by a view at or past that slot (the node retries until one is). */
  getSignaturesForAddress(address: Address, opts?: { until?: string; before?: string; limit?: number; minContextSlot?: bigint }): Promise<AddressSignature[]>;
  /** Null when the cluster does not know (or no longer keeps) the transaction. */
  getTokenTransfersOf(signature: string): Promise<TokenTransfers | null>;
  /** Simulates without signature verification (the bytes may be unsigned or partially signed). */
  simulate(wire: Uint8Array): Promise<{ err: unknown | null; logs: string[] }>;
  /**
   * The amounts (base units) held by SPL token accounts, in the order asked; null for an account
   * that does not exist or is not a token account. Read in batches of 100 with `dataSlice`, so
   * watching many accounts costs one call per hundred.
   */
  getTokenAmounts(accounts: Address[]): Promise<{ amounts: (bigint | null)[]; slot: bigint }>;
  /**
   * Per-slot prioritization fees (micro-lamports per compute unit) the cluster saw in its recent
   * blocks for transactions locking `writable` (at most 128 addresses), oldest first.
   */
  getRecentPrioritizationFees(writable: Address[]): Promise<bigint[]>;
  /** The wire bytes of a landed transaction; null when the cluster does not know it (the reconciliation after a restore). */
  getTransactionWire(signature: string): Promise<Uint8Array | null>;
  /** The cluster's genesis hash (admin doctor checks it matches the network). */
  getGenesisHash(): Promise<string>;
  /** The chain's wall clock: the Clock sysvar's unix_timestamp, in seconds (admin doctor's skew check). */
  getChainUnixTime(): Promise<bigint>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Background jobs may wait this many attempt timeouts for the budget and retries; agent calls one. */
const BACKGROUND_DEADLINE_FACTOR = 3;
/** The RPC's cap on signatures per getSignatureStatuses call. */
const STATUS_BATCH = 256;
/** The RPC's cap on keys per getMultipleAccounts call. */
const ACCOUNTS_BATCH = 100;
/** The RPC's cap on addresses per getRecentPrioritizationFees call. */
const PRIORITY_FEE_ACCOUNTS = 128;
/** Where an SPL token account keeps its amount (u64 LE): after the mint and owner keys. */
const TOKEN_AMOUNT_OFFSET = 64;
/** An SPL token account's size (no extensions under the classic token program). */
const TOKEN_ACCOUNT_SIZE = 165;
const CLOCK_SYSVAR = 'SysvarC1ock11111111111111111111111111111111' as Address;
/** Where the Clock sysvar keeps unix_timestamp (i64 LE): after slot, epoch_start_timestamp, epoch and leader_schedule_epoch. */
const CLOCK_UNIX_TIMESTAMP_OFFSET = 32;
/**
 * Messages built at about the same time share one recent blockhash for this long: concurrent
 * payments cost one getLatestBlockhash between them. A blockhash stays valid for 150 blocks (about
 * a minute), so this costs a message at most one block of its life; messages stay distinct
 * because each carries its transaction id in the memo.
 */
const BLOCKHASH_SHARE_MS = 400;
const COMMITMENT = 'confirmed';

export interface ChainPortOptions {
  /** One attempt is abandoned after this long (default 10 s). */
  timeoutMs?: number;
  /** How long an agent-facing call may wait for the budget and retry in all (default: timeoutMs); background calls get three times as long. */
  deadlineMs?: number;
  /** Endpoints to fail over to on errors and timeouts (solana.rpc_urls). */
  fallbackUrls?: string[];
  /** The client-side request budget, calls per second for all use; 0 or absent = unlimited. */
  maxRps?: number;
  /** Told of every attempt (method, outcome, seconds), for /metrics. */
  observe?: RpcObserver;
  log?: (event: string, fields: Record<string, unknown>) => void;
}

/** A ChainPort over `@solana/kit`'s RPC client on the provider transport (budget, 429 back-off, failover). */
export function createRpcChainPort(rpcUrl: string, opts: ChainPortOptions = {}): ChainPort {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadlineMs = opts.deadlineMs ?? timeoutMs;
  const rpc = createSolanaRpcFromTransport(
    createProviderTransport({
      urls: [rpcUrl, ...(opts.fallbackUrls ?? [])],
      budget: new RpcBudget(opts.maxRps ?? 0),
      timeoutMs,
      deadlineMs: { agent: deadlineMs, background: deadlineMs * BACKGROUND_DEADLINE_FACTOR },
      observe: opts.observe,
      log: opts.log,
    }),
  );
  const base64 = getBase64Decoder();
  let sharedBlockhash: { at: number; value: Promise<{ blockhash: string; lastValidBlockHeight: bigint }> } | null = null;

  /** Runs one RPC request, mapping every failure to a chain error (the transport already waited and retried). */
  async function call<T>(what: string, request: { send(): Promise<T> }): Promise<T> {
    try {
      return await request.send();
    } catch (e) {
      throw chainError(what, e);
    }
  }

  async function accountInfo(address: Address) {
    const { value } = await call('getAccountInfo', rpc.getAccountInfo(address, { encoding: 'base64', commitment: COMMITMENT }));
    return value;
  }

  /**
   * The amount of `owner`'s token account for `mint`, or null when there is none. Read straight
   * from the layout (mint, owner, then the u64 amount): decoding the whole account turned four
   * addresses into base58 through BigInt on every balance read.
   */
  async function tokenAccountAmount(owner: Address, mint: Address): Promise<bigint | null> {
    const info = await accountInfo(await usdcAta(owner, mint));
    if (info === null || info.owner !== TOKEN_PROGRAM_ADDRESS) return null;
    const data = Buffer.from(info.data[0], 'base64');
    if (data.length !== TOKEN_ACCOUNT_SIZE) throw new Error(`the token account of ${owner} for ${mint} is ${data.length} bytes, not ${TOKEN_ACCOUNT_SIZE}`);
    return data.readBigUInt64LE(TOKEN_AMOUNT_OFFSET);
  }

  const wireOf = (wire: Uint8Array) => base64.decode(wire) as Base64EncodedWireTransaction;

  return {
    getLatestBlockhash() {
      const now = performance.now();
      if (sharedBlockhash === null || now - sharedBlockhash.at > BLOCKHASH_SHARE_MS) {
        const value = call('getLatestBlockhash', rpc.getLatestBlockhash({ commitment: COMMITMENT })).then(({ value: v }) => ({
          blockhash: v.blockhash as string,
          lastValidBlockHeight: v.lastValidBlockHeight,
        }));
        const entry = { at: now, value };
        sharedBlockhash = entry;
        // A failed read is not shared: the next caller asks again.
        value.catch(() => {
          if (sharedBlockhash === entry) sharedBlockhash = null;
        });
      }
      return sharedBlockhash.value;
    },

    getBlockHeight() {
      return call('getBlockHeight', rpc.getBlockHeight({ commitment: COMMITMENT }));
    },

    async getBlockHeightAndSlot() {
      const info = await call('getEpochInfo', rpc.getEpochInfo({ commitment: COMMITMENT }));
      return { blockHeight: info.blockHeight, slot: info.absoluteSlot };
    },

    async getTokenBalance(owner, mint) {
      return (await tokenAccountAmount(owner, mint)) ?? 0n;
    },

    async tokenAccountExists(owner, mint) {
      return (await tokenAccountAmount(owner, mint)) !== null;
    },

    async getSolBalance(address) {
      const { value } = await call('getBalance', rpc.getBalance(address, { commitment: COMMITMENT }));
      return value;
    },

    async accountExists(address) {
      return (await accountInfo(address)) !== null;
    },

    sendRawTransaction(wire) {
      return call(
        'sendTransaction',
        rpc.sendTransaction(wireOf(wire), { encoding: 'base64', skipPreflight: false, preflightCommitment: COMMITMENT }),
      );
    },

    async getSignatureStatuses(sigs) {
      const out: (SignatureStatus | null)[] = [];
      for (let i = 0; i < sigs.length; i += STATUS_BATCH) {
        const batch = sigs.slice(i, i + STATUS_BATCH) as Signature[];
        const { value } = await call('getSignatureStatuses', rpc.getSignatureStatuses(batch, { searchTransactionHistory: true }));
        for (const s of value) {
          out.push(s === null ? null : { slot: s.slot, err: plain(s.err), confirmationStatus: s.confirmationStatus ?? null });
        }
      }
      return out;
    },

    async getSignatureStatusesAt(sigs) {
      if (sigs.length > STATUS_BATCH) throw new RangeError(`at most ${STATUS_BATCH} signatures, got ${sigs.length}`);
      const { context, value } = await call('getSignatureStatuses', rpc.getSignatureStatuses(sigs as Signature[], { searchTransactionHistory: true }));
      return {
        contextSlot: context.slot,
        statuses: value.map((s) => (s === null ? null : { slot: s.slot, err: plain(s.err), confirmationStatus: s.confirmationStatus ?? null })),
      };
    },

    async getSignaturesForAddress(address, o = {}) {
      const list = await call(
        'getSignaturesForAddress',
        rpc.getSignaturesForAddress(address, {
          commitment: COMMITMENT,
          ...(o.until !== undefined && { until: o.until as Signature }),
          ...(o.before !== undefined && { before: o.before as Signature }),
          ...(o.limit !== undefined && { limit: o.limit }),
          ...(o.minContextSlot !== undefined && { minContextSlot: o.minContextSlot }),
        }),
      );
      return list.map((s) => ({ signature: s.signature, slot: s.slot, err: plain(s.err), blockTime: s.blockTime ?? null }));
    },

    async getTokenTransfersOf(signature) {
      const tx = await call(
        'getTransaction',
        rpc.getTransaction(signature as Signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: COMMITMENT }),
      );
      if (tx === null) return null;
      const accountKeys: Address[] = [
        ...tx.transaction.message.accountKeys,
        ...(tx.meta?.loadedAddresses?.writable ?? []),
        ...(tx.meta?.loadedAddresses?.readonly ?? []),
      ];
      const byAccount = new Map<number, { owner?: Address; mint: Address; pre: bigint; post: bigint }>();
      for (const [side, balances] of [['pre', tx.meta?.preTokenBalances], ['post', tx.meta?.postTokenBalances]] as const) {
        for (const b of balances ?? []) {
          const index = Number(b.accountIndex);
          const entry = byAccount.get(index) ?? { mint: b.mint, pre: 0n, post: 0n };
          entry.owner ??= b.owner;
          entry[side] = BigInt(b.uiTokenAmount.amount);
          byAccount.set(index, entry);
        }
      }
      const deltas: TokenDelta[] = [];
      for (const [index, e] of byAccount) {
        const account = accountKeys[index];
        if (account === undefined || e.owner === undefined || e.post === e.pre) continue;
        deltas.push({ owner: e.owner, mint: e.mint, account, delta: e.post - e.pre });
      }
      return { slot: tx.slot, blockTime: tx.blockTime ?? null, err: plain(tx.meta?.err ?? null), deltas, accountKeys, signatures: [...tx.transaction.signatures] };
    },

    async simulate(wire) {
      const { value } = await call(
        'simulateTransaction',
        rpc.simulateTransaction(wireOf(wire), { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: false, commitment: COMMITMENT }),
      );
      return { err: plain(value.err), logs: [...(value.logs ?? [])] };
    },

    async getTokenAmounts(accounts) {
      const out: (bigint | null)[] = [];
      let slot = 0n;
      for (let i = 0; i < accounts.length; i += ACCOUNTS_BATCH) {
        const batch = accounts.slice(i, i + ACCOUNTS_BATCH);
        const { context, value } = await call(
          'getMultipleAccounts',
          rpc.getMultipleAccounts(batch, { encoding: 'base64', commitment: COMMITMENT, dataSlice: { offset: TOKEN_AMOUNT_OFFSET, length: 8 } }),
        );
        for (const account of value) {
          const data = account === null || account.owner !== TOKEN_PROGRAM_ADDRESS ? null : getBase64Encoder().encode(account.data[0]);
          out.push(data === null || data.length !== 8 ? null : new DataView(data.buffer, data.byteOffset, 8).getBigUint64(0, true));
        }
        if (context.slot > slot) slot = context.slot;
      }
      return { amounts: out, slot };
    },

    async getTransactionWire(signature) {
      const tx = await call(
        'getTransaction',
        rpc.getTransaction(signature as Signature, { encoding: 'base64', maxSupportedTransactionVersion: 0, commitment: COMMITMENT }),
      );
      return tx === null ? null : new Uint8Array(getBase64Encoder().encode(tx.transaction[0]));
    },

    getGenesisHash() {
      return call('getGenesisHash', rpc.getGenesisHash());
    },

    async getChainUnixTime() {
      const info = await accountInfo(CLOCK_SYSVAR);
      const data = info === null ? null : getBase64Encoder().encode(info.data[0]);
      if (data === null || data.length < CLOCK_UNIX_TIMESTAMP_OFFSET + 8) throw new ChainUnavailableError('the RPC did not return the Clock sysvar');
      return new DataView(data.buffer, data.byteOffset, data.byteLength).getBigInt64(CLOCK_UNIX_TIMESTAMP_OFFSET, true);
    },

    async getRecentPrioritizationFees(writable) {
      if (writable.length > PRIORITY_FEE_ACCOUNTS) throw new RangeError(`at most ${PRIORITY_FEE_ACCOUNTS} addresses, got ${writable.length}`);
      const fees = await call('getRecentPrioritizationFees', rpc.getRecentPrioritizationFees(writable));
      return [...fees].sort((a, b) => (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : 0)).map((f) => BigInt(f.prioritizationFee));
    },
  };
}

/** kit turns every JSON number into a bigint; transaction errors go back to plain JSON so they can be stored. */
function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

const REJECTION_TEXT: Record<Exclude<ChainRejectionKind, 'simulation_failed' | 'other'>, string> = {
  blockhash_not_found: 'Blockhash not found: the transaction expired or its blockhash is unknown to the cluster',
  signature_failure: 'Transaction signature verification failure',
  already_processed: 'This transaction has already been processed',
};

/** Sorts an RPC failure into "the chain is unavailable" or "the cluster refused the transaction". */
function chainError(what: string, e: unknown): Error {
  if (e instanceof ChainUnavailableError) return e;
  if (!isSolanaError(e)) {
    const detail = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return new ChainUnavailableError(`${what} failed: ${detail}`, { cause: e });
  }
  if (isSolanaError(e, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
    return new ChainUnavailableError(`${what} failed: HTTP ${e.context.statusCode}`, { cause: e });
  }
  if (
    isSolanaError(e, SOLANA_ERROR__JSON_RPC__INTERNAL_ERROR) ||
    isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NODE_UNHEALTHY)
  ) {
    return new ChainUnavailableError(`${what} failed: the RPC node reported a server fault`, { cause: e });
  }
  if (
    isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE) ||
    isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_LEN_MISMATCH)
  ) {
    return new ChainRejectedError('signature_failure', REJECTION_TEXT.signature_failure);
  }
  if (isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)) {
    const logs = [...(e.context.logs ?? [])];
    const cause = e.cause;
    if (isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)) {
      return new ChainRejectedError('blockhash_not_found', REJECTION_TEXT.blockhash_not_found, logs);
    }
    if (isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__SIGNATURE_FAILURE)) {
      return new ChainRejectedError('signature_failure', REJECTION_TEXT.signature_failure, logs);
    }
    if (isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)) {
      return new ChainRejectedError('already_processed', REJECTION_TEXT.already_processed, logs);
    }
    const lastLog = logs.findLast((l) => /failed|error/i.test(l)) ?? logs.at(-1);
    const index = isSolanaError(cause) && 'index' in cause.context ? ` in instruction ${String(cause.context.index)}` : '';
    return new ChainRejectedError('simulation_failed', `Transaction simulation failed${index}${lastLog === undefined ? '' : `: ${lastLog}`}`, logs);
  }
  if (what === 'sendTransaction') return new ChainRejectedError('other', `${what} was refused: ${e.message}`);
  return new ChainUnavailableError(`${what} failed: ${e.message}`, { cause: e });
}
