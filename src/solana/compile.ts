/**
 * Compiles a version-0 Solana message without address lookup tables: the bytes of kit's
 * `compileTransaction(...).messageBytes` (test/solana/compile.test.ts compares the two over
 * thousands of random instruction lists), for a fraction of its cost — kit decodes every address
 * from base58 twice per message (once to check it, once to write it) and builds its codecs per
 * call. Every message the daemon builds goes through here, one or more per payment.
 */
import { AccountRole, getAddressComparator, type Address, type Instruction } from '@solana/kit';
import { addressBytesView } from './address-codec.ts';

/** The account limits kit enforces on a compiled message. */
const MAX_ACCOUNTS = 64;
const MAX_SIGNERS = 12;
const MAX_INSTRUCTIONS = 64;
const MAX_INSTRUCTION_ACCOUNTS = 255;
const VERSION_0 = 0x80;

const isSigner = (role: AccountRole) => role >= AccountRole.READONLY_SIGNER;
const isWritable = (role: AccountRole) => (role & AccountRole.WRITABLE) !== 0;

let compare: ((a: string, b: string) => number) | null = null;

function shortVec(out: number[], n: number): void {
  let rest = n;
  for (;;) {
    const low = rest & 0x7f;
    rest >>= 7;
    if (rest === 0) {
      out.push(low);
      return;
    }
    out.push(low | 0x80);
  }
}

/**
 * The message bytes of `instructions` under `feePayer` and `blockhash`, accounts ordered and roles
 * merged as kit does: the fee payer first, then signers before non-signers, writable before
 * read-only, each group by kit's address collation; an invoked program is a read-only account.
 */
export function compileV0Message(feePayer: Address, blockhash: string, instructions: readonly Instruction[]): Uint8Array {
  if (instructions.length > MAX_INSTRUCTIONS) throw new RangeError(`${instructions.length} instructions, above the ${MAX_INSTRUCTIONS} a message may hold`);
  const roles = new Map<string, AccountRole>([[feePayer, AccountRole.WRITABLE_SIGNER]]);
  const programs = new Set<string>();
  for (const instruction of instructions) {
    const program = instruction.programAddress;
    programs.add(program);
    const known = roles.get(program);
    if (known !== undefined && isWritable(known)) {
      throw new RangeError(program === feePayer ? `the fee payer ${program} cannot be an invoked program` : `the invoked program ${program} must not be writable`);
    }
    if (known === undefined) roles.set(program, AccountRole.READONLY);
    const accounts = instruction.accounts ?? [];
    if (accounts.length > MAX_INSTRUCTION_ACCOUNTS) throw new RangeError(`an instruction lists ${accounts.length} accounts, above ${MAX_INSTRUCTION_ACCOUNTS}`);
    for (const account of accounts) {
      if (account.address === feePayer) continue;
      if (programs.has(account.address) && isWritable(account.role)) throw new RangeError(`the invoked program ${account.address} must not be writable`);
      roles.set(account.address, (roles.get(account.address) ?? AccountRole.READONLY) | account.role);
    }
  }
  const ordered = [...roles.keys()];
  compare ??= getAddressComparator();
  const cmp = compare;
  ordered.sort((a, b) => {
    if (a === feePayer) return -1;
    if (b === feePayer) return 1;
    const ra = roles.get(a)!;
    const rb = roles.get(b)!;
    if (isSigner(ra) !== isSigner(rb)) return isSigner(ra) ? -1 : 1;
    if (isWritable(ra) !== isWritable(rb)) return isWritable(ra) ? -1 : 1;
    return cmp(a, b);
  });
  if (ordered.length > MAX_ACCOUNTS) throw new RangeError(`${ordered.length} accounts, above the ${MAX_ACCOUNTS} a message may hold`);
  let signers = 0;
  let readonlySigners = 0;
  let readonlyOthers = 0;
  const index = new Map<string, number>();
  for (const [i, address] of ordered.entries()) {
    const role = roles.get(address)!;
    if (isSigner(role)) {
      signers++;
      if (!isWritable(role)) readonlySigners++;
    } else if (!isWritable(role)) readonlyOthers++;
    index.set(address, i);
  }
  if (signers > MAX_SIGNERS) throw new RangeError(`${signers} signers, above the ${MAX_SIGNERS} a message may hold`);
  // A blockhash is 32 bytes of base58, as an address is: the same memo (one blockhash serves many messages).
  let lifetime: Uint8Array;
  try {
    lifetime = addressBytesView(blockhash);
  } catch {
    throw new RangeError(`blockhash ${blockhash} is not 32 bytes of base58`);
  }

  const out: number[] = [VERSION_0, signers, readonlySigners, readonlyOthers];
  shortVec(out, ordered.length);
  for (const address of ordered) out.push(...addressBytesView(address));
  out.push(...lifetime);
  shortVec(out, instructions.length);
  for (const instruction of instructions) {
    out.push(index.get(instruction.programAddress)!);
    const accounts = instruction.accounts ?? [];
    shortVec(out, accounts.length);
    for (const account of accounts) out.push(index.get(account.address)!);
    const data = instruction.data ?? new Uint8Array(0);
    shortVec(out, data.length);
    for (const byte of data) out.push(byte);
  }
  // No address table lookups.
  shortVec(out, 0);
  return new Uint8Array(out);
}
