/**
 * Reads SPL Token (and the base layout of Token-2022) mints and token accounts from raw
 * account bytes, and renders amounts the way the real RPC does (`uiAmountString` trimmed,
 * `uiAmount` as the float clients expect). Decoded by hand: only the fixed base layouts
 * matter to simnet's answers, and the codecs' Option wrappers would only add noise.
 */
import { type Address, type ReadonlyUint8Array } from '@solana/kit';
import { addressOf } from '../solana/address-codec.ts';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';

/** The Token-2022 program; its mints and accounts share the SPL Token base layout. */
export const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' as Address;

const MINT_LEN = 82;
const ACCOUNT_LEN = 165;
/** Token-2022 writes the account type right after the 165-byte base: 1 mint, 2 account. */
const ACCOUNT_TYPE_OFFSET = 165;

/** The account fields simnet needs to read token state: owner program and data. */
export interface RawAccount {
  programAddress: Address;
  data: ReadonlyUint8Array;
}

/** A decoded token account. `state`: 0 uninitialized, 1 initialized, 2 frozen. */
export interface TokenAccountInfo {
  programId: Address;
  mint: Address;
  owner: Address;
  amount: bigint;
  delegate: Address | null;
  state: number;
  /** Rent-exempt reserve of a wrapped-SOL account; null for any other mint. */
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: Address | null;
}

/** A decoded mint. */
export interface MintInfo {
  programId: Address;
  mintAuthority: Address | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: Address | null;
}

/** The amount object the RPC uses everywhere (`TokenAmount` / `UiTokenAmount`). */
export interface UiTokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number | null;
  uiAmountString: string;
}

export function isTokenProgram(program: Address): boolean {
  return program === TOKEN_PROGRAM_ADDRESS || program === TOKEN_2022_PROGRAM_ADDRESS;
}

function kind(account: RawAccount): 'mint' | 'account' | null {
  if (!isTokenProgram(account.programAddress)) return null;
  const len = account.data.length;
  if (len === MINT_LEN) return 'mint';
  if (len === ACCOUNT_LEN) return 'account';
  if (account.programAddress === TOKEN_2022_PROGRAM_ADDRESS && len > ACCOUNT_TYPE_OFFSET) {
    const type = account.data[ACCOUNT_TYPE_OFFSET];
    return type === 1 ? 'mint' : type === 2 ? 'account' : null;
  }
  return null;
}

function optionalAddress(view: DataView, data: ReadonlyUint8Array, offset: number): Address | null {
  return view.getUint32(offset, true) === 0 ? null : addressOf(data.subarray(offset + 4, offset + 36));
}

/** Decodes an initialized or frozen token account; null for anything else. */
export function decodeTokenAccount(account: RawAccount): TokenAccountInfo | null {
  if (kind(account) !== 'account') return null;
  const d = account.data;
  const view = new DataView(d.buffer, d.byteOffset, d.byteLength);
  const state = d[108] ?? 0;
  if (state === 0) return null;
  return {
    programId: account.programAddress,
    mint: addressOf(d.subarray(0, 32)),
    owner: addressOf(d.subarray(32, 64)),
    amount: view.getBigUint64(64, true),
    delegate: optionalAddress(view, d, 72),
    state,
    isNative: view.getUint32(109, true) === 0 ? null : view.getBigUint64(113, true),
    delegatedAmount: view.getBigUint64(121, true),
    closeAuthority: optionalAddress(view, d, 129),
  };
}

/** Decodes a mint; null when the account is not one. */
export function decodeMint(account: RawAccount): MintInfo | null {
  if (kind(account) !== 'mint') return null;
  const d = account.data;
  const view = new DataView(d.buffer, d.byteOffset, d.byteLength);
  return {
    programId: account.programAddress,
    mintAuthority: optionalAddress(view, d, 0),
    supply: view.getBigUint64(36, true),
    decimals: d[44] ?? 0,
    isInitialized: d[45] === 1,
    freezeAuthority: optionalAddress(view, d, 46),
  };
}

/** `amount` base units as a trimmed decimal string: (1500000, 6) → "1.5", (0, 6) → "0". */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, -decimals);
  const frac = digits.slice(-decimals).replace(/0+$/, '');
  return frac === '' ? whole : `${whole}.${frac}`;
}

/**
 * The RPC's amount object. `zeroAsNull` reproduces transaction token balances, where the
 * real RPC writes `uiAmount: null` for a zero amount.
 */
export function uiTokenAmount(amount: bigint, decimals: number, zeroAsNull = false): UiTokenAmount {
  const text = uiAmountString(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: zeroAsNull && amount === 0n ? null : Number(text), uiAmountString: text };
}

/** The program name `jsonParsed` reports for a token program. */
export function tokenProgramName(program: Address): string {
  return program === TOKEN_2022_PROGRAM_ADDRESS ? 'spl-token-2022' : 'spl-token';
}

const STATES = ['uninitialized', 'initialized', 'frozen'];

/**
 * The `jsonParsed` data of a mint or token account, as the real RPC writes it; null when
 * the account is neither (the caller then falls back to base64, as the real RPC does).
 * `decimalsOf` resolves a token account's mint decimals; an unknown mint makes it unparseable.
 */
export function parsedTokenData(
  account: RawAccount,
  decimalsOf: (mint: Address) => number | null,
): { program: string; parsed: { type: 'mint' | 'account'; info: Record<string, unknown> }; space: bigint } | null {
  const program = tokenProgramName(account.programAddress);
  const space = BigInt(account.data.length);
  const mint = decodeMint(account);
  if (mint !== null) {
    const info = {
      decimals: mint.decimals,
      freezeAuthority: mint.freezeAuthority,
      isInitialized: mint.isInitialized,
      mintAuthority: mint.mintAuthority,
      supply: mint.supply.toString(),
    };
    return { program, parsed: { type: 'mint', info }, space };
  }
  const token = decodeTokenAccount(account);
  if (token === null) return null;
  const decimals = decimalsOf(token.mint);
  if (decimals === null) return null;
  const info: Record<string, unknown> = {
    isNative: token.isNative !== null,
    mint: token.mint,
    owner: token.owner,
    state: STATES[token.state] ?? 'uninitialized',
    tokenAmount: uiTokenAmount(token.amount, decimals),
  };
  if (token.delegate !== null) {
    info.delegate = token.delegate;
    info.delegatedAmount = uiTokenAmount(token.delegatedAmount, decimals);
  }
  if (token.isNative !== null) info.rentExemptReserve = uiTokenAmount(token.isNative, 9);
  if (token.closeAuthority !== null) info.closeAuthority = token.closeAuthority;
  return { program, parsed: { type: 'account', info }, space };
}
