/**
 * Reads a transaction message back into the few instructions this service builds, and checks it
 * against the intent it should carry. Both sides run these checks before they sign: the server
 * before it releases its FROST share, the agent's client before it releases its own (DESIGN §4,
 * "the client verifies too"). Custody rests on both sides checking, so anything not positively
 * recognised is refused, and every refusal names what differs.
 */
import { getCompiledTransactionMessageDecoder, getTransactionDecoder, type Address } from '@solana/kit';
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { usdcAta } from './ata.ts';
import { MessageDecodeError } from './errors.ts';
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  CREATE_ATA_IDEMPOTENT,
  MAX_ACCEPTED_COMPUTE_UNIT_LIMIT,
  MEMO_PROGRAM_ADDRESS,
  SET_COMPUTE_UNIT_LIMIT,
  SET_COMPUTE_UNIT_PRICE,
  SYSTEM_PROGRAM_ADDRESS,
  TRANSFER_CHECKED,
  X402_MAX_COMPUTE_UNIT_PRICE,
} from './instructions.ts';
import { USDC_DECIMALS } from './networks.ts';

/** One instruction, recognised by program and exact data layout; anything else is `unknown`. */
export type DecodedInstruction =
  | {
      kind: 'transferChecked';
      source: Address;
      mint: Address;
      destination: Address;
      authority: Address;
      amount: bigint;
      decimals: number;
      /** Accounts after the authority (Solana Pay reference keys). */
      extraAccounts: Address[];
    }
  | { kind: 'createAtaIdempotent'; payer: Address; ata: Address; owner: Address; mint: Address }
  | { kind: 'computeUnitLimit'; units: number }
  | { kind: 'computeUnitPrice'; microLamports: bigint }
  | { kind: 'memo'; text: string }
  | { kind: 'unknown'; programId: Address };

/** A decoded legacy or v0 message without address-table lookups. */
export interface DecodedMessage {
  version: 'legacy' | 0;
  feePayer: Address;
  blockhash: string;
  /** Addresses that must sign, in signature-slot order (the fee payer first). */
  signers: Address[];
  instructions: DecodedInstruction[];
  /** Every account any instruction names (the decoded layouts name only some of them). */
  instructionAccounts: ReadonlySet<Address>;
}

/** Outcome of a check: `reason` names the first thing that differs from the intent. */
export type CheckResult = { ok: true } | { ok: false; reason: string };

/**
 * Decodes message bytes (what gets signed, not the wire transaction). Throws MessageDecodeError
 * for malformed bytes, trailing bytes, v1 messages, duplicate account keys, out-of-range indices
 * and address-table lookups (their accounts cannot be checked without the chain).
 */
