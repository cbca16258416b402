/**
 * `jsonParsed` rendering of instructions for the programs simnet's users touch: System
 * transfers, SPL Token transfers and mints, Associated Token Account creation and Memo. Any
 * other instruction is "partially decoded" (program id, account list, base58 data), exactly
 * the real RPC's fallback.
 */
import { getBase58Decoder, type Address } from '@solana/kit';
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { TOKEN_2022_PROGRAM_ADDRESS, tokenProgramName, uiTokenAmount } from './tokens.ts';

/** A parsed instruction or the partially decoded fallback, as `jsonParsed` lists them. */
export type JsonParsedInstruction =
  | { program: string; programId: string; parsed: unknown; stackHeight: number | null }
  | { programId: string; accounts: string[]; data: string; stackHeight: number | null };

/** The current SPL Memo program (v3). */
export const MEMO_PROGRAM_ADDRESS = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;
/** Memo program ids (v1 and v3): both are parsed and reported as memos. */
export const MEMO_PROGRAM_ADDRESSES: ReadonlySet<string> = new Set(['Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo', MEMO_PROGRAM_ADDRESS]);

type Parsed = { program: string; parsed: unknown } | null;

function u64(data: Uint8Array, offset: number): bigint | null {
  return data.length < offset + 8 ? null : new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(offset, true);
}

function named(accounts: string[], names: string[]): Record<string, string> | null {
  if (accounts.length < names.length) return null;
  return Object.fromEntries(names.map((n, i) => [n, accounts[i] as string]));
}

function parseSystem(accounts: string[], data: Uint8Array): Parsed {
  const view = data.length >= 4 ? new DataView(data.buffer, data.byteOffset, data.byteLength) : null;
  if (view?.getUint32(0, true) !== 2) return null;
  const lamports = u64(data, 4);
  const info = named(accounts, ['source', 'destination']);
  return lamports === null || info === null ? null : { program: 'system', parsed: { type: 'transfer', info: { ...info, lamports } } };
}

function parseToken(program: Address, accounts: string[], data: Uint8Array): Parsed {
  const name = tokenProgramName(program);
  const amount = u64(data, 1);
  if (amount === null) return null;
  const decimals = data[9];
  const build = (type: string, names: string[], extra: Record<string, unknown>): Parsed => {
    const info = named(accounts, names);
    return info === null ? null : { program: name, parsed: { type, info: { ...info, ...extra } } };
  };
  switch (data[0]) {
    case 3:
      return build('transfer', ['source', 'destination', 'authority'], { amount: amount.toString() });
    case 7:
      return build('mintTo', ['mint', 'account', 'mintAuthority'], { amount: amount.toString() });
    case 12:
      return decimals === undefined ? null : build('transferChecked', ['source', 'mint', 'destination', 'authority'], { tokenAmount: uiTokenAmount(amount, decimals) });
    case 14:
      return decimals === undefined ? null : build('mintToChecked', ['mint', 'account', 'mintAuthority'], { tokenAmount: uiTokenAmount(amount, decimals) });
    default:
      return null;
  }
}

function parseAssociatedToken(accounts: string[], data: Uint8Array): Parsed {
  const type = data.length === 0 || data[0] === 0 ? 'create' : data[0] === 1 ? 'createIdempotent' : null;
  const info = named(accounts, ['source', 'account', 'wallet', 'mint', 'systemProgram', 'tokenProgram']);
  return type === null || info === null ? null : { program: 'spl-associated-token-account', parsed: { type, info } };
}

function parseMemo(data: Uint8Array): Parsed {
  try {
    return { program: 'spl-memo', parsed: new TextDecoder('utf-8', { fatal: true }).decode(data) };
  } catch {
    return null;
  }
}

/** Renders one instruction for `jsonParsed`. */
export function parseInstruction(programId: Address, accounts: string[], data: Uint8Array, stackHeight: number | null): JsonParsedInstruction {
  let parsed: Parsed = null;
  if (programId === SYSTEM_PROGRAM_ADDRESS) parsed = parseSystem(accounts, data);
  else if (programId === TOKEN_PROGRAM_ADDRESS || programId === TOKEN_2022_PROGRAM_ADDRESS) parsed = parseToken(programId, accounts, data);
  else if (programId === ASSOCIATED_TOKEN_PROGRAM_ADDRESS) parsed = parseAssociatedToken(accounts, data);
  else if (MEMO_PROGRAM_ADDRESSES.has(programId)) parsed = parseMemo(data);
  if (parsed !== null) return { ...parsed, programId, stackHeight };
  return { programId, accounts, data: getBase58Decoder().decode(data), stackHeight };
}
