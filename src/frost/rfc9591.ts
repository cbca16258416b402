/**
 * FROST(Ed25519, SHA-512) signing (RFC 9591 §4–§5, suite §6.1) on noble's point and scalar field and
 * the runtime's SHA-512 — with the same inputs, outputs and refusals as noble's `ed25519_FROST`
 * `commit`, `signShare`, `verifyShare` and `aggregate` (test/frost/rfc9591.test.ts holds them
 * byte-identical; `commit` given the same randomness), but paying for each expensive step once:
 *
 * - elements (commitments, group key, verifying shares) are decoded and subgroup-checked once and
 *   cached by encoding (group.ts); a key's decoded public package is cached per key;
 * - secrets only meet constant-time base-point multiplication: a nonce's commitment comes with the
 *   nonce from the runtime's native Ed25519 signer (`nativeNonce`), any other from noble's tables;
 *   variable-time multiplication and MSM touch public values only;
 * - the aggregate is checked with the runtime's native Ed25519 verify; shares are checked one by
 *   one only when it fails, to name the culprit.
 *
 * Generic over the signer set (the RFC vectors sign with participants 1 and 3 of a 2-of-3 key);
 * party.ts narrows it to our 2-of-2.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { mulAddUnsafe } from '@noble/curves/abstract/curve.js';
import type { FrostPublic, FrostSecret, Identifier, NonceCommitments, Nonces } from '@noble/curves/abstract/frost.js';
import { bytesToNumberLE } from '@noble/curves/utils.js';
import { sha256 } from '../domain/sha256.ts';
import { bytesToHex, concatBytes, hexToBytes, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { baseElement, decodeElement, knownBaseMultiple, type Element } from './group.ts';
import { Lru } from '../domain/lru.ts';
import { ed25519Verifies, hashedBaseMultiple } from './native-ed25519.ts';

const Point = ed25519.Point;
const Fn = Point.Fn;

/** RFC 9591 §6.1 contextString. H2 is undecorated for RFC 8032 compatibility. */
const CONTEXT = 'FROST-ED25519-SHA512-v1';
const RHO = utf8ToBytes(`${CONTEXT}rho`);
const NONCE = utf8ToBytes(`${CONTEXT}nonce`);
const MSG = utf8ToBytes(`${CONTEXT}msg`);
const COM = utf8ToBytes(`${CONTEXT}com`);

/** SHA-512 of the parts' concatenation, natively: several a signature, ~10× cheaper than noble's on these short inputs. */
export function sha512(...parts: Uint8Array[]): Uint8Array {
  const hasher = new Bun.CryptoHasher('sha512');
  for (const part of parts) hasher.update(part);
  return hasher.digest() as Uint8Array;
}

/** A 64-byte digest as a scalar (reduced mod L), as H1–H3 are. */
export const toScalar = (digest: Uint8Array): bigint => Fn.create(bytesToNumberLE(digest));
const H1 = (m: Uint8Array) => toScalar(sha512(RHO, m));
const H2 = (m: Uint8Array) => toScalar(sha512(m));
const H3 = (m: Uint8Array) => toScalar(sha512(NONCE, m));
const H4 = (m: Uint8Array) => sha512(MSG, m);
const H5 = (m: Uint8Array) => sha512(COM, m);

/** `aggregate` refused: `cheaters` names the participants whose shares do not verify, when known. */
export class AggregateError extends Error {
  override readonly name = 'AggregateError';
  readonly cheaters: Identifier[];

  constructor(cheaters: Identifier[]) {
    super('aggregation failed');
    this.cheaters = cheaters;
  }
}

/** noble's identifier rule: a canonical, non-zero scalar in lowercase hex. */
function identifierScalar(id: Identifier): bigint {
  if (typeof id !== 'string') throw new Error('identifier must be a string');
  const n = Fn.fromBytes(hexToBytes(id));
  if (Fn.is0(n) || bytesToHex(Fn.toBytes(n)) !== id) throw new Error(`Invalid identifier ${id}`);
  return n;
}

