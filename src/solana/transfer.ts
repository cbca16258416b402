/**
 * Builds the exact Solana messages a wallet signs, and turns signed messages into wire bytes.
 *
 * The wallet address is a FROST group key: nobody holds its private key, so messages are built
 * with the wallet as a plain read-only signer account and compiled to bytes here; the two FROST
 * participants sign those bytes, and `assembleSignedTransaction` puts the signatures in their
 * slots. A message, once signed, is NEVER rebuilt for the same intent while its blockhash is
 * alive (FROST signatures are randomized; two signings are two transactions).
 */
import {
  getBase58Decoder,
  getTransactionEncoder,
  type Address,
  type Instruction,
  type SignatureBytes,
  type TransactionMessageBytes,
} from '@solana/kit';
import { addressOf } from './address-codec.ts';
import { usdcAta, usdcAtaBump } from './ata.ts';
import { compileV0Message } from './compile.ts';
import {
  computeUnitLimitInstruction,
  computeUnitPriceInstruction,
  createAtaIdempotentInstruction,
  createAtaUnits,
  CU_BUDGET,
  memoInstruction,
  transferCheckedInstruction,
  X402_DEFAULT_COMPUTE_UNIT_LIMIT,
  X402_DEFAULT_COMPUTE_UNIT_PRICE,
  X402_MAX_COMPUTE_UNIT_PRICE,
} from './instructions.ts';
import { USDC_DECIMALS } from './networks.ts';

/** A recent blockhash and the last block height at which a message using it can land. */
export interface RecentBlockhash {
  blockhash: string;
  lastValidBlockHeight: bigint;
}

/** Largest serialized v0/legacy transaction the cluster accepts (packet size minus headers). */
export const MAX_TRANSACTION_BYTES = 1232;

const SIGNATURE_BYTES = 64;

/**
 * The compute-unit limit of a `buildUsdcTransfer` message of this shape (budgets in instructions.ts);
 * `recipientAtaBump` is the bump seed of the recipient's token account when the message creates it.
 */
export function computeUnitBudget(kind: { recipientAtaBump: number | null; fee: boolean; references: number; memoBytes: number | null }): number {
  return (
    CU_BUDGET.computeBudget +
    (kind.recipientAtaBump === null ? 0 : createAtaUnits(kind.recipientAtaBump)) +
    CU_BUDGET.transferChecked + kind.references * CU_BUDGET.perReference +
    (kind.fee ? CU_BUDGET.transferChecked : 0) +
    (kind.memoBytes === null ? 0 : CU_BUDGET.memoBase + kind.memoBytes * CU_BUDGET.memoPerByte)
  );
}

/**
 * A wallet-to-wallet (or withdrawal / merchant) USDC payment, laid out as DESIGN §5 fixes:
 * SetComputeUnitLimit (the measured budget of this shape) + SetComputeUnitPrice (`computeUnitPrice`
 * micro-lamports, paid by the fee payer)
 * + [CreateIdempotent ATA(recipientOwner) paid by feePayer, when `createRecipientAta`]
 * + transferChecked `amount` ATA(wallet) → ATA(recipientOwner), with `references` appended read-only
 * + transferChecked `fee` ATA(wallet) → ATA(treasuryOwner), when fee > 0
 * + Memo, when given. Version 0, fee payer = the operator's key, so the wallet never needs SOL.
 * `checkTransfer` in decode.ts accepts exactly this layout.
 */
export async function buildUsdcTransfer(p: {
  wallet: Address;
  mint: Address;
  recipientOwner: Address;
  amount: bigint;
  fee: bigint;
  treasuryOwner: Address;
  feePayer: Address;
  createRecipientAta: boolean;
  references?: Address[];
  memo?: string;
  /** Micro-lamports per compute unit; 0 when omitted. */
  computeUnitPrice?: bigint;
  blockhash: RecentBlockhash;
}): Promise<{ messageBytes: Uint8Array; lastValidBlockHeight: bigint }> {
  if (p.amount <= 0n) throw new RangeError(`amount ${p.amount} must be positive`);
  if (p.fee < 0n) throw new RangeError(`fee ${p.fee} must not be negative`);
  if (p.wallet === p.feePayer) throw new RangeError('the wallet must not be the fee payer');
  const [source, destination, treasury] = await Promise.all([
    usdcAta(p.wallet, p.mint),
    usdcAta(p.recipientOwner, p.mint),
    usdcAta(p.treasuryOwner, p.mint),
  ]);
  const references = p.references ?? [];
  const limit = computeUnitBudget({
    recipientAtaBump: p.createRecipientAta ? await usdcAtaBump(p.recipientOwner, p.mint) : null,
    fee: p.fee > 0n,
    references: references.length,
    memoBytes: p.memo === undefined ? null : new TextEncoder().encode(p.memo).length,
  });
  const instructions: Instruction[] = [computeUnitLimitInstruction(limit), computeUnitPriceInstruction(p.computeUnitPrice ?? 0n)];
  if (p.createRecipientAta) {
    instructions.push(createAtaIdempotentInstruction({ payer: p.feePayer, ata: destination, owner: p.recipientOwner, mint: p.mint }));
  }
  instructions.push(
    transferCheckedInstruction({
      source, mint: p.mint, destination, authority: p.wallet, amount: p.amount, decimals: USDC_DECIMALS, extraAccounts: references,
    }),
  );
  if (p.fee > 0n) {
    instructions.push(
      transferCheckedInstruction({ source, mint: p.mint, destination: treasury, authority: p.wallet, amount: p.fee, decimals: USDC_DECIMALS }),
    );
  }
  if (p.memo !== undefined) instructions.push(memoInstruction(p.memo));
  return { messageBytes: compileMessage(p.feePayer, p.blockhash, instructions), lastValidBlockHeight: p.blockhash.lastValidBlockHeight };
}

