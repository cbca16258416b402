/**
 * The simulated cluster: LiteSVM for execution, plus what LiteSVM lacks to behave like a real
 * cluster — a block height that advances on a clock, a 150-block blockhash window (LiteSVM's
 * own check, latest-only, is off), and a ledger of landed transactions with the metadata a
 * node stores (balances before/after, token balances, logs, fee).
 *
 * Everything here is synchronous: one JS turn executes one transaction, so no request can
 * observe a half-applied state. Signing (async, WebCrypto) happens before `submit`.
 */
import { FailedTransactionMetadata, LiteSVM, TransactionMetadata } from 'litesvm';
import { getBase64Decoder, getBase64Encoder, lamports, type Address, type EncodedAccount, type Signature } from '@solana/kit';
import { addressBytesView, addressOf } from '../solana/address-codec.ts';
import { BLOCKHASH_VALIDITY, BlockhashWindow } from './blockhashes.ts';
import { computeUnitPrice, FeeMarket, RECENT_FEE_SLOTS, writableAccounts } from './fees.ts';
import { MEMO_PROGRAM_ADDRESSES } from './instructions.ts';
import { Ledger, type LedgerEntry, type TokenBalanceJson } from './ledger.ts';
import { fieldlessError, outcomeOf, type Outcome } from './outcome.ts';
import { decodeMint, decodeTokenAccount, isTokenProgram, uiTokenAmount } from './tokens.ts';
import { decodeWire, verifySignatures, withBlockhash, type DecodedTransaction } from './wire.ts';

/** What the cluster charges per signature, used where LiteSVM reports no fee. */
const LAMPORTS_PER_SIGNATURE = 5000n;

/** What became of a submitted transaction. */
export type SubmitResult =
  /** Executed and recorded (possibly with `entry.err`, fee charged). */
  | { status: 'landed'; signature: string; entry: LedgerEntry }
  /** Accepted by the RPC (skipPreflight) but never executed, as a leader drops it. */
  | { status: 'dropped'; signature: string; reason: string }
  /** Preflight refused it: bad signature (-32003) or a failed simulation (-32002). */
  | { status: 'rejected'; signature: string; kind: 'signature' }
  | { status: 'rejected'; signature: string; kind: 'preflight'; outcome: Outcome };

/** Result of simulateTransaction, before RPC encoding. */
export interface Simulation {
  outcome: Outcome;
  /** Accounts as the simulation left them (only those it touched); built only when asked for. */
  postAccounts: () => Map<string, EncodedAccount>;
  replacementBlockhash: { blockhash: string; lastValidBlockHeight: bigint } | null;
}

/** The persisted part of a chain (LiteSVM bytes plus simnet's own bookkeeping). */
export interface ChainSnapshot {
  svm: Uint8Array;
  height: bigint;
  blockhashes: [string, bigint][];
  ledger: readonly LedgerEntry[];
}

/** LiteSVM's native account reader, under its JS wrapper. */
interface NativeSvm {
  getAccount(pubkey: Uint8Array): NativeAccount | null;
}

interface NativeAccount {
  lamports(): bigint;
  data(): Uint8Array;
  owner(): Uint8Array;
  executable(): boolean;
}

/**
 * Accounts are read through LiteSVM's native handle: its wrapper's `getAccount` converts the
 * address and the owner with kit's BigInt base58 codec and copies the data on every read, which
 * was most of a sendTransaction's cost here (the pre and post balances of every account it
 * names). Addresses go through the shared memo instead. litesvm is pinned; the chain's tests hold
 * this reader to the wrapper's answers, so an upgrade that moves the handle fails there and here.
 */
function nativeOf(svm: LiteSVM): NativeSvm {
  const inner = (svm as unknown as { inner?: Partial<NativeSvm> }).inner;
  if (typeof inner?.getAccount !== 'function') throw new Error('litesvm: the native account reader moved (pinned litesvm 1.5.0 keeps it at .inner.getAccount)');
  return inner as NativeSvm;
}