function checkSigners(pub: FrostPublic, count: number): void {
  const { min, max } = pub.signers;
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 2 || min > max) throw new Error(`Wrong signers info: min=${min} max=${max}`);
  if (count < min || count > max) throw new Error(`Wrong number of commitments=${count}`);
}

/** A key's public package, validated once: the group key (kept encoded, as every hash takes it) and the verifying shares. */
interface DecodedKey {
  groupKeyBytes: Uint8Array;
  verifyingShares: ReadonlyMap<Identifier, Element>;
}

const keys = new Lru<string, DecodedKey>(1024);

function decodedKey(pub: FrostPublic): DecodedKey {
  const groupKeyBytes = pub.commitments[0];
  if (!(groupKeyBytes instanceof Uint8Array)) throw new Error('public package has no group key');
  const ids = Object.keys(pub.verifyingShares).sort();
  const cacheKey = [bytesToHex(groupKeyBytes), ...ids.map((id) => `${id}:${bytesToHex(pub.verifyingShares[id]!)}`)].join(',');
  let key = keys.get(cacheKey);
  if (key === undefined) {
    const shares = new Map<Identifier, Element>();
    for (const id of ids) shares.set(id, decodeElement(pub.verifyingShares[id]!, 'verifying share'));
    decodeElement(groupKeyBytes, 'group key');
    key = { groupKeyBytes: Uint8Array.from(groupKeyBytes), verifyingShares: shares };
    keys.set(cacheKey, key);
  }
  return key;
}

/** One signer of the session: identifier, its scalar, and its decoded commitments. */
interface Signer {
  id: Identifier;
  x: bigint;
  hiding: Element;
  binding: Element;
  encoded: Uint8Array;
}

/** What every step derives from (group key, commitment list, message): RFC 9591 §4.3–§4.6. */
interface Session {
  signers: Signer[];
  bindingFactors: Map<Identifier, bigint>;
  groupCommitment: Element;
  challenge: bigint;
}

/**
 * Sessions by their binding-factor prefix SerializeElement(PK) ‖ H4(msg) ‖ H5(encoded list), a
 * collision-resistant digest of everything a session derives from: the coordinator's share and its
 * aggregate over the same list compute the group commitment once.
 */
const sessions = new Lru<string, Session>(256);

function session(key: DecodedKey, list: readonly NonceCommitments[], message: Uint8Array): Session {
  if (!Array.isArray(list)) throw new Error('commitmentList must be an array');
  if (!(message instanceof Uint8Array)) throw new Error('msg must be bytes');
  const signers = list.map((c) => {
    const x = identifierScalar(c.identifier);
    return { id: c.identifier, x, hiding: decodeElement(c.hiding, 'hiding commitment'), binding: decodeElement(c.binding, 'binding commitment'), encoded: concatBytes(Fn.toBytes(x), c.hiding, c.binding) };
  });
  signers.sort((a, b) => (a.x < b.x ? -1 : a.x > b.x ? 1 : 0));
  // §4.4 compute_binding_factors: rho_input = SerializeElement(PK) ‖ H4(msg) ‖ H5(encoded list) ‖ id.
  const prefix = concatBytes(key.groupKeyBytes, H4(message), H5(concatBytes(...signers.map((s) => s.encoded))));
  const cacheKey = bytesToHex(prefix);
  const known = sessions.get(cacheKey);
  if (known !== undefined) return known;
  const bindingFactors = new Map<Identifier, bigint>();
  for (const s of signers) bindingFactors.set(s.id, H1(concatBytes(prefix, Fn.toBytes(s.x))));
  // §4.5: R = Σ D_i + Σ ρ_i·E_i — the hiding commitments carry scalar 1, the rest is one MSM.
  let hidingSum = Point.ZERO;
  for (const s of signers) hidingSum = hidingSum.add(s.hiding);
  const groupCommitment = hidingSum.add(mulAddUnsafe(Point, signers.map((s) => s.binding), signers.map((s) => bindingFactors.get(s.id)!)));
  const challenge = H2(concatBytes(groupCommitment.toBytes(), key.groupKeyBytes, message));
  const result = { signers, bindingFactors, groupCommitment, challenge };
  sessions.set(cacheKey, result);
  return result;
}

