/**
 * The owner's recovery share (DESIGN §4.1): a third share, for identifier 3, of the same degree-1
 * key, made by repairable threshold secret sharing (Laing–Stinson; frost-core's `repairable`), and
 * the refresh that makes a leaked one useless. Pure: no I/O, no clock, no storage.
 *
 * f(3) = λ1·f(1) + λ2·f(2) with λ1 = −1, λ2 = 2. Each helper i splits δ_i = λ_i·f(i) into a piece it
 * keeps and a random piece it sends the other helper, and hands the owner σ_i, the sum of what it
 * kept and what it received. Beside σ_i each helper reports the points of its pieces
 * (kept·G, sent·G, received·G), so the owner can check each side on its own and name the one that
 * lied: σ_i·G = kept_i·G + received_i·G, kept_i·G + sent_i·G = λ_i·Y_i, and what one side says it
 * sent is what the other says it received. Points say nothing of their scalars.
 */
import { ed25519, ed25519_FROST } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { decodeElement, scalarProblem, verifyingShareFor, type Element } from './group.ts';
import { AGENT_ID, SERVER_ID, type Identifier } from './ids.ts';
import { Secret } from './secret.ts';
import * as rfc9591 from './rfc9591.ts';
import type { KeyPackage, PublicPackage, SigningCommitments, SigningNonces } from './types.ts';

const Point = ed25519.Point;
const Fn = Point.Fn;

/** Participant 3: the owner, holding the recovery share in a passphrase-sealed kit. */
export const OWNER_ID: Identifier = ed25519_FROST.Identifier.fromNumber(3);

/** Lagrange coefficients at x = 3 over {1, 2}: f(3) = −f(1) + 2·f(2). */
const LAMBDA: Readonly<Record<Identifier, bigint>> = { [AGENT_ID]: Fn.neg(1n), [SERVER_ID]: 2n };

/** Which side's pieces are wrong: the agent's, the daemon's, or their exchange (one of them lies about it). */
export type RepairCulprit = 'agent' | 'daemon' | 'exchange' | 'key';

export class RepairError extends Error {
  override readonly name = 'RepairError';
  constructor(
    readonly culprit: RepairCulprit,
    message: string,
  ) {
    super(message);
  }
}

/** A non-zero random scalar (below L), drawn from 64 random bytes reduced: no bias worth naming. */
export function randomScalar(): bigint {
  for (;;) {
    const n = Fn.create(BigInt(`0x${bytesToHex(crypto.getRandomValues(new Uint8Array(64)))}`));
    if (n !== 0n) return n;
  }
}

function scalarOf(bytes: Uint8Array, what: string, culprit: RepairCulprit): bigint {
  const problem = scalarProblem(bytes);
  if (problem) throw new RepairError(culprit, `${what} ${problem}`);
  const n = Fn.fromBytes(bytes);
  if (n === 0n) throw new RepairError(culprit, `${what} is zero`);
  return n;
}

function elementOf(bytes: Uint8Array, what: string, culprit: RepairCulprit): Element {
  try {
    return decodeElement(bytes, what);
  } catch (err) {
    throw new RepairError(culprit, (err as Error).message);
  }
}

/** The group key and the verifying shares of 1, 2 and 3 a public package's VSS commitment implies, checked against it. */
export function keyShape(pub: PublicPackage): { groupKey: Uint8Array; verifying: Record<Identifier, Element> } {
  if (pub.commitments.length !== 2) throw new RepairError('key', 'the key is not of degree 1 (two VSS commitments)');
  const [c0, c1] = pub.commitments.map((c, i) => elementOf(c, `VSS commitment ${i}`, 'key').toBytes());
  const verifying: Record<Identifier, Element> = {};
  for (const id of [AGENT_ID, SERVER_ID, OWNER_ID]) verifying[id] = elementOf(verifyingShareFor([c0!, c1!], id), `verifying share ${Fn.fromBytes(hexToBytes(id))}`, 'key');
  for (const id of [AGENT_ID, SERVER_ID]) {
    const listed = pub.verifyingShares[id];
    if (!listed || !elementOf(listed, 'verifying share', 'key').equals(verifying[id]!)) throw new RepairError('key', 'a verifying share disagrees with the VSS commitment');
  }
  return { groupKey: c0!, verifying };
}

/** The verifying share of identifier 3 (f(3)·G), encoded. */
export function ownerVerifyingShare(pub: PublicPackage): Uint8Array {
  return keyShape(pub).verifying[OWNER_ID]!.toBytes();
}