/** An account as kit's EncodedAccount, as LiteSVM's wrapper would build it. */
function encoded(address: Address, a: NativeAccount): EncodedAccount {
  const data = a.data();
  return { address, executable: a.executable(), lamports: lamports(a.lamports()), programAddress: addressOf(a.owner()), space: BigInt(data.length), data };
}

function rejectedBeforeExecution(name: string): Outcome {
  return { ...fieldlessError(name), logs: [], unitsConsumed: 0n, fee: 0n, innerInstructions: [], returnData: null };
}

/** The embedded chain. Block height and slot are the same number here (no skipped slots). */
export class Chain {
  /** Set when state worth saving changed (a landed transaction, a written account). */
  dirty = false;
  /** Compute-unit prices of recent landed transactions (getRecentPrioritizationFees). */
  readonly fees = new FeeMarket();

  private readonly native: NativeSvm;

  private constructor(
    private readonly svm: LiteSVM,
    private readonly window: BlockhashWindow,
    readonly ledger: Ledger,
    private height: bigint,
  ) {
    svm.withBlockhashCheck(false).withSigverify(true);
    this.native = nativeOf(svm);
  }

  /** A fresh chain at block height 1 (SPL Token and ATA programs preloaded). */
  static create(nowMs: number): Chain {
    const chain = new Chain(new LiteSVM(), new BlockhashWindow(), new Ledger(), 0n);
    chain.advance(1n, nowMs);
    return chain;
  }

  /**
   * A chain restored from a snapshot. `elapsedBlocks` (the downtime divided by the slot time)
   * moves the height on as a real cluster would have, so blockhashes issued before a
   * restart expire as they would have.
   */
  static restore(snapshot: ChainSnapshot, elapsedBlocks: bigint, nowMs: number): Chain {
    const chain = new Chain(LiteSVM.fromBytes(snapshot.svm), new BlockhashWindow(snapshot.blockhashes), new Ledger(snapshot.ledger), snapshot.height);
    chain.rebuildFees();
    chain.advance(elapsedBlocks > 0n ? elapsedBlocks : 1n, nowMs);
    return chain;
  }

  /** The fee market is not persisted: it is rebuilt from the ledger's transactions of the last 150 slots. */
  private rebuildFees(): void {
    const entries = this.ledger.all();
    const oldest = Number(this.height) - RECENT_FEE_SLOTS;
    let start = entries.length;
    while (start > 0 && (entries[start - 1]?.slot ?? 0) > oldest) start--;
    for (const entry of entries.slice(start)) {
      const d = decodeWire(new Uint8Array(getBase64Encoder().encode(entry.wire)));
      this.fees.record(entry.slot, computeUnitPrice(d.message), writableAccounts(d.message));
    }
  }

  /** One block: a new blockhash, the slot and the Clock sysvar's wall time moved on. */
  tick(nowMs: number): void {
    this.advance(1n, nowMs);
  }

  private advance(blocks: bigint, nowMs: number): void {
    this.svm.expireBlockhash();
    this.height += blocks;
    const clock = this.svm.getClock();
    clock.slot = this.height;
    clock.unixTimestamp = BigInt(Math.floor(nowMs / 1000));
    this.svm.setClock(clock);
    this.window.record(this.svm.latestBlockhash(), this.height);
  }

  /** Current block height (= slot). */
  blockHeight(): bigint {
    return this.height;
  }

  /** The newest blockhash and the last block height at which it is accepted. */
  latestBlockhash(): { blockhash: string; lastValidBlockHeight: bigint } {
    return { blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: this.height + BLOCKHASH_VALIDITY };
  }

  /** Whether a transaction referencing `blockhash` would be accepted now. */
  isBlockhashValid(blockhash: string): boolean {
    return this.window.isValid(blockhash, this.height);
  }

