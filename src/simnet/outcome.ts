/**
 * Turns LiteSVM's native result objects into the plain data the RPC answers with.
 *
 * LiteSVM reports errors as a numeric `const enum` (not importable at run time) or as class
 * instances; the real RPC writes them as `"BlockhashNotFound"` or
 * `{"InstructionError":[0,{"Custom":1}]}`. The fee is only visible in the metadata's
 * `toString()`, so it is read from there (it includes priority fees, which LiteSVM charges).
 */
import { FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import {
  InstructionErrorBorshIo,
  InstructionErrorCustom,
  TransactionErrorDuplicateInstruction,
  TransactionErrorInstructionError,
  TransactionErrorInsufficientFundsForRent,
  TransactionErrorProgramExecutionTemporarilyRestricted,
} from 'litesvm/dist/internal';
import { getBase58Decoder, getBase64Decoder, getAddressDecoder } from '@solana/kit';

/** A transaction error as the real RPC renders it in JSON. */
export type TransactionErrorJson = string | { [variant: string]: unknown };

/** One group of CPI instructions, as `meta.innerInstructions` lists them (json encoding). */
export interface InnerInstructionsJson {
  index: number;
  instructions: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }[];
}

/** Everything the RPC reports about one executed (or simulated, or rejected) transaction. */
export interface Outcome {
  err: TransactionErrorJson | null;
  /** The real RPC's human text for `err` ("Blockhash not found"), null on success. */
  errText: string | null;
  logs: string[];
  unitsConsumed: bigint;
  fee: bigint;
  innerInstructions: InnerInstructionsJson[];
  returnData: { programId: string; data: [string, 'base64'] } | null;
}

/** Names of LiteSVM's `TransactionErrorFieldless`, indexed by value (from its .d.ts). */
const TX_ERRORS = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'CallChainTooDeep', 'MissingSignatureForFee',
  'InvalidAccountIndex', 'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance',
  'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled',
];

/** Names of LiteSVM's `InstructionErrorFieldless`, indexed by value (from its .d.ts). */
const IX_ERRORS = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall',
  'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized',
  'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId', 'ExternalAccountLamportSpend',
  'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified', 'DuplicateAccountIndex',
  'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged', 'AccountNotExecutable',
  'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync', 'InvalidError',
  'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt', 'UnsupportedProgramId',
  'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded', 'InvalidSeeds', 'InvalidRealloc',
  'ComputationalBudgetExceeded', 'PrivilegeEscalation', 'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete',
  'ProgramFailedToCompile', 'Immutable', 'IncorrectAuthority', 'AccountNotRentExempt', 'InvalidAccountOwner',
  'ArithmeticOverflow', 'UnsupportedSysvar', 'IllegalOwner', 'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded', 'BuiltinProgramsMustConsumeComputeUnits', 'BorshIoError',
];

/** The agave `Display` texts clients match on; other errors print their variant name. */
const TX_TEXT: Record<string, string> = {
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  MissingSignatureForFee: 'Transaction requires a fee but has no signature present',
  SignatureFailure: 'Transaction did not pass signature verification',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
};

const IX_TEXT: Record<string, string> = {
  GenericError: 'generic instruction error',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  IncorrectProgramId: 'incorrect program id for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
};

type LiteSvmError = ReturnType<FailedTransactionMetadata['err']>;

/** A fieldless error (e.g. `BlockhashNotFound`) as both JSON and text, for checks simnet makes itself. */
export function fieldlessError(name: string): { err: TransactionErrorJson; errText: string } {
  return { err: name, errText: TX_TEXT[name] ?? name };
}

function describe(e: LiteSvmError): { err: TransactionErrorJson; errText: string } {
  if (typeof e === 'number') return fieldlessError(TX_ERRORS[e] ?? `TransactionError${e}`);
  if (e instanceof TransactionErrorInstructionError) {
    const inner = e.err();
    let json: unknown;
    let text: string;
    if (inner instanceof InstructionErrorCustom) {
      json = { Custom: inner.code };
      text = `custom program error: 0x${inner.code.toString(16)}`;
    } else if (inner instanceof InstructionErrorBorshIo) {
      json = { BorshIoError: inner.msg };
      text = `Failed to serialize or deserialize account data: ${inner.msg}`;
    } else {
      const name = IX_ERRORS[inner] ?? `InstructionError${inner}`;
      json = name;
      text = IX_TEXT[name] ?? name;
    }
    return { err: { InstructionError: [e.index, json] }, errText: `Error processing Instruction ${e.index}: ${text}` };
  }
  if (e instanceof TransactionErrorDuplicateInstruction) {
    return { err: { DuplicateInstruction: e.index }, errText: `Transaction contains a duplicate instruction (${e.index}) that is not allowed` };
  }
  if (e instanceof TransactionErrorInsufficientFundsForRent) {
    return {
      err: { InsufficientFundsForRent: { account_index: e.accountIndex } },
      errText: `Transaction results in an account (${e.accountIndex}) with insufficient funds for rent`,
    };
  }
  if (e instanceof TransactionErrorProgramExecutionTemporarilyRestricted) {
    return {
      err: { ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex } },
      errText: `Execution of the program referenced by account at index ${e.accountIndex} is temporarily restricted.`,
    };
  }
  return { err: String(e), errText: String(e) };
}

/** LiteSVM puts the charged fee only into the metadata's debug text (`fee: 5000`). */
function feeOf(meta: TransactionMetadata): bigint {
  const m = /\bfee: (\d+)/.exec(meta.toString());
  return m?.[1] === undefined ? 0n : BigInt(m[1]);
}

/** Converts a LiteSVM send/simulate result into RPC-ready data. */
export function outcomeOf(result: TransactionMetadata | FailedTransactionMetadata): Outcome {
  const failed = result instanceof FailedTransactionMetadata;
  const meta = failed ? result.meta() : result;
  const described = failed ? describe(result.err()) : null;
  const b58 = getBase58Decoder();
  const innerInstructions: InnerInstructionsJson[] = [];
  meta.innerInstructions().forEach((group, index) => {
    if (group.length === 0) return;
    innerInstructions.push({
      index,
      instructions: group.map((inner) => {
        const ix = inner.instruction();
        return { programIdIndex: ix.programIdIndex(), accounts: [...ix.accounts()], data: b58.decode(ix.data()), stackHeight: inner.stackHeight() };
      }),
    });
  });
  const rd = meta.returnData();
  const rdBytes = rd.data();
  return {
    err: described?.err ?? null,
    errText: described?.errText ?? null,
    logs: meta.logs(),
    unitsConsumed: meta.computeUnitsConsumed(),
    fee: feeOf(meta),
    innerInstructions,
    returnData: rdBytes.length === 0 ? null : { programId: getAddressDecoder().decode(rd.programId()), data: [getBase64Decoder().decode(rdBytes), 'base64'] },
  };
}
