import { describe, expect, it } from 'bun:test';
import { AccountRole, type Address } from '@solana/kit';
import { usdcAta } from '../../src/solana/ata.ts';
import { checkTransfer, checkX402Transfer, decodeMessage } from '../../src/solana/decode.ts';
import { MessageDecodeError } from '../../src/solana/errors.ts';
import {
  computeUnitLimitInstruction,
  computeUnitPriceInstruction,
  createAtaIdempotentInstruction,
  memoInstruction,
  transferCheckedInstruction,
} from '../../src/solana/instructions.ts';
import { buildUsdcTransfer, buildX402Transfer } from '../../src/solana/transfer.ts';
import { BLOCKHASH, cast, compileWith, randomAddress, systemTransfer } from './helpers.ts';

const AMOUNT = 12_500_000n;
const FEE = 62_500n;

/** A payment intent plus the accounts its instructions use, and a builder of tampered variants. */
async function scenario() {
  const c = cast();
  const references = [randomAddress()];
  const [source, destination, treasury] = await Promise.all([
    usdcAta(c.wallet, c.mint), usdcAta(c.recipientOwner, c.mint), usdcAta(c.treasuryOwner, c.mint),
  ]);
  const expected = { ...c, amount: AMOUNT, maxFee: FEE, references };
  const amountIx = (o: Partial<Parameters<typeof transferCheckedInstruction>[0]> = {}) =>
    transferCheckedInstruction({ source, mint: c.mint, destination, authority: c.wallet, amount: AMOUNT, decimals: 6, extraAccounts: references, ...o });
  const feeIx = (o: Partial<Parameters<typeof transferCheckedInstruction>[0]> = {}) =>
    transferCheckedInstruction({ source, mint: c.mint, destination: treasury, authority: c.wallet, amount: FEE, decimals: 6, ...o });
  const ataIx = (o: Partial<Parameters<typeof createAtaIdempotentInstruction>[0]> = {}) =>
    createAtaIdempotentInstruction({ payer: c.feePayer, ata: destination, owner: c.recipientOwner, mint: c.mint, ...o });
  const honest = await buildUsdcTransfer({ ...c, amount: AMOUNT, fee: FEE, createRecipientAta: true, references, memo: 'hi', blockhash: BLOCKHASH });
  return { c, expected, source, destination, treasury, amountIx, feeIx, ataIx, honest: honest.messageBytes };
}

async function reasonOf(bytes: Uint8Array, expected: Parameters<typeof checkTransfer>[1]): Promise<string> {
  const result = await checkTransfer(bytes, expected);
  if (result.ok) throw new Error('expected a refusal');
  return result.reason;
}

