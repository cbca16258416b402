/**
 * RFC 9591 Appendix E.1 (FROST(Ed25519, SHA-512)) and the frost-core DKG vectors, run against the
 * pinned @noble/curves engine and our wire decoders. A version bump that changes any output fails here.
 */
import { describe, expect, test } from 'bun:test';
import { ed25519, ed25519_FROST as frost } from '@noble/curves/ed25519.js';
import type { DKG_Round1, DKG_Round2, DKG_Secret, FrostPublic, FrostSecret, NonceCommitments } from '@noble/curves/abstract/frost.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { AGENT_ID, decodeCommitments, decodeRound1, SERVER_ID } from '../../src/frost/index.ts';
import rfc from '../fixtures/frost-ed25519.json';
import dkg from '../fixtures/frost-ed25519-dkg.json';

const Fn = ed25519.Point.Fn;
const G = ed25519.Point.BASE;
const id = (n: number) => frost.Identifier.fromNumber(n);
const pointOf = (scalarHex: string) => G.multiply(Fn.fromBytes(hexToBytes(scalarHex))).toBytes();

/** An RNG that replays the given 32-byte strings in order, as the vectors' fixed randomness. */
function replay(...chunks: string[]) {
  const queue = chunks.map(hexToBytes);
  return (n?: number) => {
    const next = queue.shift();
    if (next === undefined || next.length !== n) throw new Error('unexpected rng call');
    return next;
  };
}

describe('RFC 9591 Appendix E.1 FROST(Ed25519, SHA-512)', () => {
  const { inputs } = rfc;
  const message = hexToBytes(inputs.message);
  const shareOf = (n: number) => inputs.participant_shares.find((p) => p.identifier === n)!.participant_share;
  const pub: FrostPublic = {
    signers: { min: 2, max: 3 },
    commitments: [hexToBytes(inputs.verifying_key_key), pointOf(inputs.share_polynomial_coefficients[0]!)],
    verifyingShares: Object.fromEntries([1, 2, 3].map((n) => [id(n), pointOf(shareOf(n))])),
  } as FrostPublic;
  const round1 = rfc.round_one_outputs.outputs.map((o) => {
    const secret = { identifier: id(o.identifier), signingShare: hexToBytes(shareOf(o.identifier)) } as FrostSecret;
    const generated = frost.commit(secret, replay(o.hiding_nonce_randomness, o.binding_nonce_randomness));
    return { o, secret, ...generated };
  });
  const list: NonceCommitments[] = round1.map((r) => r.commitments);

  test('the group secret key matches the verifying key and the shares interpolate to it', () => {
    expect(bytesToHex(pointOf(inputs.group_secret_key))).toBe(inputs.verifying_key_key);
    const shares = [1, 3].map((n) => ({ identifier: id(n), signingShare: hexToBytes(shareOf(n)) }) as FrostSecret);
    expect(bytesToHex(frost.combineSecret(shares, { min: 2, max: 3 }))).toBe(inputs.group_secret_key);
  });

  test('fixed nonce randomness yields the RFC nonces and commitments', () => {
    for (const { o, nonces, commitments } of round1) {
      expect(bytesToHex(nonces.hiding)).toBe(o.hiding_nonce);
      expect(bytesToHex(nonces.binding)).toBe(o.binding_nonce);
      expect(bytesToHex(commitments.hiding)).toBe(o.hiding_nonce_commitment);
      expect(bytesToHex(commitments.binding)).toBe(o.binding_nonce_commitment);
    }
  });

  test('binding factor inputs and binding factors follow RFC 9591 §4.4 with the suite context string', () => {
    const H = (tag: string, data: Uint8Array) => sha512(concatBytes(utf8ToBytes(`FROST-ED25519-SHA512-v1${tag}`), data));
    const encoded = concatBytes(...list.flatMap((c) => [hexToBytes(c.identifier), c.hiding, c.binding]));
    for (const { o } of round1) {
      const input = concatBytes(hexToBytes(inputs.verifying_key_key), H('msg', message), H('com', encoded), hexToBytes(id(o.identifier)));
      expect(bytesToHex(input)).toBe(o.binding_factor_input);
      const rho = Fn.create(BigInt(`0x${bytesToHex(H('rho', input).reverse())}`));
      expect(bytesToHex(Fn.toBytes(rho))).toBe(o.binding_factor);
    }
  });

  test('signature shares, their verification and the aggregate signature match the RFC', () => {
    const shares: Record<string, Uint8Array> = {};
    for (const { o, secret, nonces } of round1) {
      const share = frost.signShare(secret, pub, nonces, list, message);
      const expected = rfc.round_two_outputs.outputs.find((s) => s.identifier === o.identifier)!.sig_share;
      expect(bytesToHex(share)).toBe(expected);
      expect(frost.verifyShare(pub, list, message, secret.identifier, share)).toBe(true);
      shares[secret.identifier] = share;
    }
    const signature = frost.aggregate(pub, list, message, shares);
    expect(bytesToHex(signature)).toBe(rfc.final_output.sig);
  });

  test('the RFC signature verifies as a plain RFC 8032 Ed25519 signature', () => {
    const sig = hexToBytes(rfc.final_output.sig);
    expect(ed25519.verify(sig, message, hexToBytes(inputs.verifying_key_key), { zip215: false })).toBe(true);
    expect(ed25519.verify(sig, utf8ToBytes('tesT'), hexToBytes(inputs.verifying_key_key))).toBe(false);
  });

  test('our wire decoder accepts the RFC commitments of participant 1', () => {
    const o = round1[0]!.o;
    const decoded = decodeCommitments({ identifier: AGENT_ID, hiding: o.hiding_nonce_commitment, binding: o.binding_nonce_commitment }, AGENT_ID);
    expect(bytesToHex(decoded.hiding)).toBe(o.hiding_nonce_commitment);
  });
});