/** What a helper hands the owner: σ and the points of its pieces. */
export interface HelperReport {
  sigma: Uint8Array;
  kept: Uint8Array;
  sent: Uint8Array;
  received: Uint8Array;
}

/** A helper's state between its split and its sum. SECRET. */
export interface HelperSplit {
  keep: Secret<bigint>;
  /** The random piece for the other helper (a scalar, 32 bytes LE). SECRET in transit. */
  forOther: Uint8Array;
  keptPoint: Uint8Array;
  sentPoint: Uint8Array;
}

/** Step 1 for the agent (1) or the daemon (2): split λ_i·f(i) into a kept and a sent piece. */
export function repairSplit(key: Secret<KeyPackage>): HelperSplit {
  const k = key.reveal();
  const id = k.secret.identifier;
  const lambda = LAMBDA[id];
  if (lambda === undefined) throw new RepairError('key', `participant ${id} does not help make the owner's share`);
  const delta = Fn.mul(lambda, Fn.fromBytes(k.secret.signingShare));
  for (;;) {
    const sent = randomScalar();
    const keep = Fn.sub(delta, sent);
    // Both pieces non-zero, so both points are proper elements the owner can check.
    if (keep !== 0n) return { keep: new Secret(keep), forOther: Fn.toBytes(sent), keptPoint: Point.BASE.multiply(keep).toBytes(), sentPoint: Point.BASE.multiply(sent).toBytes() };
  }
}

/** Step 2: σ = kept + received, and the report for the owner. `received` is checked as a scalar (the other helper's piece). */
export function repairSum(split: HelperSplit, received: Uint8Array, from: 'agent' | 'daemon'): HelperReport {
  const r = scalarOf(received, `the ${from}'s piece`, from);
  const sigma = Fn.add(split.keep.reveal(), r);
  return { sigma: Fn.toBytes(sigma), kept: split.keptPoint, sent: split.sentPoint, received: Point.BASE.multiply(r).toBytes() };
}

/**
 * Step 3, on the owner's machine: f(3) from both reports, each checked on its own against the
 * key's public commitment, then together; throws a RepairError naming the side that lied.
 */
export function repairCombine(pub: PublicPackage, agent: HelperReport, daemon: HelperReport): Secret<bigint> {
  const { verifying } = keyShape(pub);
  const side = (r: HelperReport, who: 'agent' | 'daemon', id: Identifier) => {
    const sigma = scalarOf(r.sigma, `the ${who}'s sum`, who);
    const kept = elementOf(r.kept, `the ${who}'s kept point`, who);
    const sent = elementOf(r.sent, `the ${who}'s sent point`, who);
    const received = elementOf(r.received, `the ${who}'s received point`, who);
    if (!kept.add(sent).equals(verifying[id]!.multiply(LAMBDA[id]!))) throw new RepairError(who, `the ${who}'s pieces do not add up to its share of the key`);
    if (!Point.BASE.multiply(sigma).equals(kept.add(received))) throw new RepairError(who, `the ${who}'s sum is not what it kept plus what it received`);
    return { sigma, sent, received };
  };
  const a = side(agent, 'agent', AGENT_ID);
  const d = side(daemon, 'daemon', SERVER_ID);
  if (!a.sent.equals(d.received) || !d.sent.equals(a.received)) throw new RepairError('exchange', 'what the agent and the daemon say they exchanged differs: one of them is lying');
  const share = Fn.add(a.sigma, d.sigma);
  if (!Point.BASE.multiply(share).equals(verifying[OWNER_ID]!)) throw new RepairError('key', "the combined share does not match the key's verifying share for the owner");
  return new Secret(share);
}

/** A key package for the owner (identifier 3) of a key: its share and the public package with all three verifying shares. */
export function ownerKeyPackage(pub: PublicPackage, share: Secret<bigint>): Secret<KeyPackage> {
  const { verifying } = keyShape(pub);
  const s = share.reveal();
  if (!Point.BASE.multiply(s).equals(verifying[OWNER_ID]!)) throw new RepairError('key', 'the recovery share does not belong to this key (it was refreshed since, or the kit is of another wallet)');
  return new Secret({ public: withOwner(pub), secret: { identifier: OWNER_ID, signingShare: Uint8Array.from(Fn.toBytes(s)) } });
}

