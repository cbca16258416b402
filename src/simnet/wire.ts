/**
 * Decoding of wire transactions as received by sendTransaction / simulateTransaction, and
 * the checks a real RPC node makes on them before execution: size, version, signatures.
 * Simnet supports legacy and v0 messages (what agave serves today); v1 is refused.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  getAddressEncoder,
  getBase58Decoder,
  getBase58Encoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
  type Address,
  type LegacyCompiledTransactionMessage,
  type Transaction,
  type TransactionMessageBytes,
  type V0CompiledTransactionMessage,
} from '@solana/kit';

/** Largest wire transaction a cluster accepts (PACKET_DATA_SIZE). */
export const MAX_WIRE_BYTES = 1232;

/** A compiled message simnet can execute, with its recent blockhash. */
export type SupportedMessage = (LegacyCompiledTransactionMessage | V0CompiledTransactionMessage) & { lifetimeToken: string };

/** A wire transaction decoded once for every later use. */
export interface DecodedTransaction {
  wire: Uint8Array;
  transaction: Transaction;
  message: SupportedMessage;
  /** The first signature in base58: the transaction id (all ones when the slot is empty). */
  signature: string;
  /** Every signature slot in order, base58 (an empty slot reads as all ones). */
  signatures: string[];
}

/** A transaction the RPC cannot even decode; answered with -32602 Invalid params. */
export class WireError extends Error {}

const EMPTY_SIGNATURE = new Uint8Array(64);

/** Turns the `encoding`-encoded text of a transaction into bytes, enforcing the size limit. */
export function decodeEncoded(text: string, encoding: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    if (encoding === 'base64') bytes = new Uint8Array(getBase64Encoder().encode(text));
    else if (encoding === 'base58') bytes = new Uint8Array(getBase58Encoder().encode(text));
    else throw new WireError(`unsupported encoding: ${encoding}. Supported encodings: base58, base64`);
  } catch (e) {
    if (e instanceof WireError) throw e;
    throw new WireError(`invalid ${encoding} encoding: ${(e as Error).message}`);
  }
  if (bytes.length > MAX_WIRE_BYTES) {
    throw new WireError(`${encoding} encoded solana_transaction::versioned::VersionedTransaction too large: ${bytes.length} bytes (max: ${MAX_WIRE_BYTES} bytes)`);
  }
  return bytes;
}

/** Decodes wire bytes into a transaction and its compiled message. */
export function decodeWire(wire: Uint8Array): DecodedTransaction {
  let transaction: Transaction;
  let message: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
  try {
    transaction = getTransactionDecoder().decode(wire);
    message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  } catch (e) {
    throw new WireError(`failed to deserialize solana_transaction::versioned::VersionedTransaction: ${(e as Error).message}`);
  }
  if (message.version !== 'legacy' && message.version !== 0) {
    throw new WireError(`unsupported transaction version: ${String(message.version)}`);
  }
  const b58 = getBase58Decoder();
  const signatures = Object.values(transaction.signatures).map((s) => b58.decode(s ?? EMPTY_SIGNATURE));
  return {
    wire,
    transaction,
    message: message as SupportedMessage,
    signature: signatures[0] ?? b58.decode(EMPTY_SIGNATURE),
    signatures,
  };
}

/** True when every required signer's signature verifies over the message bytes. */
export function verifySignatures(d: DecodedTransaction): boolean {
  const encoder = getAddressEncoder();
  const signers = d.message.staticAccounts.slice(0, d.message.header.numSignerAccounts);
  const msg = new Uint8Array(d.transaction.messageBytes);
  return signers.every((signer: Address) => {
    const sig = d.transaction.signatures[signer];
    if (sig === null || sig === undefined) return false;
    try {
      return ed25519.verify(new Uint8Array(sig), msg, new Uint8Array(encoder.encode(signer)), { zip215: false });
    } catch {
      return false;
    }
  });
}

/** The same transaction with its message's recent blockhash replaced (signatures no longer match). */
export function withBlockhash(d: DecodedTransaction, blockhash: string): Transaction {
  const messageBytes = getCompiledTransactionMessageEncoder().encode({ ...d.message, lifetimeToken: blockhash }) as TransactionMessageBytes;
  return { ...d.transaction, messageBytes };
}

/** Whether the account at `index` of the message's static keys is writable (header rule). */
export function isWritable(message: SupportedMessage, index: number): boolean {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  if (index < numSignerAccounts) return index < numSignerAccounts - numReadonlySignerAccounts;
  return index < message.staticAccounts.length - numReadonlyNonSignerAccounts;
}
