/**
 * Renders accounts and landed transactions in the real RPC's shapes and encodings
 * (base58, base64, base64+zstd, json, jsonParsed). u64 values stay `bigint` and are written
 * as bare JSON numbers by `encodeJson`.
 */
import { getBase58Decoder, getBase58Encoder, getBase64Decoder, getBase64Encoder, type Address, type EncodedAccount } from '@solana/kit';
import { parseInstruction } from './instructions.ts';
import type { LedgerEntry } from './ledger.ts';
import { invalidParams, RpcError } from './rpc-error.ts';
import { parsedTokenData } from './tokens.ts';
import { decodeWire, isWritable } from './wire.ts';

/** What every account carries as rentEpoch since rent collection ended: u64::MAX. */
const RENT_EPOCH = 18446744073709551615n;
const ENCODINGS = ['base58', 'base64', 'base64+zstd', 'jsonParsed'];

/** `dataSlice` of getAccountInfo and friends. */
export interface DataSlice {
  offset: number;
  length: number;
}

/** Checks an account `encoding` parameter (defaulting as the real RPC does, to base58). */
export function accountEncoding(value: unknown): string {
  const encoding = value ?? 'base58';
  if (typeof encoding !== 'string' || !ENCODINGS.includes(encoding)) {
    throw invalidParams(`unknown variant \`${String(encoding)}\`, expected one of \`binary\`, \`base58\`, \`base64\`, \`jsonParsed\`, \`base64+zstd\``);
  }
  return encoding;
}

function binary(bytes: Uint8Array, encoding: string): [string, string] {
  if (encoding === 'base58') {
    if (bytes.length > 128) throw new RpcError(-32600, 'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
    return [getBase58Decoder().decode(bytes), 'base58'];
  }
  if (encoding === 'base64+zstd') return [getBase64Decoder().decode(Bun.zstdCompressSync(bytes)), 'base64+zstd'];
  return [getBase64Decoder().decode(bytes), 'base64'];
}

/** One account as getAccountInfo's `value` (mints and token accounts parse under jsonParsed). */
export function encodeAccount(
  account: EncodedAccount,
  encoding: string,
  decimalsOf: (mint: Address) => number | null,
  dataSlice?: DataSlice,
): Record<string, unknown> {
  const full = new Uint8Array(account.data);
  const parsed = encoding === 'jsonParsed' ? parsedTokenData(account, decimalsOf) : null;
  const sliced = dataSlice === undefined ? full : full.subarray(dataSlice.offset, dataSlice.offset + dataSlice.length);
  return {
    data: parsed ?? binary(sliced, encoding === 'jsonParsed' ? 'base64' : encoding),
    executable: account.executable,
    lamports: BigInt(account.lamports),
    owner: account.programAddress,
    rentEpoch: RENT_EPOCH,
    space: BigInt(full.length),
  };
}

/** Transaction encodings getTransaction accepts. */
export const TRANSACTION_ENCODINGS = ['json', 'jsonParsed', 'base58', 'base64'];

/**
 * getTransaction's result for a landed transaction. Like the real RPC, a v0 transaction is
 * refused (-32015) unless the client declares `maxSupportedTransactionVersion`, and `version`
 * and `loadedAddresses` appear only when it does.
 */
export function encodeTransaction(entry: LedgerEntry, encoding: string, maxSupportedVersion: number | undefined): Record<string, unknown> {
  const wire = new Uint8Array(getBase64Encoder().encode(entry.wire));
  const d = decodeWire(wire);
  const version = d.message.version;
  if (version !== 'legacy' && (maxSupportedVersion === undefined || version > maxSupportedVersion)) {
    throw new RpcError(
      -32015,
      `Transaction version (${version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${version}`,
    );
  }
  const versioned = maxSupportedVersion !== undefined;
  const keys = entry.accountKeys;
  const parsed = encoding === 'jsonParsed';
  const addressesOf = (indices: readonly number[]) => indices.map((i) => keys[i] ?? '');
  const innerInstructions = entry.innerInstructions.map((group) => ({
    index: group.index,
    instructions: parsed
      ? group.instructions.map((ix) =>
          parseInstruction((keys[ix.programIdIndex] ?? '') as Address, addressesOf(ix.accounts), new Uint8Array(getBase58Encoder().encode(ix.data)), ix.stackHeight),
        )
      : group.instructions,
  }));
  const meta: Record<string, unknown> = {
    err: entry.err,
    status: entry.err === null ? { Ok: null } : { Err: entry.err },
    fee: BigInt(entry.fee),
    preBalances: entry.preBalances.map(BigInt),
    postBalances: entry.postBalances.map(BigInt),
    innerInstructions,
    logMessages: entry.logMessages,
    preTokenBalances: entry.preTokenBalances,
    postTokenBalances: entry.postTokenBalances,
    rewards: [],
    loadedAddresses: versioned && !parsed ? { writable: [], readonly: [] } : undefined,
    computeUnitsConsumed: BigInt(entry.computeUnitsConsumed),
    returnData: entry.returnData ?? undefined,
  };
  let transaction: unknown;
  if (encoding === 'base64' || encoding === 'base58') {
    transaction = [encoding === 'base64' ? entry.wire : getBase58Decoder().decode(wire), encoding];
  } else {
    const m = d.message;
    const lookups = m.version === 0 ? (m.addressTableLookups ?? []).map((l) => ({ accountKey: l.lookupTableAddress, writableIndexes: l.writableIndexes, readonlyIndexes: l.readonlyIndexes })) : undefined;
    const instructions = m.instructions.map((ix) => {
      const data = new Uint8Array(ix.data ?? []);
      const accounts = ix.accountIndices ?? [];
      return parsed
        ? parseInstruction((keys[ix.programAddressIndex] ?? '') as Address, addressesOf(accounts), data, null)
        : { programIdIndex: ix.programAddressIndex, accounts, data: getBase58Decoder().decode(data), stackHeight: null };
    });
    const message = parsed
      ? {
          accountKeys: m.staticAccounts.map((pubkey, i) => ({ pubkey, signer: i < m.header.numSignerAccounts, writable: isWritable(m, i), source: 'transaction' })),
          recentBlockhash: m.lifetimeToken,
          instructions,
          addressTableLookups: lookups,
        }
      : {
          accountKeys: m.staticAccounts,
          header: {
            numRequiredSignatures: m.header.numSignerAccounts,
            numReadonlySignedAccounts: m.header.numReadonlySignerAccounts,
            numReadonlyUnsignedAccounts: m.header.numReadonlyNonSignerAccounts,
          },
          recentBlockhash: m.lifetimeToken,
          instructions,
          addressTableLookups: lookups,
        };
    transaction = { signatures: d.signatures, message };
  }
  return {
    slot: BigInt(entry.slot),
    blockTime: BigInt(entry.blockTime),
    meta,
    transaction,
    version: versioned ? version : undefined,
  };
}
