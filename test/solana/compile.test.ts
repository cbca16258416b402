/**
 * Our v0 message compiler against kit's: the same bytes for thousands of seeded random
 * instruction lists (shared and repeated accounts, every role, programs that are also accounts,
 * empty, long and no data, no account list), and a refusal wherever kit refuses.
 */
import { describe, expect, it } from 'bun:test';
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getAddressDecoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
} from '@solana/kit';
import { compileV0Message } from '../../src/solana/compile.ts';
import { rng } from '../helpers/random.ts';
import { BLOCKHASH } from './helpers.ts';

function kitCompile(feePayer: Address, instructions: Instruction[]): Uint8Array {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH.blockhash as Blockhash, lastValidBlockHeight: BLOCKHASH.lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return new Uint8Array(compileTransaction(message).messageBytes);
}

/** The outcome of a compile: its bytes as hex, or that it refused. */
function outcome(compile: () => Uint8Array): string {
  try {
    return Buffer.from(compile()).toString('hex');
  } catch {
    return 'refused';
  }
}

const ROLES = [AccountRole.READONLY, AccountRole.WRITABLE, AccountRole.READONLY_SIGNER, AccountRole.WRITABLE_SIGNER];

/** A random instruction list over a small pool of addresses, so addresses recur across roles and instructions. */
function randomCase(next: () => number) {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => Math.floor(next() * 256));
  // Some addresses start with zero bytes (leading '1's in base58), which collation must order as kit does.
  const pool = Array.from({ length: 2 + Math.floor(next() * 10) }, () => {
    const key = bytes(32);
    if (next() < 0.15) key.fill(0, 0, 1 + Math.floor(next() * 3));
    return getAddressDecoder().decode(key);
  });
  const programs = ['11111111111111111111111111111111' as Address, 'ComputeBudget111111111111111111111111111111' as Address];
  const feePayer = pick(pool);
  const instructions: Instruction[] = Array.from({ length: 1 + Math.floor(next() * 6) }, () => {
    const accounts = next() < 0.15 ? undefined : Array.from({ length: Math.floor(next() * 7) }, () => ({ address: pick(pool), role: pick(ROLES) }));
    // Data of 128 bytes or more takes a two-byte length (a long memo).
    const data = next() < 0.15 ? undefined : bytes(next() < 0.1 ? 128 + Math.floor(next() * 300) : Math.floor(next() * 40));
    // A program is sometimes also a pool address, so it can be listed as an account too.
    return { programAddress: next() < 0.2 ? pick(pool) : pick(programs), ...(accounts && { accounts }), ...(data && { data }) };
  });
  return { feePayer, instructions };
}

describe('compileV0Message', () => {
  it('compiles 3,000 seeded random instruction lists to the bytes kit compiles, and refuses what kit refuses', () => {
    const next = rng(0x5eed_c0de);
    let compiled = 0;
    for (let i = 0; i < 3_000; i++) {
      const { feePayer, instructions } = randomCase(next);
      const ours = outcome(() => compileV0Message(feePayer, BLOCKHASH.blockhash, instructions));
      const kits = outcome(() => kitCompile(feePayer, instructions));
      if (ours !== kits) throw new Error(`case ${i} differs:\n ours ${ours}\n kit  ${kits}\n${JSON.stringify({ feePayer, instructions }, (_k, v) => (v instanceof Uint8Array ? [...v] : v))}`);
      if (ours !== 'refused') compiled++;
    }
    // Most cases compile; the rest exercise the refusals (a writable or fee-paying program).
    expect(compiled).toBeGreaterThan(1_800);
  });

  it('refuses a blockhash that is not 32 bytes of base58', () => {
    const feePayer = getAddressDecoder().decode(new Uint8Array(32).fill(1));
    expect(() => compileV0Message(feePayer, 'abc', [])).toThrow('is not 32 bytes');
  });
});
