/**
 * The compute budget of every message kind the daemon builds, landed on LiteSVM (simnet's engine)
 * with a FROST-signed wallet: each kind must consume no more than the SetComputeUnitLimit it carries.
 * And the agent's check of compute-budget instructions: at most one of each, a bounded limit, only
 * the two known instructions of the Compute Budget program.
 */
import { describe, expect, it } from 'bun:test';
import { ed25519_FROST } from '@noble/curves/ed25519.js';
import { generateKeyPairSigner, getAddressDecoder, getTransactionDecoder, lamports, none, signBytes, some, type Address, type Instruction } from '@solana/kit';
import { AccountState, TOKEN_PROGRAM_ADDRESS, getMintEncoder, getTokenEncoder } from '@solana-program/token';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import { payeeSetupInstructions } from '../../src/earning/payee-ready.ts';
import { usdcAta, usdcAtaBump } from '../../src/solana/ata.ts';
import { checkTransfer, decodeMessage } from '../../src/solana/decode.ts';
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  computeUnitLimitInstruction,
  computeUnitPriceInstruction,
  MAX_ACCEPTED_COMPUTE_UNIT_LIMIT,
  memoInstruction,
  transferCheckedInstruction,
} from '../../src/solana/instructions.ts';
import { DEVNET_USDC, USDC_DECIMALS } from '../../src/solana/networks.ts';
import { assembleSignedTransaction, buildUsdcTransfer, compileMessage } from '../../src/solana/transfer.ts';
import { randomAddress } from './helpers.ts';
import { DEEP_BUMP_OWNERS } from '../helpers/deep-bump.ts';

const AGENT = ed25519_FROST.Identifier.fromNumber(1);
const SERVER = ed25519_FROST.Identifier.fromNumber(2);

async function chain() {
  const svm = new LiteSVM();
  const mintData = getMintEncoder().encode({ mintAuthority: some(randomAddress()), supply: 10n ** 15n, decimals: USDC_DECIMALS, isInitialized: true, freezeAuthority: none() });
  svm.setAccount({
    address: DEVNET_USDC, data: new Uint8Array(mintData), executable: false,
    lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(mintData.length))), programAddress: TOKEN_PROGRAM_ADDRESS, space: BigInt(mintData.length),
  });
  const fund = async (owner: Address, amount: bigint) => {
    const data = getTokenEncoder().encode({ mint: DEVNET_USDC, owner, amount, delegate: none(), state: AccountState.Initialized, isNative: none(), delegatedAmount: 0n, closeAuthority: none() });
    svm.setAccount({
      address: await usdcAta(owner, DEVNET_USDC), data: new Uint8Array(data), executable: false,
      lamports: lamports(svm.minimumBalanceForRentExemption(BigInt(data.length))), programAddress: TOKEN_PROGRAM_ADDRESS, space: BigInt(data.length),
    });
  };
  const dealt = ed25519_FROST.trustedDealer({ min: 2, max: 2 }, [AGENT, SERVER]);
  const wallet = getAddressDecoder().decode(dealt.public.commitments[0]!);
  const frostSign = (message: Uint8Array): Uint8Array => {
    const a = ed25519_FROST.commit(dealt.secretShares[AGENT]!);
    const s = ed25519_FROST.commit(dealt.secretShares[SERVER]!);
    const list = [a.commitments, s.commitments];
    return ed25519_FROST.aggregate(dealt.public, list, message, {
      [AGENT]: ed25519_FROST.signShare(dealt.secretShares[AGENT]!, dealt.public, a.nonces, list, message),
      [SERVER]: ed25519_FROST.signShare(dealt.secretShares[SERVER]!, dealt.public, s.nonces, list, message),
    });
  };
  const feePayer = await generateKeyPairSigner();
  svm.airdrop(feePayer.address, lamports(10_000_000_000n));
  await fund(wallet, 10n ** 12n);
  const treasury = randomAddress();
  await fund(treasury, 0n);
  const blockhash = () => {
    svm.expireBlockhash();
    return { blockhash: svm.latestBlockhash(), lastValidBlockHeight: 150n };
  };
  /** Lands the message (signed by the fee payer and, when it signs, the wallet); returns its limit and consumption. */
  const land = async (messageBytes: Uint8Array) => {
    const signers = decodeMessage(messageBytes).signers;
    const signatures: Record<string, Uint8Array> = { [feePayer.address]: await signBytes(feePayer.keyPair.privateKey, messageBytes) };
    if (signers.includes(wallet)) signatures[wallet] = frostSign(messageBytes);
    const result = svm.sendTransaction(getTransactionDecoder().decode(assembleSignedTransaction(messageBytes, signatures)));
    if (result instanceof FailedTransactionMetadata) throw new Error(`did not land: ${result.toString()}`);
    const limit = decodeMessage(messageBytes).instructions.find((i) => i.kind === 'computeUnitLimit');
    if (limit?.kind !== 'computeUnitLimit') throw new Error('the message carries no compute unit limit');
    return { limit: limit.units, consumed: Number(result.computeUnitsConsumed()) };
  };
  return { wallet, feePayer: feePayer.address, treasury, fund, blockhash, land };
}