/**
 * An x402 `exact` SVM payment: SetComputeUnitLimit, SetComputeUnitPrice, transferChecked of exactly
 * `amount` ATA(wallet) → ATA(payTo), optional Memo. No ATA creation (payTo's account must exist).
 * The fee payer is the facilitator (`extra.feePayer`), which signs last; it must not be the wallet.
 */
export async function buildX402Transfer(p: {
  wallet: Address;
  mint: Address;
  payTo: Address;
  amount: bigint;
  feePayer: Address;
  memo?: string;
  computeUnitLimit?: number;
  computeUnitPriceMicroLamports?: bigint;
  blockhash: RecentBlockhash;
}): Promise<{ messageBytes: Uint8Array }> {
  if (p.amount <= 0n) throw new RangeError(`amount ${p.amount} must be positive`);
  if (p.wallet === p.feePayer) throw new RangeError('the x402 fee payer must not be the paying wallet');
  const price = p.computeUnitPriceMicroLamports ?? X402_DEFAULT_COMPUTE_UNIT_PRICE;
  if (price > X402_MAX_COMPUTE_UNIT_PRICE) {
    throw new RangeError(`compute unit price ${price} exceeds the x402 cap of ${X402_MAX_COMPUTE_UNIT_PRICE} micro-lamports`);
  }
  const [source, destination] = await Promise.all([usdcAta(p.wallet, p.mint), usdcAta(p.payTo, p.mint)]);
  const instructions: Instruction[] = [
    computeUnitLimitInstruction(p.computeUnitLimit ?? X402_DEFAULT_COMPUTE_UNIT_LIMIT),
    computeUnitPriceInstruction(price),
    transferCheckedInstruction({ source, mint: p.mint, destination, authority: p.wallet, amount: p.amount, decimals: USDC_DECIMALS }),
  ];
  if (p.memo !== undefined) instructions.push(memoInstruction(p.memo));
  return { messageBytes: compileMessage(p.feePayer, p.blockhash, instructions) };
}

/** Compiles a v0 message of `instructions` under `feePayer` and `blockhash`; refuses one too big to send. */
export function compileMessage(feePayer: Address, blockhash: RecentBlockhash, instructions: Instruction[]): Uint8Array {
  const messageBytes = compileV0Message(feePayer, blockhash.blockhash, instructions);
  // Byte 1 of a v0 message is its number of signers: one signature slot each.
  const size = 1 + messageBytes[1]! * SIGNATURE_BYTES + messageBytes.length;
  if (size > MAX_TRANSACTION_BYTES) {
    throw new RangeError(`transaction would be ${size} bytes, above the ${MAX_TRANSACTION_BYTES}-byte limit (shorten the memo)`);
  }
  return messageBytes;
}

/** The addresses whose signatures the message requires, in slot order (the fee payer first). */
export function signatureSlots(messageBytes: Uint8Array): Address[] {
  // Only the header and the first keys: a full decode per signing costs ~0.2 ms, twice per payment.
  let at = messageBytes[0] !== undefined && messageBytes[0] & 0x80 ? 1 : 0; // a v0 message's version prefix
  const signers = messageBytes[at];
  at += 3;
  let keys = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = messageBytes[at++];
    if (byte === undefined || shift > 14) throw new RangeError('malformed message header');
    keys |= (byte & 0x7f) << shift;
    if (!(byte & 0x80)) break;
  }
  if (signers === undefined || signers < 1 || signers > keys || at + keys * 32 > messageBytes.length) throw new RangeError('malformed message header');
  return Array.from({ length: signers }, (_, i) => addressOf(messageBytes.subarray(at + i * 32, at + (i + 1) * 32)));
}

/**
 * Wire bytes of `messageBytes` with the given signatures in their slots. Slots without a
 * signature are left zero-filled (the x402 shape: the facilitator fills the fee payer's slot).
 * Throws for a signature from an address the message does not ask for, or of the wrong length.
 */
export function assembleSignedTransaction(
  messageBytes: Uint8Array,
  signatures: Map<Address, Uint8Array> | Record<string, Uint8Array>,
): Uint8Array {
  const slots = signatureSlots(messageBytes);
  const given = new Map<string, Uint8Array>(signatures instanceof Map ? signatures : Object.entries(signatures));
  for (const [signer, signature] of given) {
    if (!slots.includes(signer as Address)) throw new RangeError(`${signer} is not a signer of this message`);
    if (signature.length !== SIGNATURE_BYTES) throw new RangeError(`signature of ${signer} is ${signature.length} bytes, not ${SIGNATURE_BYTES}`);
  }
  const filled = Object.fromEntries(
    slots.map((signer) => {
      const signature = given.get(signer);
      return [signer, signature === undefined ? null : (new Uint8Array(signature) as SignatureBytes)];
    }),
  );
  const wire = getTransactionEncoder().encode({ messageBytes: messageBytes as unknown as TransactionMessageBytes, signatures: filled });
  return new Uint8Array(wire);
}

/** The transaction id: base58 of the first (fee payer's) signature. Throws while that slot is empty. */
export function transactionSignature(wire: Uint8Array): string {
  const count = wire[0];
  if (count === undefined || count === 0 || count >= 0x80 || wire.length < 1 + SIGNATURE_BYTES) {
    throw new RangeError('not a signed transaction');
  }
  const first = wire.subarray(1, 1 + SIGNATURE_BYTES);
  if (first.every((b) => b === 0)) throw new RangeError("the fee payer's signature slot is empty");
  return getBase58Decoder().decode(first);
}