  /** The account at `address`, or null when it does not exist. */
  account(address: Address): EncodedAccount | null {
    const a = this.native.getAccount(addressBytesView(address));
    return a === null ? null : encoded(address, a);
  }

  /**
   * What a landed transaction's metadata needs of each account: its lamports, and the whole
   * account only when a token program owns it (a program's data, hundreds of KiB, is never copied).
   */
  private balanceView(address: Address): { lamports: bigint; token: EncodedAccount | null } {
    const a = this.native.getAccount(addressBytesView(address));
    if (a === null) return { lamports: 0n, token: null };
    return { lamports: a.lamports(), token: isTokenProgram(addressOf(a.owner())) ? encoded(address, a) : null };
  }

  /** Every account owned by `program`. */
  programAccounts(program: Address): EncodedAccount[] {
    return this.svm.getProgramAccounts(program);
  }

  /** Writes an account directly (genesis setup only: the USDC mint, the faucet's payer). */
  setAccount(account: EncodedAccount): void {
    this.svm.setAccount(account);
    this.dirty = true;
  }

  /** Rent-exempt minimum for an account of `size` bytes. */
  minimumBalanceForRentExemption(size: bigint): bigint {
    return this.svm.minimumBalanceForRentExemption(size);
  }

  /** Decimals of `mint`, or null when no mint lives there. */
  decimalsOf(mint: Address): number | null {
    const a = this.account(mint);
    return a === null ? null : (decodeMint(a)?.decimals ?? null);
  }

  /**
   * sendTransaction. With preflight: signatures, blockhash, duplicate and a simulation are
   * checked first and any failure is returned as `rejected` (nothing lands). Without: the
   * transaction executes; if it fails before execution it is `dropped`, as a leader would.
   */
  submit(d: DecodedTransaction, opts: { skipPreflight: boolean }): SubmitResult {
    if (!opts.skipPreflight) {
      const refused = this.preflight(d);
      if (refused !== null) return refused;
    }
    const early = this.checkBeforeExecution(d);
    if (early !== null) return { status: 'dropped', signature: d.signature, reason: early.err as string };
    return this.execute(d);
  }

  /** sendTransaction's preflight: signatures, then a simulation; the rejection, or null when it passes. */
  preflight(d: DecodedTransaction): SubmitResult | null {
    if (!verifySignatures(d)) return { status: 'rejected', signature: d.signature, kind: 'signature' };
    const sim = this.simulate(d, { replaceRecentBlockhash: false });
    if (sim.outcome.err !== null) return { status: 'rejected', signature: d.signature, kind: 'preflight', outcome: sim.outcome };
    return null;
  }

  /** simulateTransaction; signatures are not checked here (the RPC layer does when asked). */
  simulate(d: DecodedTransaction, opts: { replaceRecentBlockhash: boolean }): Simulation {
    const replacementBlockhash = opts.replaceRecentBlockhash ? this.latestBlockhash() : null;
    if (replacementBlockhash === null) {
      const early = this.checkBeforeExecution(d);
      if (early !== null) return { outcome: early, postAccounts: () => new Map(), replacementBlockhash };
    }
    const tx = replacementBlockhash === null ? d.transaction : withBlockhash(d, replacementBlockhash.blockhash);
    this.svm.withSigverify(false);
    try {
      const result = this.svm.simulateTransaction(tx);
      if (result instanceof FailedTransactionMetadata) return { outcome: outcomeOf(result), postAccounts: () => new Map(), replacementBlockhash };
      const postAccounts = () => new Map(result.postAccounts().map((a) => [a.address as string, a]));
      return { outcome: outcomeOf(result.meta()), postAccounts, replacementBlockhash };
    } finally {
      this.svm.withSigverify(true);
    }
  }