export function decodeMessage(bytes: Uint8Array): DecodedMessage {
  let compiled: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
  let end: number;
  try {
    [compiled, end] = getCompiledTransactionMessageDecoder().read(bytes, 0);
  } catch (e) {
    throw new MessageDecodeError(`malformed transaction message: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (end !== bytes.length) throw new MessageDecodeError(`${bytes.length - end} trailing bytes after the message`);
  if (compiled.version !== 0 && compiled.version !== 'legacy') {
    throw new MessageDecodeError(`message version ${String(compiled.version)} is not accepted`);
  }
  if (compiled.version === 0 && (compiled.addressTableLookups?.length ?? 0) > 0) {
    throw new MessageDecodeError('address table lookups are not accepted');
  }
  const keys = compiled.staticAccounts;
  if (new Set(keys).size !== keys.length) throw new MessageDecodeError('an account key appears twice');
  const signerCount = compiled.header.numSignerAccounts;
  if (signerCount < 1 || signerCount > keys.length) throw new MessageDecodeError(`invalid signer count ${signerCount}`);
  const key = (index: number): Address => {
    const found = keys[index];
    if (found === undefined) throw new MessageDecodeError(`account index ${index} is out of range`);
    return found;
  };
  const instructionAccounts = new Set<Address>();
  const instructions = compiled.instructions.map((ix) => {
    const accounts = (ix.accountIndices ?? []).map(key);
    for (const a of accounts) instructionAccounts.add(a);
    return decodeInstruction(key(ix.programAddressIndex), accounts, new Uint8Array(ix.data ?? []));
  });
  return {
    version: compiled.version,
    feePayer: key(0),
    blockhash: compiled.lifetimeToken,
    signers: keys.slice(0, signerCount),
    instructions,
    instructionAccounts,
  };
}

function decodeInstruction(programId: Address, accounts: Address[], data: Uint8Array): DecodedInstruction {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const unknown: DecodedInstruction = { kind: 'unknown', programId };
  if (programId === TOKEN_PROGRAM_ADDRESS) {
    const [source, mint, destination, authority, ...extraAccounts] = accounts;
    if (data.length !== 10 || data[0] !== TRANSFER_CHECKED || authority === undefined) return unknown;
    if (source === undefined || mint === undefined || destination === undefined) return unknown;
    return { kind: 'transferChecked', source, mint, destination, authority, amount: view.getBigUint64(1, true), decimals: view.getUint8(9), extraAccounts };
  }
  if (programId === ASSOCIATED_TOKEN_PROGRAM_ADDRESS) {
    const [payer, ata, owner, mint, system, token] = accounts;
    if (data.length !== 1 || data[0] !== CREATE_ATA_IDEMPOTENT || accounts.length !== 6) return unknown;
    if (system !== SYSTEM_PROGRAM_ADDRESS || token !== TOKEN_PROGRAM_ADDRESS) return unknown;
    if (payer === undefined || ata === undefined || owner === undefined || mint === undefined) return unknown;
    return { kind: 'createAtaIdempotent', payer, ata, owner, mint };
  }
  if (programId === COMPUTE_BUDGET_PROGRAM_ADDRESS && accounts.length === 0) {
    if (data.length === 5 && data[0] === SET_COMPUTE_UNIT_LIMIT) return { kind: 'computeUnitLimit', units: view.getUint32(1, true) };
    if (data.length === 9 && data[0] === SET_COMPUTE_UNIT_PRICE) return { kind: 'computeUnitPrice', microLamports: view.getBigUint64(1, true) };
    return unknown;
  }
  if (programId === MEMO_PROGRAM_ADDRESS) {
    try {
      return { kind: 'memo', text: new TextDecoder('utf-8', { fatal: true }).decode(data) };
    } catch {
      return unknown;
    }
  }
  return unknown;
}

/**
 * The text of the first Memo of a signed wire transaction, or null: none, or a message this module
 * does not read (our own transfers always decode). Our payments carry their transaction id there.
 */
export function memoOf(wire: Uint8Array): string | null {
  let messageBytes: Uint8Array;
  try {
    messageBytes = new Uint8Array(getTransactionDecoder().decode(wire).messageBytes);
  } catch {
    return null;
  }
  const msg = decodeOrReason(messageBytes);
  if (typeof msg === 'string') return null;
  for (const ix of msg.instructions) if (ix.kind === 'memo') return ix.text;
  return null;
}

type Transfer = Extract<DecodedInstruction, { kind: 'transferChecked' }>;

/** What is wrong with `ix` as a transfer out of the wallet's token account, or null. */
function transferProblem(ix: Transfer, at: string, want: { source: Address; mint: Address; wallet: Address; destination: Address; label: string }): string | null {
  if (ix.mint !== want.mint) return `${at}: mint ${ix.mint} differs from expected ${want.mint}`;
  if (ix.decimals !== USDC_DECIMALS) return `${at}: decimals ${ix.decimals} differ from expected ${USDC_DECIMALS}`;
  if (ix.authority !== want.wallet) return `${at}: authority ${ix.authority} differs from the wallet ${want.wallet}`;
  if (ix.source !== want.source) return `${at}: source ${ix.source} is not the wallet's token account ${want.source}`;
  if (ix.destination !== want.destination) return `${at}: ${want.label} goes to ${ix.destination}, expected ${want.destination}`;
  return null;
}

/** Fee payer and signer rules common to every layout: fee payer as expected, never the wallet, no third signer. */
function signerProblem(msg: DecodedMessage, wallet: Address, feePayer: Address): string | null {
  if (wallet === feePayer) return 'the wallet must not be the fee payer';
  if (msg.feePayer === wallet) return 'the wallet is the fee payer';
  if (msg.feePayer !== feePayer) return `fee payer ${msg.feePayer} differs from expected ${feePayer}`;
  for (const signer of msg.signers) {
    if (signer !== wallet && signer !== feePayer) return `the message requires a signature from ${signer}, which is neither the wallet nor the fee payer`;
  }
  if (!msg.signers.includes(wallet)) return 'the wallet is not a signer of the message';
  return null;
}

/** The decoded message, or why the bytes are not an acceptable message. */
export function decodeOrReason(bytes: Uint8Array): DecodedMessage | string {
  try {
    return decodeMessage(bytes);
  } catch (e) {
    if (e instanceof MessageDecodeError) return e.message;
    throw e;
  }
}

/**
 * Accepts only the `buildUsdcTransfer` layout for this intent: at most one idempotent creation of
 * ATA(recipientOwner, mint) paid by the fee payer; first transferChecked = exactly `amount` from
 * ATA(wallet) to ATA(recipientOwner) with exactly `references` appended; optional second
 * transferChecked ≤ `maxFee` to ATA(treasuryOwner); at most one compute-unit limit (≤
 * MAX_ACCEPTED_COMPUTE_UNIT_LIMIT), one price and one memo; nothing else — a compute-budget
 * instruction other than these two (heap frame, loaded-data limit) is of an unknown kind and refused. The fee payer must be `feePayer` and never the wallet.
 */
export async function checkTransfer(
  message: Uint8Array | DecodedMessage | string,
  expected: {
    wallet: Address;
    mint: Address;
    recipientOwner: Address;
    amount: bigint;
    maxFee: bigint;
    treasuryOwner: Address;
    feePayer: Address;
    references?: Address[];
  },
): Promise<CheckResult> {
  // The bytes, or what decodeOrReason made of them (the caller that also reads the message decodes once).
  const msg = message instanceof Uint8Array ? decodeOrReason(message) : message;
  if (typeof msg === 'string') return refuse(msg);
  const signers = signerProblem(msg, expected.wallet, expected.feePayer);
  if (signers !== null) return refuse(signers);
  const [source, destination, treasury] = await Promise.all([
    usdcAta(expected.wallet, expected.mint),
    usdcAta(expected.recipientOwner, expected.mint),
    usdcAta(expected.treasuryOwner, expected.mint),
  ]);
  const references = expected.references ?? [];
  const seen = { createAtaIdempotent: 0, transferChecked: 0, computeUnitLimit: 0, computeUnitPrice: 0, memo: 0 };
  for (const [i, ix] of msg.instructions.entries()) {
    const at = `instruction ${i}`;
    if (ix.kind === 'unknown') return refuse(`${at}: program ${ix.programId} (or this use of it) is not allowed`);
    const count = ++seen[ix.kind];
    if (ix.kind === 'createAtaIdempotent') {
      if (count > 1) return refuse(`${at}: a second token account creation`);
      if (ix.owner !== expected.recipientOwner) return refuse(`${at}: creates a token account for ${ix.owner}, expected ${expected.recipientOwner}`);
      if (ix.mint !== expected.mint) return refuse(`${at}: creates a token account of mint ${ix.mint}, expected ${expected.mint}`);
      if (ix.ata !== destination) return refuse(`${at}: creates account ${ix.ata}, expected ${destination}`);
      if (ix.payer !== expected.feePayer) return refuse(`${at}: account rent is paid by ${ix.payer}, expected the fee payer ${expected.feePayer}`);
    } else if (ix.kind === 'transferChecked') {
      if (count > 2) return refuse(`${at}: a third transferChecked`);
      const isAmount = count === 1;
      const problem = transferProblem(ix, at, {
        source, mint: expected.mint, wallet: expected.wallet,
        destination: isAmount ? destination : treasury, label: isAmount ? 'the amount' : 'the fee',
      });
      if (problem !== null) return refuse(problem);
      if (isAmount) {
        if (ix.amount !== expected.amount) return refuse(`${at}: amount ${ix.amount} differs from expected ${expected.amount}`);
        if (!sameList(ix.extraAccounts, references)) {
          return refuse(`${at}: references [${ix.extraAccounts.join(', ')}] differ from expected [${references.join(', ')}]`);
        }
      } else {
        if (ix.amount > expected.maxFee) return refuse(`${at}: fee ${ix.amount} exceeds the maximum ${expected.maxFee}`);
        if (ix.extraAccounts.length > 0) return refuse(`${at}: the fee transfer carries extra accounts`);
      }
    } else if (count > 1) {
      return refuse(`${at}: a second ${ix.kind} instruction`);
    } else if (ix.kind === 'computeUnitLimit' && ix.units > MAX_ACCEPTED_COMPUTE_UNIT_LIMIT) {
      return refuse(`${at}: compute unit limit ${ix.units} exceeds ${MAX_ACCEPTED_COMPUTE_UNIT_LIMIT}`);
    }
  }
  if (seen.transferChecked === 0) return refuse('the message transfers nothing');
  return { ok: true };
}

/**
 * Accepts only the x402 `exact` SVM layout for this intent: SetComputeUnitLimit, SetComputeUnitPrice
 * (≤ 5 lamports/CU), transferChecked of exactly `amount` from ATA(wallet) to ATA(payTo, mint), then
 * at most one Memo; fee payer = the facilitator's `feePayer`, never the wallet.
 */
export async function checkX402Transfer(
  bytes: Uint8Array,
  expected: { wallet: Address; mint: Address; payTo: Address; amount: bigint; feePayer: Address },
): Promise<CheckResult> {
  const msg = decodeOrReason(bytes);
  if (typeof msg === 'string') return refuse(msg);
  const signers = signerProblem(msg, expected.wallet, expected.feePayer);
  if (signers !== null) return refuse(signers);
  const [limit, price, transfer, memo, ...rest] = msg.instructions;
  if (limit?.kind !== 'computeUnitLimit') return refuse('instruction 0 must be SetComputeUnitLimit');
  if (price?.kind !== 'computeUnitPrice') return refuse('instruction 1 must be SetComputeUnitPrice');
  if (price.microLamports > X402_MAX_COMPUTE_UNIT_PRICE) {
    return refuse(`instruction 1: compute unit price ${price.microLamports} exceeds ${X402_MAX_COMPUTE_UNIT_PRICE} micro-lamports`);
  }
  if (transfer?.kind !== 'transferChecked') return refuse('instruction 2 must be transferChecked');
  const [source, destination] = await Promise.all([usdcAta(expected.wallet, expected.mint), usdcAta(expected.payTo, expected.mint)]);
  const problem = transferProblem(transfer, 'instruction 2', { source, mint: expected.mint, wallet: expected.wallet, destination, label: 'the amount' });
  if (problem !== null) return refuse(problem);
  if (transfer.amount !== expected.amount) return refuse(`instruction 2: amount ${transfer.amount} differs from expected ${expected.amount}`);
  if (transfer.extraAccounts.length > 0) return refuse('instruction 2: the transfer carries extra accounts');
  if (memo !== undefined && memo.kind !== 'memo') return refuse('instruction 3 may only be a Memo');
  if (rest.length > 0) return refuse(`${msg.instructions.length} instructions; the x402 layout has at most 4`);
  return { ok: true };
}

function sameList(a: readonly Address[], b: readonly Address[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function refuse(reason: string): CheckResult {
  return { ok: false, reason };
}