/** §4.2 derive_interpolating_value for `x` over the session's signers (no duplicates: refused). */
function lagrange(signers: readonly Signer[], x: bigint): bigint {
  if (new Set(signers.map((s) => s.x)).size !== signers.length || !signers.some((s) => s.x === x)) throw new Error('invalid parameters');
  let num = Fn.ONE;
  let den = Fn.ONE;
  for (const s of signers) {
    if (s.x === x) continue;
    num = Fn.mul(num, s.x);
    den = Fn.mul(den, Fn.sub(s.x, x));
  }
  return Fn.div(num, den);
}

function scalarBytes(bytes: Uint8Array, what: string): bigint {
  if (!(bytes instanceof Uint8Array) || bytes.length !== Fn.BYTES) throw new Error(`${what} must be ${Fn.BYTES} bytes`);
  return Fn.fromBytes(bytes);
}

/**
 * The commitments `commit` computed, by a SHA-256 digest of their nonces (one-way: the nonces carry
 * 252 bits of entropy each). `signShare` must check that the list holds its own nonces' commitments;
 * when this process made them, a lookup replaces two base-point multiplications. Used once.
 */
const NONCE_DIGEST = utf8ToBytes('agent-wallet frost nonce commitments v1');
const ownCommitments = new Lru<string, string>(4096);
const nonceDigest = (hiding: Uint8Array, binding: Uint8Array) => bytesToHex(sha256(NONCE_DIGEST, hiding, binding));

/** RFC 9591 §4.1 nonce_generate: H3(random(32) ‖ SerializeScalar(sk)), and its commitment by noble's constant-time base multiplication. */
function rfcNonce(rng: (n: number) => Uint8Array, skBytes: Uint8Array): { scalar: bigint; point: Uint8Array } {
  const scalar = H3(concatBytes(rng(32), skBytes));
  return { scalar, point: baseElement(scalar) };
}

/**
 * A nonce SHA-512(p ‖ random(32) ‖ SerializeScalar(sk)) mod L, p a per-process secret, and its
 * commitment, from one native Ed25519 signature (native-ed25519.ts): nonce_generate with a secret
 * prefix in place of H3's public tag — as uniform, and as hedged against a weak RNG — for ~15 µs
 * instead of ~110 µs of noble's base multiplication.
 */
function nativeNonce(skBytes: Uint8Array): { scalar: bigint; point: Uint8Array } {
  for (;;) {
    const made = hashedBaseMultiple(concatBytes(randomBytes(32), skBytes));
    if (made === null) continue;
    knownBaseMultiple(made.point);
    return made;
  }
}

/**
 * §5.1 commit: hiding and binding nonces and their commitments. How a signer draws its nonces is its
 * own affair (the other party only sees commitments): by default `nativeNonce`; with `rng` (the RFC
 * vectors and the differential tests against noble), exactly §4.1's H3(rng(32) ‖ SerializeScalar(sk)).
 */
export function commit(secret: FrostSecret, rng?: (n: number) => Uint8Array): { nonces: Nonces; commitments: NonceCommitments } {
  const sk = scalarBytes(secret.signingShare, 'secret.signingShare');
  const skBytes = Fn.toBytes(sk);
  const draw = () => (rng ? rfcNonce(rng, skBytes) : nativeNonce(skBytes));
  const hiding = draw();
  const binding = draw();
  const nonces = { hiding: Fn.toBytes(hiding.scalar), binding: Fn.toBytes(binding.scalar) } as Nonces;
  const commitments = { identifier: secret.identifier, hiding: hiding.point, binding: binding.point } as NonceCommitments;
  ownCommitments.set(nonceDigest(nonces.hiding, nonces.binding), bytesToHex(concatBytes(commitments.hiding, commitments.binding)));
  return { nonces, commitments };
}

/**
 * §5.2 sign: this signer's share. Refuses consumed (zeroed) nonces and a list that does not carry
 * this signer's own commitments for them; zeroes the nonces on success, as noble does.
 */
