/**
 * Decoding of wire transactions as received by sendTransaction / simulateTransaction, and
 * the checks a real RPC node makes on them before execution: size, version, signatures.
 * Simnet supports legacy and v0 messages (what agave serves today); v1 is refused.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import {
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
import { ed25519Verifies } from '../frost/native-ed25519.ts';
import { Lru } from '../domain/lru.ts';
import { addressBytesView } from '../solana/address-codec.ts';

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

/**
 * The eight points of small order, canonically encoded: the multiples of a point of order 8.
 * A cluster (ed25519-dalek's `verify_strict`) refuses a signature whose R or key is one of them.
 */
const SMALL_ORDER = (() => {
  const order8 = ed25519.Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a');
  const encodings = new Set<string>();
  for (let i = 0, p = ed25519.Point.ZERO; i < 8; i++, p = p.add(order8)) encodings.add(bytesToHex(p.toBytes()));
  return encodings;
})();

// Whether a signer's key can sign at all (canonical, on the curve, not of small order): decided once per key.
const signingKeys = new Lru<string, boolean>(4096);

function canSign(signer: string, key: Uint8Array): boolean {
  let ok = signingKeys.get(signer);
  if (ok === undefined) {
    try {
      ok = !ed25519.Point.fromBytes(key, false).isSmallOrder();
    } catch {
      ok = false;
    }
    signingKeys.set(signer, ok);
  }
  return ok;
}

/**
 * True when every required signer's signature verifies over the message bytes, as a cluster's
 * `verify_strict` decides it: the runtime's native Ed25519 (cofactorless, canonical S, R compared
 * byte for byte; ~20× cheaper than a pure-JS verify, the bulk of a send's cost here), plus the
 * small-order refusals it lacks.
 */
export function verifySignatures(d: DecodedTransaction): boolean {
  const signers = d.message.staticAccounts.slice(0, d.message.header.numSignerAccounts);
  const msg = new Uint8Array(d.transaction.messageBytes);
  return signers.every((signer: Address) => {
    const sig = d.transaction.signatures[signer];
    if (sig === null || sig === undefined || sig.length !== 64) return false;
    const key = addressBytesView(signer);
    const signature = new Uint8Array(sig);
    return canSign(signer, key) && !SMALL_ORDER.has(bytesToHex(signature.subarray(0, 32))) && ed25519Verifies(signature, msg, key);
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