/** The public package with the owner's verifying share added, so signing sets {1, 3} and {2, 3} can verify shares. */
export function withOwner(pub: PublicPackage): PublicPackage {
  const { verifying } = keyShape(pub);
  return { signers: { min: 2, max: 3 }, commitments: pub.commitments.map((c) => Uint8Array.from(c)), verifyingShares: { ...pub.verifyingShares, [OWNER_ID]: Uint8Array.from(verifying[OWNER_ID]!.toBytes()) } };
}

/**
 * Refresh: agent and daemon add g(x) = a·x (zero constant term) to the key, a = a1 + a2 from both
 * sides, so f(0) and the address stay while every share moves; a share for 3 made before is no
 * longer on the polynomial. Each side draws its contribution; `refreshKeyPackage` applies the sum.
 */
export function refreshContribution(): Uint8Array {
  return Fn.toBytes(randomScalar());
}

/** The key package after adding a·x, a the sum of both contributions (each checked; a sum of zero would change nothing and is refused). */
export function refreshKeyPackage(key: Secret<KeyPackage>, contributions: { agent: Uint8Array; daemon: Uint8Array }): Secret<KeyPackage> {
  const a = Fn.add(scalarOf(contributions.agent, "the agent's refresh contribution", 'agent'), scalarOf(contributions.daemon, "the daemon's refresh contribution", 'daemon'));
  if (a === 0n) throw new RepairError('exchange', 'the refresh contributions cancel out');
  const k = key.reveal();
  const { verifying } = keyShape(k.public);
  const aG = Point.BASE.multiply(a);
  const x = (id: Identifier) => Fn.fromBytes(hexToBytes(id));
  const share = Fn.add(Fn.fromBytes(k.secret.signingShare), Fn.mul(a, x(k.secret.identifier)));
  const c1 = elementOf(k.public.commitments[1]!, 'VSS commitment 1', 'key').add(aG).toBytes();
  const verifyingShares: Record<Identifier, Uint8Array<ArrayBuffer>> = {};
  for (const id of Object.keys(k.public.verifyingShares)) verifyingShares[id] = Uint8Array.from(verifying[id]!.add(aG.multiply(x(id))).toBytes());
  return new Secret({
    public: { signers: k.public.signers, commitments: [Uint8Array.from(k.public.commitments[0]!), Uint8Array.from(c1)], verifyingShares },
    secret: { identifier: k.secret.identifier, signingShare: Uint8Array.from(Fn.toBytes(share)) },
  });
}

/** The signer sets a recovery signs with: the owner and exactly one of the agent or the daemon. */
export function assertRecoveryPair(list: readonly SigningCommitments[]): void {
  const ids = list.map((c) => c.identifier).sort();
  const ok = ids.length === 2 && ids.includes(OWNER_ID) && (ids.includes(AGENT_ID) || ids.includes(SERVER_ID)) && ids[0] !== ids[1];
  if (!ok) throw new RepairError('key', 'a recovery is signed by the owner and exactly one of the agent or the daemon');
}

/** One party's share of a recovery signature ({1, 3} or {2, 3}); RFC 9591 §5.2 over the key with the owner's verifying share. Zeroes the nonces. */
export function recoverySignShare(key: Secret<KeyPackage>, nonces: Secret<SigningNonces>, list: readonly SigningCommitments[], message: Uint8Array): Uint8Array {
  assertRecoveryPair(list);
  const k = key.reveal();
  return rfc9591.signShare(k.secret, withOwner(k.public), nonces.reveal(), list, message);
}

/** The Ed25519 signature of a recovery pair, verified under the group key (rfc9591.aggregate names a cheating share). */
export function recoveryAggregate(pub: PublicPackage, list: readonly SigningCommitments[], message: Uint8Array, shares: Readonly<Record<Identifier, Uint8Array>>): Uint8Array {
  assertRecoveryPair(list);
  return rfc9591.aggregate(withOwner(pub), list, message, shares);
}

/**
 * The printable fingerprint of an enrollment: of the wallet and verifying share 3, public values
 * both sides can compute, so the owner compares the kit's with the dashboard's record without the
 * dashboard ever holding the share. A refresh changes it.
 */
export function recoveryFingerprint(walletId: string, pub: PublicPackage): string {
  const digest = bytesToHex(sha256(concatBytes(utf8ToBytes(`agent-wallet recovery kit v1|${walletId}|`), ownerVerifyingShare(pub))));
  return digest.slice(0, 20).toUpperCase().match(/.{4}/g)!.join('-');
}