const LONGEST_MEMO = 'x'.repeat(560);

describe('compute budget per message kind (measured on LiteSVM)', () => {
  const transfers: { kind: string; createRecipientAta: boolean; recipientHasAccount: boolean; fee: bigint; references: number; memo?: string }[] = [
    { kind: 'transfer', createRecipientAta: false, recipientHasAccount: true, fee: 0n, references: 0 },
    { kind: 'transfer + memo', createRecipientAta: false, recipientHasAccount: true, fee: 0n, references: 0, memo: 'txn_0123456789abcdef' },
    { kind: 'transfer + longest memo', createRecipientAta: false, recipientHasAccount: true, fee: 0n, references: 0, memo: LONGEST_MEMO },
    { kind: 'transfer + fee', createRecipientAta: false, recipientHasAccount: true, fee: 50_000n, references: 0, memo: 'txn_1' },
    { kind: 'ATA creation (creating) + fee + memo', createRecipientAta: true, recipientHasAccount: false, fee: 50_000n, references: 0, memo: 'txn_2' },
    { kind: 'ATA creation (existing) + memo', createRecipientAta: true, recipientHasAccount: true, fee: 0n, references: 0, memo: 'txn_3' },
    { kind: 'paylink: ATA creation + reference + fee + memo', createRecipientAta: true, recipientHasAccount: false, fee: 50_000n, references: 1, memo: 'order-7 txn_4' },
    { kind: 'everything, longest memo', createRecipientAta: true, recipientHasAccount: false, fee: 50_000n, references: 2, memo: LONGEST_MEMO.slice(0, 480) },
  ];
  for (const t of transfers) {
    it(`${t.kind}: consumes no more than its limit`, async () => {
      const c = await chain();
      const recipient = randomAddress();
      if (t.recipientHasAccount) await c.fund(recipient, 0n);
      const { messageBytes } = await buildUsdcTransfer({
        wallet: c.wallet, mint: DEVNET_USDC, recipientOwner: recipient, amount: 1_000n, fee: t.fee, treasuryOwner: c.treasury, feePayer: c.feePayer,
        createRecipientAta: t.createRecipientAta, references: Array.from({ length: t.references }, randomAddress), memo: t.memo,
        computeUnitPrice: 10_000n, blockhash: c.blockhash(),
      });
      const { limit, consumed } = await c.land(messageBytes);
      expect(consumed).toBeGreaterThan(0);
      expect(consumed).toBeLessThanOrEqual(limit);
      expect(limit).toBeLessThan(MAX_ACCEPTED_COMPUTE_UNIT_LIMIT);
    });
  }

  for (const [fundAccount, createTokenAccount] of [[true, true], [false, true], [true, false]] as const) {
    it(`payee setup (fund account: ${fundAccount}, create token account: ${createTokenAccount}): consumes no more than its limit`, async () => {
      const c = await chain();
      const owner = randomAddress();
      const instructions = payeeSetupInstructions({
        feePayer: c.feePayer, owner, ata: await usdcAta(owner, DEVNET_USDC), ataBump: await usdcAtaBump(owner, DEVNET_USDC), mint: DEVNET_USDC, fundAccount, createTokenAccount, price: 10_000n,
      });
      const { limit, consumed } = await c.land(compileMessage(c.feePayer, c.blockhash(), instructions));
      expect(consumed).toBeLessThanOrEqual(limit);
    });
  }

  describe('an owner whose token account has a low bump seed (the program searches it on chain, 1,500 CU a candidate)', () => {
    const { owner, bump } = DEEP_BUMP_OWNERS[0];

    it('the payee setup that creates its token account lands within its limit', async () => {
      expect(await usdcAtaBump(owner, DEVNET_USDC)).toBe(bump);
      const c = await chain();
      const instructions = payeeSetupInstructions({
        feePayer: c.feePayer, owner, ata: await usdcAta(owner, DEVNET_USDC), ataBump: bump, mint: DEVNET_USDC, fundAccount: true, createTokenAccount: true, price: 10_000n,
      });
      const { limit, consumed } = await c.land(compileMessage(c.feePayer, c.blockhash(), instructions));
      expect(consumed).toBeLessThanOrEqual(limit);
    });

    it('a payment that creates its token account (no fee, no memo: the tightest budget) lands within its limit', async () => {
      const c = await chain();
      const { messageBytes } = await buildUsdcTransfer({
        wallet: c.wallet, mint: DEVNET_USDC, recipientOwner: owner, amount: 1_000n, fee: 0n, treasuryOwner: c.treasury, feePayer: c.feePayer,
        createRecipientAta: true, computeUnitPrice: 10_000n, blockhash: c.blockhash(),
      });
      const { limit, consumed } = await c.land(messageBytes);
      expect(consumed).toBeLessThanOrEqual(limit);
      expect(limit).toBeLessThan(MAX_ACCEPTED_COMPUTE_UNIT_LIMIT);
    });
  });
});