export function signShare(secret: FrostSecret, pub: FrostPublic, nonces: Nonces, list: readonly NonceCommitments[], message: Uint8Array): Uint8Array {
  checkSigners(pub, list.length);
  const d = scalarBytes(nonces.hiding, 'nonces.hiding');
  const e = scalarBytes(nonces.binding, 'nonces.binding');
  if (Fn.is0(d) || Fn.is0(e)) throw new Error('signing nonces already used');
  const own = list.find((c) => c.identifier === secret.identifier);
  if (!own) throw new Error('missing signer commitment');
  // The coordinator chose the list: it must hold the commitments of exactly these nonces.
  const digest = nonceDigest(nonces.hiding, nonces.binding);
  const expected = ownCommitments.get(digest) ?? bytesToHex(concatBytes(baseElement(d), baseElement(e)));
  if (bytesToHex(concatBytes(own.hiding, own.binding)) !== expected) throw new Error('incorrect signer commitment');
  const sk = scalarBytes(secret.signingShare, 'secret.signingShare');
  const s = session(decodedKey(pub), list, message);
  const x = identifierScalar(secret.identifier);
  const lambda = lagrange(s.signers, x);
  const z = Fn.add(Fn.add(d, Fn.mul(e, s.bindingFactors.get(secret.identifier)!)), Fn.mul(Fn.mul(lambda, sk), s.challenge));
  nonces.hiding.fill(0);
  nonces.binding.fill(0);
  ownCommitments.delete(digest);
  return Fn.toBytes(z);
}

function shareVerifies(key: DecodedKey, s: Session, id: Identifier, share: bigint): boolean {
  const signer = s.signers.find((c) => c.id === id);
  if (!signer) throw new Error('cannot find identifier commitment');
  const pk = key.verifyingShares.get(id);
  if (!pk) throw new Error(`no verifying share for ${id}`);
  // §5.4: z_i·B = D_i + ρ_i·E_i + (c·λ_i)·PK_i; every input is public, so variable time is fine.
  const rhs = signer.hiding.add(mulAddUnsafe(Point, [signer.binding, pk], [s.bindingFactors.get(id)!, Fn.mul(s.challenge, lagrange(s.signers, signer.x))]));
  return Point.BASE.multiplyUnsafe(share).equals(rhs);
}

/** §5.4 verify_signature_share: whether `share` is `id`'s valid share for this list and message. */
export function verifyShare(pub: FrostPublic, list: readonly NonceCommitments[], message: Uint8Array, id: Identifier, share: Uint8Array): boolean {
  identifierScalar(id);
  const z = scalarBytes(share, 'sigShare');
  const key = decodedKey(pub);
  return shareVerifies(key, session(key, list, message), id, z);
}

/**
 * §5.3 aggregate: (R, Σ z_i) as a 64-byte Ed25519 signature, checked with the native verify under
 * the group key. Throws `AggregateError` naming the signers whose shares fail when it does not verify.
 */
export function aggregate(pub: FrostPublic, list: readonly NonceCommitments[], message: Uint8Array, shares: Readonly<Record<Identifier, Uint8Array>>): Uint8Array {
  try {
    checkSigners(pub, list.length);
  } catch {
    throw new AggregateError([]);
  }
  const ids = list.map((c) => c.identifier);
  if (new Set(ids).size !== ids.length || ids.length !== Object.keys(shares).length) throw new AggregateError([]);
  for (const id of ids) {
    if (!Object.hasOwn(shares, id) || !Object.hasOwn(pub.verifyingShares, id)) throw new AggregateError([]);
  }
  const key = decodedKey(pub);
  const s = session(key, list, message);
  const z = ids.map((id) => scalarBytes(shares[id]!, 'sigShare'));
  const signature = concatBytes(s.groupCommitment.toBytes(), Fn.toBytes(z.reduce((a, b) => Fn.add(a, b), Fn.ZERO)));
  if (!ed25519Verifies(signature, message, key.groupKeyBytes)) {
    throw new AggregateError(ids.filter((id, i) => !shareVerifies(key, s, id, z[i]!)));
  }
  return signature;
}