describe('checkTransfer', () => {
  it('accepts the message buildUsdcTransfer built for the same intent, with or without fee, ATA creation and memo', async () => {
    const s = await scenario();
    expect(await checkTransfer(s.honest, s.expected)).toEqual({ ok: true });
    const bare = await buildUsdcTransfer({ ...s.c, amount: AMOUNT, fee: 0n, createRecipientAta: false, references: s.expected.references, blockhash: BLOCKHASH });
    expect(await checkTransfer(bare.messageBytes, s.expected)).toEqual({ ok: true });
  });

  it('accepts a fee below the quoted maximum and an optional compute budget', async () => {
    const s = await scenario();
    const bytes = compileWith(s.c.feePayer, [
      computeUnitLimitInstruction(40_000), computeUnitPriceInstruction(10n), s.amountIx(), s.feeIx({ amount: FEE - 1n }),
    ]);
    expect(await checkTransfer(bytes, s.expected)).toEqual({ ok: true });
  });

  it('refuses an altered amount, naming both values', async () => {
    const s = await scenario();
    const bytes = compileWith(s.c.feePayer, [s.amountIx({ amount: 13_000_000n }), s.feeIx()]);
    expect(await reasonOf(bytes, s.expected)).toContain('amount 13000000 differs from expected 12500000');
  });

  it('refuses a message built for another recipient', async () => {
    const s = await scenario();
    const other = await buildUsdcTransfer({
      ...s.c, recipientOwner: randomAddress(), amount: AMOUNT, fee: FEE, createRecipientAta: false, references: s.expected.references, blockhash: BLOCKHASH,
    });
    expect(await reasonOf(other.messageBytes, s.expected)).toContain(`expected ${s.destination}`);
  });

  it('refuses the creation of another owner\'s token account, or one paid by the wallet', async () => {
    const s = await scenario();
    const stranger = randomAddress();
    const strangerAta = await usdcAta(stranger, s.c.mint);
    const other = compileWith(s.c.feePayer, [s.ataIx({ owner: stranger, ata: strangerAta }), s.amountIx()]);
    expect(await reasonOf(other, s.expected)).toContain(`creates a token account for ${stranger}`);
    const walletPays = compileWith(s.c.feePayer, [s.ataIx({ payer: s.c.wallet }), s.amountIx()]);
    expect(await reasonOf(walletPays, s.expected)).toContain('rent is paid by');
    const twice = compileWith(s.c.feePayer, [s.ataIx(), s.ataIx(), s.amountIx()]);
    expect(await reasonOf(twice, s.expected)).toContain('second token account creation');
  });

  it('refuses a fee above the quoted maximum', async () => {
    const s = await scenario();
    const bytes = compileWith(s.c.feePayer, [s.amountIx(), s.feeIx({ amount: FEE + 1n })]);
    expect(await reasonOf(bytes, s.expected)).toContain('fee 62501 exceeds the maximum 62500');
  });

  it('refuses a fee sent to an account other than the treasury\'s', async () => {
    const s = await scenario();
    const elsewhere = await usdcAta(randomAddress(), s.c.mint);
    const bytes = compileWith(s.c.feePayer, [s.amountIx(), s.feeIx({ destination: elsewhere })]);
    expect(await reasonOf(bytes, s.expected)).toContain(`the fee goes to ${elsewhere}`);
  });

  it('refuses another mint or other decimals', async () => {
    const s = await scenario();
    const mint = randomAddress();
    expect(await reasonOf(compileWith(s.c.feePayer, [s.amountIx({ mint })]), s.expected)).toContain(`mint ${mint} differs`);
    expect(await reasonOf(compileWith(s.c.feePayer, [s.amountIx({ decimals: 9 })]), s.expected)).toContain('decimals 9');
  });

  it('refuses a transfer out of another token account or under another authority', async () => {
    const s = await scenario();
    const other = randomAddress();
    expect(await reasonOf(compileWith(s.c.feePayer, [s.amountIx({ source: other })]), s.expected)).toContain(`source ${other}`);
    const stranger = randomAddress();
    expect(await reasonOf(compileWith(s.c.feePayer, [s.amountIx({ authority: stranger })]), s.expected)).toContain(stranger);
  });

  it('refuses extra instructions: a System transfer, a third transferChecked, an unknown program', async () => {
    const s = await scenario();
    const sol = compileWith(s.c.feePayer, [s.amountIx(), systemTransfer(s.c.wallet, randomAddress(), 1n)]);
    expect(await reasonOf(sol, s.expected)).toContain('program 11111111111111111111111111111111');
    const third = compileWith(s.c.feePayer, [s.amountIx(), s.feeIx(), s.feeIx({ amount: 1n })]);
    expect(await reasonOf(third, s.expected)).toContain('third transferChecked');
    const secondToThief = compileWith(s.c.feePayer, [s.amountIx(), s.feeIx({ destination: randomAddress() })]);
    expect(await reasonOf(secondToThief, s.expected)).toContain('the fee goes to');
    const program = randomAddress();
    const unknown = compileWith(s.c.feePayer, [s.amountIx(), { programAddress: program, data: new Uint8Array([1]) }]);
    expect(await reasonOf(unknown, s.expected)).toContain(`program ${program}`);
    const twoMemos = compileWith(s.c.feePayer, [s.amountIx(), memoInstruction('a'), memoInstruction('b')]);
    expect(await reasonOf(twoMemos, s.expected)).toContain('second memo');
  });

  it('refuses a non-transferChecked use of the Token program (e.g. Approve)', async () => {
    const s = await scenario();
    const approve = {
      programAddress: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' as Address,
      accounts: [
        { address: s.source, role: AccountRole.WRITABLE },
        { address: randomAddress(), role: AccountRole.READONLY },
        { address: s.c.wallet, role: AccountRole.READONLY_SIGNER },
      ],
      data: new Uint8Array([4, 255, 255, 255, 255, 255, 255, 255, 255]),
    };
    expect(await reasonOf(compileWith(s.c.feePayer, [s.amountIx(), approve]), s.expected)).toContain('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
  });

  it('refuses references that differ from the expected ones', async () => {
    const s = await scenario();
    expect(await reasonOf(compileWith(s.c.feePayer, [s.amountIx({ extraAccounts: [] })]), s.expected)).toContain('references');
    expect(await reasonOf(compileWith(s.c.feePayer, [s.amountIx({ extraAccounts: [randomAddress()] })]), s.expected)).toContain('references');
  });

  it('refuses the wallet as fee payer and a different fee payer', async () => {
    const s = await scenario();
    expect(await reasonOf(compileWith(s.c.wallet, [s.amountIx()]), s.expected)).toBe('the wallet is the fee payer');
    const stranger = randomAddress();
    expect(await reasonOf(compileWith(stranger, [s.amountIx()]), s.expected)).toBe(`fee payer ${stranger} differs from expected ${s.c.feePayer}`);
    expect(await reasonOf(s.honest, { ...s.expected, feePayer: s.c.wallet })).toBe('the wallet must not be the fee payer');
  });

  it('refuses a message that needs a third signer or transfers nothing', async () => {
    const s = await scenario();
    const extraSigner = randomAddress();
    const memoSigned = { ...memoInstruction('x'), accounts: [{ address: extraSigner, role: AccountRole.READONLY_SIGNER }] };
    expect(await reasonOf(compileWith(s.c.feePayer, [s.amountIx(), memoSigned]), s.expected)).toContain(`signature from ${extraSigner}`);
    expect(await reasonOf(compileWith(s.c.feePayer, [memoInstruction('x')]), s.expected)).toBe('the wallet is not a signer of the message');
  });

  it('refuses malformed bytes instead of throwing', async () => {
    const s = await scenario();
    expect(await reasonOf(s.honest.subarray(0, 40), s.expected)).toContain('malformed');
    expect(await reasonOf(new Uint8Array([...s.honest, 0]), s.expected)).toContain('trailing');
  });
});

describe('decodeMessage', () => {
  it('refuses address-table lookups', async () => {
    const s = await scenario();
    const bytes = new Uint8Array(s.honest);
    // A v0 message ends with the lookup-table count (0); replace it with one table of one writable index.
    expect(bytes.at(-1)).toBe(0);
    const withLookup = new Uint8Array([...bytes.subarray(0, -1), 1, ...crypto.getRandomValues(new Uint8Array(32)), 1, 0, 0]);
    expect(() => decodeMessage(withLookup)).toThrow(MessageDecodeError);
    expect(() => decodeMessage(withLookup)).toThrow('address table lookups');
  });

  it('reads an invalid-UTF-8 memo as unknown', async () => {
    const s = await scenario();
    const bad = { ...memoInstruction(''), data: new Uint8Array([0xff, 0xfe]) };
    const decoded = decodeMessage(compileWith(s.c.feePayer, [s.amountIx(), bad]));
    expect(decoded.instructions[1]).toEqual({ kind: 'unknown', programId: 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address });
  });
});

describe('checkX402Transfer', () => {
  async function x402() {
    const c = cast();
    const payTo = randomAddress();
    const expected = { wallet: c.wallet, mint: c.mint, payTo, amount: 10_000n, feePayer: c.feePayer };
    const [source, destination] = await Promise.all([usdcAta(c.wallet, c.mint), usdcAta(payTo, c.mint)]);
    const transfer = (o: Partial<Parameters<typeof transferCheckedInstruction>[0]> = {}) =>
      transferCheckedInstruction({ source, mint: c.mint, destination, authority: c.wallet, amount: 10_000n, decimals: 6, ...o });
    return { c, expected, transfer, payTo };
  }

  it('accepts the message buildX402Transfer built for the same requirement', async () => {
    const x = await x402();
    const { messageBytes } = await buildX402Transfer({ ...x.expected, memo: 'n', blockhash: BLOCKHASH });
    expect(await checkX402Transfer(messageBytes, x.expected)).toEqual({ ok: true });
  });

  it('refuses an altered amount, another payee, a missing compute budget, an ATA creation and a costly price', async () => {
    const x = await x402();
    const budget = [computeUnitLimitInstruction(20_000), computeUnitPriceInstruction(1n)];
    const refuse = async (bytes: Uint8Array, text: string) => {
      const r = await checkX402Transfer(bytes, x.expected);
      expect(r.ok ? '' : r.reason).toContain(text);
    };
    await refuse(compileWith(x.c.feePayer, [...budget, x.transfer({ amount: 10_001n })]), 'amount 10001 differs from expected 10000');
    await refuse(compileWith(x.c.feePayer, [...budget, x.transfer({ destination: randomAddress() })]), 'the amount goes to');
    await refuse(compileWith(x.c.feePayer, [x.transfer()]), 'SetComputeUnitLimit');
    const payToAta = await usdcAta(x.payTo, x.c.mint);
    const ata = createAtaIdempotentInstruction({ payer: x.c.feePayer, ata: payToAta, owner: x.payTo, mint: x.c.mint });
    await refuse(compileWith(x.c.feePayer, [...budget, ata, x.transfer()]), 'instruction 2 must be transferChecked');
    await refuse(compileWith(x.c.feePayer, [computeUnitLimitInstruction(20_000), computeUnitPriceInstruction(5_000_001n), x.transfer()]), 'compute unit price');
    await refuse(compileWith(x.c.feePayer, [...budget, x.transfer(), x.transfer()]), 'instruction 3 may only be a Memo');
    await refuse(compileWith(x.c.wallet, [...budget, x.transfer()]), 'the wallet is the fee payer');
  });
});
