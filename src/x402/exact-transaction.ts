/**
 * The checks of an x402 `exact` SVM payment that need no chain (FACTS: the scheme's MUSTs): the
 * layout (compute-unit limit within what an exact transfer needs, price within the scheme's cap,
 * one TransferChecked, at most a memo), no lookup tables, the exact amount of the mint to
 * ATA(payTo), the facilitator's fee payer as fee payer and in no instruction, and the payer's own
 * valid signature. The facilitator runs them first; the paywall runs them before it asks the
 * facilitator at all, so a header that could never pay costs the merchant's facilitator budget nothing.
 */
import { getBase64Encoder, getTransactionDecoder, type Address } from '@solana/kit';
import { ed25519Verifies } from '../frost/native-ed25519.ts';
import { addressBytes } from '../solana/address-codec.ts';
import { usdcAta } from '../solana/ata.ts';
import { decodeMessage, type DecodedMessage } from '../solana/decode.ts';
import { MessageDecodeError } from '../solana/errors.ts';
import { X402_DEFAULT_COMPUTE_UNIT_LIMIT, X402_MAX_COMPUTE_UNIT_PRICE } from '../solana/instructions.ts';
import { USDC_DECIMALS } from '../solana/networks.ts';

/**
 * The most compute a payment may ask the fee payer to pay for: what the reference client sets for
 * an exact transfer (TransferChecked and a memo use well under a tenth of it).
 */
export const MAX_SALE_COMPUTE_UNITS = X402_DEFAULT_COMPUTE_UNIT_LIMIT;

export type TransactionVerdict =
  | { ok: true; payer: Address; units: number; microLamports: bigint; wire: Uint8Array; messageBytes: Uint8Array; signatures: Record<string, Uint8Array> }
  | { ok: false; reason: string; message: string; payer?: string };

const no = (reason: string, message: string, payer?: string): TransactionVerdict => ({ ok: false, reason, message, ...(payer ? { payer } : {}) });

/** `transaction` (the payload's base64 transaction) against what it must pay; each refusal under the scheme's reason. */
export async function checkTransaction(transaction: unknown, want: { mint: string; payTo: string; amount: bigint; feePayer: string }): Promise<TransactionVerdict> {
  const { mint, amount } = want;
  const feePayer = want.feePayer as Address;
  if (typeof transaction !== 'string' || transaction.length > 4096) return no('invalid_exact_svm_payload_transaction', 'payload.transaction must be a base64 transaction');
  let wire: Uint8Array;
  let decoded: { messageBytes: Uint8Array; signatures: Record<string, Uint8Array | null> };
  let msg: DecodedMessage;
  try {
    wire = getBase64Encoder().encode(transaction) as Uint8Array;
    decoded = getTransactionDecoder().decode(wire) as never;
    msg = decodeMessage(new Uint8Array(decoded.messageBytes));
  } catch (err) {
    if (err instanceof MessageDecodeError && /address table/.test(err.message)) return no('invalid_exact_svm_payload_transaction_address_lookup_tables', err.message);
    return no('invalid_exact_svm_payload_transaction', err instanceof Error ? err.message : 'the transaction does not decode');
  }
  const [limit, price, transfer, memo, ...rest] = msg.instructions;
  const layout = limit?.kind === 'computeUnitLimit' && price?.kind === 'computeUnitPrice' && transfer?.kind === 'transferChecked' && (memo === undefined || memo.kind === 'memo') && rest.length === 0;
  if (!layout || limit?.kind !== 'computeUnitLimit' || transfer?.kind !== 'transferChecked' || price?.kind !== 'computeUnitPrice') {
    return no('invalid_exact_svm_payload_transaction_instructions', 'the transaction must be exactly: compute-unit limit, compute-unit price, TransferChecked, and at most one memo');
  }
  const payer = transfer.authority;
  if (price.microLamports > X402_MAX_COMPUTE_UNIT_PRICE) {
    return no('invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high', `compute-unit price ${price.microLamports} exceeds ${X402_MAX_COMPUTE_UNIT_PRICE} micro-lamports`, payer);
  }
  if (limit.units > MAX_SALE_COMPUTE_UNITS) {
    return no('invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high', `the compute-unit limit asks more than the ${MAX_SALE_COMPUTE_UNITS} an exact transfer needs; the fee payer pays for every unit asked`, payer);
  }
  if (transfer.mint !== mint || transfer.decimals !== USDC_DECIMALS) return no('invalid_exact_svm_payload_mint_mismatch', `the transfer moves ${transfer.mint}, not USDC`, payer);
  if (transfer.destination !== (await usdcAta(want.payTo as Address, mint as Address))) return no('invalid_exact_svm_payload_recipient_mismatch', "the transfer does not go to payTo's USDC token account", payer);
  if (transfer.amount !== amount) return no('invalid_exact_svm_payload_amount_mismatch', `the transfer moves ${transfer.amount}, not ${amount}`, payer);
  if (transfer.extraAccounts.length > 0) return no('invalid_exact_svm_payload_transaction_instructions', 'the transfer carries extra accounts', payer);
  // Our fee payer pays the fee and does nothing else: never the authority, in no instruction's accounts.
  if (msg.feePayer !== feePayer) return no('invalid_exact_svm_payload_transaction_fee_payer_mismatch', `the fee payer is ${msg.feePayer}, not ${feePayer}`, payer);
  if (payer === feePayer || msg.instructionAccounts.has(feePayer)) {
    return no('invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts', "the facilitator's fee payer appears in an instruction", payer);
  }
  if (msg.signers.length !== 2 || msg.signers[1] !== payer) return no('invalid_exact_svm_payload_transaction_signers', 'the transaction must need exactly the fee payer and the payer', payer);
  const own = decoded.signatures[payer];
  if (!own || !ed25519Verifies(own, new Uint8Array(decoded.messageBytes), addressBytes(payer))) {
    return no('invalid_exact_svm_payload_signature', "the payer's signature is missing or does not verify", payer);
  }
  return { ok: true, payer, units: limit.units, microLamports: price.microLamports, wire, messageBytes: new Uint8Array(decoded.messageBytes), signatures: { [payer]: own } };
}
