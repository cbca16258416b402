/**
 * The only instructions this service ever asks a wallet to sign, encoded with their exact
 * account roles. Built by hand (not with kit's program clients) because the wallet is a FROST
 * group key: it must appear as a read-only signer without a local `TransactionSigner` object.
 * The decoder (`decode.ts`) reads the same layouts back.
 */
import { AccountRole, type AccountMeta, type Address, type Instruction } from '@solana/kit';
import {
  ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
  TOKEN_PROGRAM_ADDRESS,
  getTransferCheckedInstructionDataEncoder,
} from '@solana-program/token';

/** Program ids the layouts use besides Token and Associated Token (those come from `@solana-program/token`). */
export const SYSTEM_PROGRAM_ADDRESS = '11111111111111111111111111111111' as Address;
export const COMPUTE_BUDGET_PROGRAM_ADDRESS = 'ComputeBudget111111111111111111111111111111' as Address;
/** SPL Memo v2 (the one x402 facilitators and Solana Pay wallets accept). */
export const MEMO_PROGRAM_ADDRESS = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;

/** SPL Token instruction index of TransferChecked; data = [12, amount u64 LE, decimals u8]. */
export const TRANSFER_CHECKED = 12;
/** Associated Token program instruction index of CreateIdempotent; data = [1]. */
export const CREATE_ATA_IDEMPOTENT = 1;
/** Compute Budget instruction indices: SetComputeUnitLimit (u32 LE), SetComputeUnitPrice (u64 LE, micro-lamports). */
export const SET_COMPUTE_UNIT_LIMIT = 2;
export const SET_COMPUTE_UNIT_PRICE = 3;

/** x402 exact SVM compute budget defaults, as the reference client uses them. */
export const X402_DEFAULT_COMPUTE_UNIT_LIMIT = 20_000;
export const X402_DEFAULT_COMPUTE_UNIT_PRICE = 1n;
/** x402 facilitators refuse a price above 5 lamports per compute unit (in micro-lamports). */
export const X402_MAX_COMPUTE_UNIT_PRICE = 5_000_000n;

/**
 * Compute-unit budgets per instruction, summed per message by `computeUnitBudget` (transfer.ts)
 * and the payee setup. Measured on simnet (LiteSVM 1.5, `computeUnitsConsumed` of each message
 * kind landed with a FROST-signed wallet; test/solana/compute-budget.test.ts repeats the
 * measurement and fails when a kind consumes more than its budget):
 *   transferChecked 105 CU (+~10 per reference key); CreateIdempotent 18,130 CU creating the
 *   account, 6,042 CU when it exists; Memo v2 379 CU + ~1 CU per byte beyond ~30 (871 at 566 bytes);
 *   system transfer 150 CU; each compute-budget instruction 150 CU.
 * Simnet's token program is the lean p-token build; the classic SPL Token program still serving
 * some clusters spends ~6,200 CU on a transferChecked and ~25,000 on a creating CreateIdempotent,
 * so each budget covers the larger of the two figures plus about 20%.
 * A creating CreateIdempotent also searches the account's bump seed on chain, from 255 down: each
 * candidate that is not the bump costs one create_program_address (1,500 CU on every cluster), so
 * its budget grows with 255 − bump (createAtaUnits). Measured: a payee setup (rent + creation)
 * consumes 13,973 CU at bump 255 and 1,500 more per step down; one address in 4,096 has a bump of
 * 243 or less, past what a flat 30,000 covered.
 */
export const CU_BUDGET = {
  computeBudget: 300,
  transferChecked: 7_500,
  perReference: 50,
  /** A creating CreateIdempotent of an account whose bump is 255; createAtaUnits adds the search below it. */
  createAta: 30_000,
  bumpCandidate: 1_500,
  memoBase: 1_000,
  memoPerByte: 2,
  systemTransfer: 300,
} as const;

/** The budget of a CreateIdempotent that creates the account whose bump seed is `bump`. */
export function createAtaUnits(bump: number): number {
  if (!Number.isInteger(bump) || bump < 0 || bump > 255) throw new RangeError(`bump ${bump} is not a u8`);
  return CU_BUDGET.createAta + (255 - bump) * CU_BUDGET.bumpCandidate;
}

