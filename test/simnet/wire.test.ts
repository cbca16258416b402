import { describe, expect, it } from 'bun:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { compileTransaction, createTransactionMessage, getTransactionEncoder, pipe, setTransactionMessageFeePayer, setTransactionMessageLifetimeUsingBlockhash, type Address, type Blockhash } from '@solana/kit';
import { ed25519Verifies } from '../../src/frost/native-ed25519.ts';
import { addressOf } from '../../src/solana/address-codec.ts';
import { decodeWire, verifySignatures } from '../../src/simnet/wire.ts';

const Point = ed25519.Point;
const L = Point.Fn.ORDER;
const BLOCKHASH = addressOf(new Uint8Array(32).fill(9)) as string as Blockhash;

function le(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes).reverse().toString('hex') || '0'}`);
}

function scalarBytes(n: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse());
}

/** A one-signer transaction (the fee payer `payer`) carrying `sign(message)` as its signature. */
function transaction(payer: Uint8Array, sign: (message: Uint8Array) => Uint8Array) {
  const compiled = compileTransaction(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(addressOf(payer) as Address, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 100n }, m),
    ),
  );
  const message = new Uint8Array(compiled.messageBytes);
  const signature = sign(message);
  const wire = new Uint8Array(getTransactionEncoder().encode({ ...compiled, signatures: { [addressOf(payer)]: signature as never } }));
  return { d: decodeWire(wire), message, signature };
}

describe('verifySignatures (a cluster’s verify_strict)', () => {
  const seed = new Uint8Array(32).fill(42);
  const { scalar, pointBytes } = ed25519.utils.getExtendedPublicKey(seed);

  it('accepts an honest signature and refuses a changed one or a missing one', () => {
    const good = transaction(pointBytes, (m) => ed25519.sign(m, seed));
    expect(verifySignatures(good.d)).toBe(true);
    const flipped = transaction(pointBytes, (m) => {
      const s = ed25519.sign(m, seed);
      s[40]! ^= 1;
      return s;
    });
    expect(verifySignatures(flipped.d)).toBe(false);
    const empty = transaction(pointBytes, () => new Uint8Array(64));
    expect(verifySignatures(empty.d)).toBe(false);
  });

  it('refuses a signature anyone can forge for a small-order key, which a plain RFC 8032 verify accepts', () => {
    // The identity as a public key: R = s·B satisfies s·B = R + k·A for every message and any s.
    const identity = Point.ZERO.toBytes();
    const forged = transaction(identity, () => {
      const s = 12345n;
      return new Uint8Array([...Point.BASE.multiply(s).toBytes(), ...scalarBytes(s)]);
    });
    expect(ed25519Verifies(forged.signature, forged.message, identity)).toBe(true);
    expect(verifySignatures(forged.d)).toBe(false);
  });

  it('refuses a signature whose R is of small order, which a plain RFC 8032 verify accepts', () => {
    // The key's owner picks R = identity: s = k·a makes s·B = k·A = R + k·A.
    const R = Point.ZERO.toBytes();
    const odd = transaction(pointBytes, (m) => {
      const k = le(sha512(new Uint8Array([...R, ...pointBytes, ...m]))) % L;
      return new Uint8Array([...R, ...scalarBytes((k * scalar) % L)]);
    });
    expect(ed25519Verifies(odd.signature, odd.message, pointBytes)).toBe(true);
    expect(verifySignatures(odd.d)).toBe(false);
  });

  it('refuses a key that is not a point on the curve', () => {
    let bytes: Uint8Array = new Uint8Array(32);
    for (let i = 1; ; i++) {
      bytes = sha512(new Uint8Array([i])).slice(0, 32);
      bytes[31]! &= 0x7f;
      try {
        Point.fromBytes(bytes);
      } catch {
        break;
      }
    }
    const off = transaction(bytes, (m) => ed25519.sign(m, seed));
    expect(verifySignatures(off.d)).toBe(false);
  });
});
