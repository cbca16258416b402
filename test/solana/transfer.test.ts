import { describe, expect, it } from 'bun:test';
import { getBase58Decoder, getTransactionDecoder } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { usdcAta, usdcAtaBump } from '../../src/solana/ata.ts';
import { decodeMessage } from '../../src/solana/decode.ts';
import {
  SYSTEM_PROGRAM_ADDRESS,
  X402_DEFAULT_COMPUTE_UNIT_LIMIT,
  X402_DEFAULT_COMPUTE_UNIT_PRICE,
} from '../../src/solana/instructions.ts';
import { USDC_DECIMALS } from '../../src/solana/networks.ts';
import {
  assembleSignedTransaction,
  buildUsdcTransfer,
  computeUnitBudget,
  buildX402Transfer,
  signatureSlots,
  transactionSignature,
} from '../../src/solana/transfer.ts';
import { BLOCKHASH, cast, randomAddress } from './helpers.ts';

describe('buildUsdcTransfer', () => {
  it('round-trips through the decoder with every option set', async () => {
    const c = cast();
    const references = [randomAddress(), randomAddress()];
    const built = await buildUsdcTransfer({
      ...c, amount: 12_500_000n, fee: 62_500n, createRecipientAta: true, references, memo: 'order #42 ✓', computeUnitPrice: 25_000n, blockhash: BLOCKHASH,
    });
    expect(built.lastValidBlockHeight).toBe(BLOCKHASH.lastValidBlockHeight);
    const [source, destination, treasury] = await Promise.all([
      usdcAta(c.wallet, c.mint), usdcAta(c.recipientOwner, c.mint), usdcAta(c.treasuryOwner, c.mint),
    ]);
    expect(decodeMessage(built.messageBytes)).toEqual({
      version: 0,
      feePayer: c.feePayer,
      blockhash: BLOCKHASH.blockhash,
      signers: [c.feePayer, c.wallet],
      instructions: [
        { kind: 'computeUnitLimit', units: computeUnitBudget({ recipientAtaBump: await usdcAtaBump(c.recipientOwner, c.mint), fee: true, references: 2, memoBytes: 13 }) },
        { kind: 'computeUnitPrice', microLamports: 25_000n },
        { kind: 'createAtaIdempotent', payer: c.feePayer, ata: destination, owner: c.recipientOwner, mint: c.mint },
        { kind: 'transferChecked', source, mint: c.mint, destination, authority: c.wallet, amount: 12_500_000n, decimals: USDC_DECIMALS, extraAccounts: references },
        { kind: 'transferChecked', source, mint: c.mint, destination: treasury, authority: c.wallet, amount: 62_500n, decimals: USDC_DECIMALS, extraAccounts: [] },
        { kind: 'memo', text: 'order #42 ✓' },
      ],
      // Every account an instruction names: the ATA creation names the fee payer.
      instructionAccounts: new Set([c.feePayer, destination, c.recipientOwner, c.mint, SYSTEM_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS, source, c.wallet, ...references, treasury]),
    });
  });

  it('omits the ATA creation, the fee transfer and the memo when not asked for; the compute budget is always there', async () => {
    const c = cast();
    const built = await buildUsdcTransfer({ ...c, amount: 1n, fee: 0n, createRecipientAta: false, blockhash: BLOCKHASH });
    const decoded = decodeMessage(built.messageBytes);
    expect(decoded.instructions.map((i) => i.kind)).toEqual(['computeUnitLimit', 'computeUnitPrice', 'transferChecked']);
    expect(decoded.instructions[0]).toEqual({ kind: 'computeUnitLimit', units: computeUnitBudget({ recipientAtaBump: null, fee: false, references: 0, memoBytes: null }) });
    expect(decoded.instructions[1]).toEqual({ kind: 'computeUnitPrice', microLamports: 0n });
    expect(decoded.instructions[2]).toMatchObject({ amount: 1n, extraAccounts: [] });
    // Without the ATA creation, no instruction names the fee payer (the x402 facilitator relies on it).
    expect(decoded.instructionAccounts.has(c.feePayer)).toBe(false);
  });

  it('refuses a wallet that would pay the fee, and non-positive amounts', async () => {
    const c = cast();
    const base = { ...c, amount: 1n, fee: 0n, createRecipientAta: false, blockhash: BLOCKHASH };
    await expect(buildUsdcTransfer({ ...base, feePayer: c.wallet })).rejects.toThrow('fee payer');
    await expect(buildUsdcTransfer({ ...base, amount: 0n })).rejects.toThrow('positive');
    await expect(buildUsdcTransfer({ ...base, fee: -1n })).rejects.toThrow('negative');
  });

  it('refuses a memo that would push the transaction over 1232 bytes', async () => {
    const c = cast();
    const built = buildUsdcTransfer({ ...c, amount: 1n, fee: 1n, createRecipientAta: true, memo: 'x'.repeat(1000), blockhash: BLOCKHASH });
    await expect(built).rejects.toThrow('1232-byte limit');
  });
});