describe('frost-core DKG vectors for FROST(Ed25519, SHA-512)', () => {
  type Party = {
    signing_key: string;
    coefficient: string;
    vss_commitments: string[];
    proof_of_knowledge: string;
    signing_shares: Record<string, string>;
    verifying_share: string;
    signing_share: string;
  };
  const signers = { min: dkg.config.MIN_PARTICIPANTS, max: dkg.config.MAX_PARTICIPANTS };
  const parties: Record<number, Party> = { 1: dkg.inputs['1'], 2: dkg.inputs['2'], 3: dkg.inputs['3'] };
  const nums = [1, 2, 3];
  const round1Of = (n: number): DKG_Round1 => ({
    identifier: id(n),
    commitment: parties[n]!.vss_commitments.map(hexToBytes),
    proofOfKnowledge: hexToBytes(parties[n]!.proof_of_knowledge),
  }) as DKG_Round1;
  const stateOf = (n: number): DKG_Secret => ({
    identifier: BigInt(n),
    coefficients: [Fn.fromBytes(hexToBytes(parties[n]!.signing_key)), Fn.fromBytes(hexToBytes(parties[n]!.coefficient))],
    commitment: parties[n]!.vss_commitments.map(hexToBytes),
    signers,
    step: 1,
  }) as DKG_Secret;
  const others = (n: number) => nums.filter((m) => m !== n);

  // In this format `signing_key` is the constant term of each participant's polynomial,
  // `coefficient` its degree-1 coefficient, and `signing_shares[m]` the share it RECEIVED from m.
  test('each VSS commitment commits to the participant\'s polynomial coefficients', () => {
    for (const n of nums) {
      const p = parties[n]!;
      expect([bytesToHex(pointOf(p.signing_key)), bytesToHex(pointOf(p.coefficient))]).toEqual(p.vss_commitments);
    }
  });

  test('the sum of the first VSS commitments is the verifying key', () => {
    const sum = nums.map((n) => ed25519.Point.fromHex(parties[n]!.vss_commitments[0]!)).reduce((a, b) => a.add(b));
    expect(sum.toHex()).toBe(dkg.inputs.verifying_key);
    const groupSecret = nums.map((n) => Fn.fromBytes(hexToBytes(parties[n]!.signing_key))).reduce((a, b) => Fn.add(a, b));
    expect(G.multiply(groupSecret).toHex()).toBe(dkg.inputs.verifying_key);
  });

  test('round 2 accepts the vector proofs of knowledge and produces the vector shares', () => {
    for (const n of nums) {
      const out = frost.DKG.round2(stateOf(n), others(n).map(round1Of));
      for (const m of others(n)) {
        expect(bytesToHex(out[id(m)]!.signingShare)).toBe(parties[m]!.signing_shares[String(n)]!);
      }
    }
  });

  test('round 3 yields the vector signing shares, verifying shares and verifying key', () => {
    for (const n of nums) {
      const state = stateOf(n);
      frost.DKG.round2(state, others(n).map(round1Of));
      const received = others(n).map((m) => ({ identifier: id(m), signingShare: hexToBytes(parties[n]!.signing_shares[String(m)]!) }) as DKG_Round2);
      const key = frost.DKG.round3(state, others(n).map(round1Of), received);
      expect(bytesToHex(key.secret.signingShare)).toBe(parties[n]!.signing_share);
      expect(bytesToHex(key.public.commitments[0]!)).toBe(dkg.inputs.verifying_key);
      for (const m of nums) expect(bytesToHex(key.public.verifyingShares[id(m)]!)).toBe(parties[m]!.verifying_share);
    }
  });

  test('round 2 rejects a vector proof of knowledge with one flipped byte', () => {
    const forged = round1Of(1);
    forged.proofOfKnowledge[40]! ^= 1;
    expect(() => frost.DKG.round2(stateOf(2), [forged, round1Of(3)])).toThrow('invalid proof of knowledge');
  });

  test('our wire decoder accepts the vector round-1 packages of participants 1 and 2', () => {
    for (const [n, expected] of [[1, AGENT_ID], [2, SERVER_ID]] as const) {
      const p = parties[n]!;
      const decoded = decodeRound1({ identifier: expected, commitment: p.vss_commitments, proof_of_knowledge: p.proof_of_knowledge }, expected);
      expect(bytesToHex(decoded.proofOfKnowledge)).toBe(p.proof_of_knowledge);
    }
  });
});