describe("the agent's check of compute-budget instructions", () => {
  const setup = async () => {
    const wallet = randomAddress();
    const recipient = randomAddress();
    const treasury = randomAddress();
    const feePayer = randomAddress();
    const intent = { wallet, mint: DEVNET_USDC, recipientOwner: recipient, amount: 1_000n, treasuryOwner: treasury, feePayer };
    const transfer = transferCheckedInstruction({
      source: await usdcAta(wallet, DEVNET_USDC), mint: DEVNET_USDC, destination: await usdcAta(recipient, DEVNET_USDC), authority: wallet, amount: 1_000n, decimals: USDC_DECIMALS,
    });
    const check = (instructions: Instruction[]) =>
      checkTransfer(compileMessage(feePayer, { blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 1n }, instructions), { ...intent, maxFee: 0n });
    return { intent, transfer, check };
  };

  it('accepts what buildUsdcTransfer builds, and one limit and one price in any order', async () => {
    const { intent, transfer, check } = await setup();
    const { messageBytes } = await buildUsdcTransfer({ ...intent, fee: 0n, createRecipientAta: true, memo: 'm', computeUnitPrice: 123_456n, blockhash: { blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 1n } });
    expect(await checkTransfer(messageBytes, { ...intent, maxFee: 0n })).toEqual({ ok: true });
    expect(await check([computeUnitPriceInstruction(5n), transfer, computeUnitLimitInstruction(MAX_ACCEPTED_COMPUTE_UNIT_LIMIT)])).toEqual({ ok: true });
  });

  it('refuses a duplicated limit or price', async () => {
    const { transfer, check } = await setup();
    expect(await check([computeUnitLimitInstruction(10_000), computeUnitLimitInstruction(20_000), transfer])).toEqual({
      ok: false, reason: 'instruction 1: a second computeUnitLimit instruction',
    });
    expect(await check([computeUnitPriceInstruction(1n), transfer, computeUnitPriceInstruction(2n)])).toEqual({
      ok: false, reason: 'instruction 2: a second computeUnitPrice instruction',
    });
  });

  it('refuses an oversized limit', async () => {
    const { transfer, check } = await setup();
    expect(await check([computeUnitLimitInstruction(MAX_ACCEPTED_COMPUTE_UNIT_LIMIT + 1), transfer])).toEqual({
      ok: false, reason: `instruction 0: compute unit limit ${MAX_ACCEPTED_COMPUTE_UNIT_LIMIT + 1} exceeds ${MAX_ACCEPTED_COMPUTE_UNIT_LIMIT}`,
    });
    expect(await check([computeUnitLimitInstruction(1_400_000), transfer])).toMatchObject({ ok: false });
  });

  it('refuses the same data sent to another program, and other Compute Budget instructions', async () => {
    const { transfer, check } = await setup();
    const impostor = randomAddress();
    const limitElsewhere: Instruction = { ...computeUnitLimitInstruction(10_000), programAddress: impostor };
    expect(await check([limitElsewhere, transfer])).toEqual({ ok: false, reason: `instruction 0: program ${impostor} (or this use of it) is not allowed` });
    // RequestHeapFrame (1) and SetLoadedAccountsDataSizeLimit (4) are not in the layout.
    const heapFrame: Instruction = { programAddress: COMPUTE_BUDGET_PROGRAM_ADDRESS, data: new Uint8Array([1, 0, 0, 1, 0]) };
    const loadedData: Instruction = { programAddress: COMPUTE_BUDGET_PROGRAM_ADDRESS, data: new Uint8Array([4, 0, 0, 1, 0]) };
    expect(await check([heapFrame, transfer])).toEqual({ ok: false, reason: `instruction 0: program ${COMPUTE_BUDGET_PROGRAM_ADDRESS} (or this use of it) is not allowed` });
    expect(await check([transfer, loadedData])).toEqual({ ok: false, reason: `instruction 1: program ${COMPUTE_BUDGET_PROGRAM_ADDRESS} (or this use of it) is not allowed` });
    // Still nothing else: a memo is fine, anything unknown is not.
    expect(await check([transfer, memoInstruction('ok')])).toEqual({ ok: true });
  });
});