describe('buildX402Transfer', () => {
  it('lays out compute limit, compute price, transferChecked to ATA(payTo) and the memo, in that order', async () => {
    const c = cast();
    const payTo = randomAddress();
    const built = await buildX402Transfer({
      wallet: c.wallet, mint: c.mint, payTo, amount: 10_000n, feePayer: c.feePayer, memo: 'nonce-1',
      computeUnitLimit: 30_000, computeUnitPriceMicroLamports: 5_000n, blockhash: BLOCKHASH,
    });
    const [source, destination] = await Promise.all([usdcAta(c.wallet, c.mint), usdcAta(payTo, c.mint)]);
    const decoded = decodeMessage(built.messageBytes);
    expect(decoded.feePayer).toBe(c.feePayer);
    expect(decoded.signers).toEqual([c.feePayer, c.wallet]);
    expect(decoded.instructions).toEqual([
      { kind: 'computeUnitLimit', units: 30_000 },
      { kind: 'computeUnitPrice', microLamports: 5_000n },
      { kind: 'transferChecked', source, mint: c.mint, destination, authority: c.wallet, amount: 10_000n, decimals: USDC_DECIMALS, extraAccounts: [] },
      { kind: 'memo', text: 'nonce-1' },
    ]);
  });

  it('uses the reference client defaults and refuses a price above 5 lamports per unit', async () => {
    const c = cast();
    const base = { wallet: c.wallet, mint: c.mint, payTo: randomAddress(), amount: 1n, feePayer: c.feePayer, blockhash: BLOCKHASH };
    const decoded = decodeMessage((await buildX402Transfer(base)).messageBytes);
    expect(decoded.instructions.slice(0, 2)).toEqual([
      { kind: 'computeUnitLimit', units: X402_DEFAULT_COMPUTE_UNIT_LIMIT },
      { kind: 'computeUnitPrice', microLamports: X402_DEFAULT_COMPUTE_UNIT_PRICE },
    ]);
    expect(decoded.instructions).toHaveLength(3);
    await expect(buildX402Transfer({ ...base, computeUnitPriceMicroLamports: 5_000_001n })).rejects.toThrow('x402 cap');
    await expect(buildX402Transfer({ ...base, feePayer: c.wallet })).rejects.toThrow('fee payer');
  });
});

describe('assembleSignedTransaction', () => {
  it('places each signature in its slot and leaves a missing one zero-filled', async () => {
    const c = cast();
    const { messageBytes } = await buildUsdcTransfer({ ...c, amount: 5n, fee: 0n, createRecipientAta: false, blockhash: BLOCKHASH });
    expect(signatureSlots(messageBytes)).toEqual([c.feePayer, c.wallet]);
    const walletSig = new Uint8Array(64).fill(7);
    const wire = assembleSignedTransaction(messageBytes, { [c.wallet]: walletSig });
    const tx = getTransactionDecoder().decode(wire);
    expect(Array.from(tx.messageBytes)).toEqual(Array.from(messageBytes));
    expect(Array.from(tx.signatures[c.wallet] ?? [])).toEqual(Array.from(walletSig));
    expect(tx.signatures[c.feePayer]).toBeNull();
    expect(() => transactionSignature(wire)).toThrow('empty');

    const feeSig = new Uint8Array(64).fill(9);
    const full = assembleSignedTransaction(messageBytes, new Map([[c.feePayer, feeSig], [c.wallet, walletSig]]));
    expect(transactionSignature(full)).toBe(getBase58Decoder().decode(feeSig));
    expect(full.subarray(1, 65)).toEqual(feeSig);
  });

  it('reads the signer slots from the header alone, as a full decode names them', async () => {
    const c = cast();
    const built = [
      (await buildUsdcTransfer({ ...c, amount: 5n, fee: 1n, createRecipientAta: true, blockhash: BLOCKHASH })).messageBytes,
      (await buildX402Transfer({ wallet: c.wallet, mint: c.mint, payTo: randomAddress(), amount: 1n, feePayer: c.feePayer, blockhash: BLOCKHASH })).messageBytes,
    ];
    for (const bytes of built) expect(signatureSlots(bytes)).toEqual(decodeMessage(bytes).signers);
    expect(() => signatureSlots(built[0]!.subarray(0, 40))).toThrow('malformed message header');
    expect(() => signatureSlots(new Uint8Array([0x80, 0, 0, 0, 0]))).toThrow('malformed message header');
  });

  it('refuses a signature from an address the message does not ask for, or of the wrong length', async () => {
    const c = cast();
    const { messageBytes } = await buildUsdcTransfer({ ...c, amount: 5n, fee: 0n, createRecipientAta: false, blockhash: BLOCKHASH });
    expect(() => assembleSignedTransaction(messageBytes, { [randomAddress()]: new Uint8Array(64) })).toThrow('not a signer');
    expect(() => assembleSignedTransaction(messageBytes, { [c.wallet]: new Uint8Array(63) })).toThrow('63 bytes');
  });
});