  /** getFeeForMessage: the fee the message would be charged, or null if its blockhash expired. */
  feeForMessage(d: DecodedTransaction): bigint | null {
    if (!this.isBlockhashValid(d.message.lifetimeToken)) return null;
    const fee = this.simulate(d, { replaceRecentBlockhash: false }).outcome.fee;
    return fee > 0n ? fee : LAMPORTS_PER_SIGNATURE * BigInt(d.message.header.numSignerAccounts);
  }

  private checkBeforeExecution(d: DecodedTransaction): Outcome | null {
    if (!this.isBlockhashValid(d.message.lifetimeToken)) return rejectedBeforeExecution('BlockhashNotFound');
    if (this.ledger.has(d.signature)) return rejectedBeforeExecution('AlreadyProcessed');
    return null;
  }

  private execute(d: DecodedTransaction): SubmitResult {
    const keys = d.message.staticAccounts;
    const pre = keys.map((k) => this.balanceView(k));
    let result: ReturnType<LiteSVM['sendTransaction']>;
    try {
      result = this.svm.sendTransaction(d.transaction);
    } catch (e) {
      return { status: 'dropped', signature: d.signature, reason: (e as Error).message };
    }
    const outcome = outcomeOf(result);
    const included = result instanceof TransactionMetadata || this.svm.getTransaction(d.signature as Signature) !== null;
    if (!included) return { status: 'dropped', signature: d.signature, reason: outcome.errText ?? 'not executed' };
    const post = keys.map((k) => this.balanceView(k));
    const entry: LedgerEntry = {
      signature: d.signature,
      slot: Number(this.height),
      blockTime: Math.floor(Date.now() / 1000),
      wire: getBase64Decoder().decode(d.wire),
      accountKeys: [...keys],
      err: outcome.err,
      fee: outcome.fee.toString(),
      preBalances: pre.map((a) => a.lamports.toString()),
      postBalances: post.map((a) => a.lamports.toString()),
      preTokenBalances: this.tokenBalances(pre.map((a) => a.token)),
      postTokenBalances: this.tokenBalances(post.map((a) => a.token)),
      logMessages: outcome.logs,
      innerInstructions: outcome.innerInstructions,
      computeUnitsConsumed: outcome.unitsConsumed.toString(),
      returnData: outcome.returnData,
      memo: memoOf(d),
    };
    this.ledger.add(entry);
    this.fees.record(entry.slot, computeUnitPrice(d.message), writableAccounts(d.message));
    this.dirty = true;
    return { status: 'landed', signature: d.signature, entry };
  }

  private tokenBalances(accounts: (EncodedAccount | null)[]): TokenBalanceJson[] {
    const out: TokenBalanceJson[] = [];
    accounts.forEach((a, accountIndex) => {
      const token = a === null ? null : decodeTokenAccount(a);
      if (token === null) return;
      const decimals = this.decimalsOf(token.mint);
      if (decimals === null) return;
      out.push({ accountIndex, mint: token.mint, owner: token.owner, programId: token.programId, uiTokenAmount: uiTokenAmount(token.amount, decimals, true) });
    });
    return out;
  }

  /** Everything needed to rebuild this chain. */
  snapshot(): ChainSnapshot {
    return { svm: this.svm.toBytes(), height: this.height, blockhashes: this.window.entries(), ledger: this.ledger.all() };
  }
}

/** Memo text as the real RPC reports it: `"[len] text"` per memo instruction, joined by "; ". */
function memoOf(d: DecodedTransaction): string | null {
  const memos: string[] = [];
  for (const ix of d.message.instructions) {
    const program = d.message.staticAccounts[ix.programAddressIndex];
    if (program === undefined || !MEMO_PROGRAM_ADDRESSES.has(program) || ix.data === undefined) continue;
    const text = new TextDecoder().decode(new Uint8Array(ix.data));
    memos.push(`[${new TextEncoder().encode(text).length}] ${text}`);
  }
  return memos.length === 0 ? null : memos.join('; ');
}