/**
 * The largest SetComputeUnitLimit a wallet accepts in a message this service builds (checkTransfer).
 * Our largest kind (ATA creation + fee + the longest memo) budgets under 50,000 CU plus 1,500 per bump
 * candidate, under 200,000 for any bump above 155 (all addresses but one in 2^100); 200,000 is the
 * runtime's default allowance per instruction, so a higher limit can only come from a message we did
 * not build, and would let the fee payer be charged a priority fee for ~4× the work it needs.
 */
export const MAX_ACCEPTED_COMPUTE_UNIT_LIMIT = 200_000;

const U64_MAX = (1n << 64n) - 1n;

/** `transferChecked` with `authority` as a read-only signer and `extraAccounts` appended read-only (Solana Pay references). */
export function transferCheckedInstruction(p: {
  source: Address;
  mint: Address;
  destination: Address;
  authority: Address;
  amount: bigint;
  decimals: number;
  extraAccounts?: readonly Address[];
}): Instruction {
  if (p.amount < 0n || p.amount > U64_MAX) throw new RangeError(`amount ${p.amount} is outside u64`);
  const accounts: AccountMeta[] = [
    { address: p.source, role: AccountRole.WRITABLE },
    { address: p.mint, role: AccountRole.READONLY },
    { address: p.destination, role: AccountRole.WRITABLE },
    { address: p.authority, role: AccountRole.READONLY_SIGNER },
    ...(p.extraAccounts ?? []).map((address) => ({ address, role: AccountRole.READONLY })),
  ];
  const data = getTransferCheckedInstructionDataEncoder().encode({ amount: p.amount, decimals: p.decimals });
  return { programAddress: TOKEN_PROGRAM_ADDRESS, accounts, data };
}

/** Idempotent creation of `ata` = ATA(owner, mint), rent paid by `payer` (a writable signer). */
export function createAtaIdempotentInstruction(p: { payer: Address; ata: Address; owner: Address; mint: Address }): Instruction {
  return {
    programAddress: ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
    accounts: [
      { address: p.payer, role: AccountRole.WRITABLE_SIGNER },
      { address: p.ata, role: AccountRole.WRITABLE },
      { address: p.owner, role: AccountRole.READONLY },
      { address: p.mint, role: AccountRole.READONLY },
      { address: SYSTEM_PROGRAM_ADDRESS, role: AccountRole.READONLY },
      { address: TOKEN_PROGRAM_ADDRESS, role: AccountRole.READONLY },
    ],
    data: new Uint8Array([CREATE_ATA_IDEMPOTENT]),
  };
}

/** SetComputeUnitLimit(units), units a u32. */
export function computeUnitLimitInstruction(units: number): Instruction {
  if (!Number.isInteger(units) || units < 0 || units > 0xffff_ffff) throw new RangeError(`compute unit limit ${units} is not a u32`);
  const data = new Uint8Array(5);
  data[0] = SET_COMPUTE_UNIT_LIMIT;
  new DataView(data.buffer).setUint32(1, units, true);
  return { programAddress: COMPUTE_BUDGET_PROGRAM_ADDRESS, data };
}

/** SetComputeUnitPrice(microLamports per compute unit), a u64. */
export function computeUnitPriceInstruction(microLamports: bigint): Instruction {
  if (microLamports < 0n || microLamports > U64_MAX) throw new RangeError(`compute unit price ${microLamports} is outside u64`);
  const data = new Uint8Array(9);
  data[0] = SET_COMPUTE_UNIT_PRICE;
  new DataView(data.buffer).setBigUint64(1, microLamports, true);
  return { programAddress: COMPUTE_BUDGET_PROGRAM_ADDRESS, data };
}

/** A Memo v2 instruction with no signer accounts: the memo text as UTF-8. */
export function memoInstruction(text: string): Instruction {
  return { programAddress: MEMO_PROGRAM_ADDRESS, data: new TextEncoder().encode(text) };
}
