/**
 * The proof of possession a refresh commit carries (src/frost/share-proof.ts), pure: it holds for
 * the refreshed agent share in its own refresh, and for nothing else — another share, another
 * refresh or wallet, a tampered R or z, a non-canonical z, a small-order or identity R.
 */
import { describe, expect, test } from 'bun:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { AGENT_ID, SERVER_ID, Secret } from '../../src/frost/index.ts';
import { refreshContribution, refreshKeyPackage } from '../../src/frost/recovery-share.ts';
import { proveShare, shareProofProblem } from '../../src/frost/share-proof.ts';
import { dkgPair } from './helpers.ts';

const Point = ed25519.Point;
const Fn = Point.Fn;
const context = { walletId: 'wal_0000000000000000000000000a', refreshId: 'kr_0000000000000000000000000a' };

function refreshed() {
  const { agent: { keyPackage: agent }, server: { keyPackage: server } } = dkgPair();
  const contributions = { agent: refreshContribution(), daemon: refreshContribution() };
  return { agent: refreshKeyPackage(agent, contributions), server: refreshKeyPackage(server, contributions), oldAgent: agent };
}

describe('share proof of a refresh commit', () => {
  test('a proof made with the refreshed agent share verifies against the refreshed key, for its wallet and refresh', () => {
    const { agent, server } = refreshed();
    const proof = proveShare(agent, context);
    expect(proof.length).toBe(64);
    // The daemon checks against its own copy of the refreshed public package.
    expect(shareProofProblem(server.reveal().public, AGENT_ID, proof, context)).toBeNull();
    // Randomized: a second proof differs and verifies too.
    const again = proveShare(agent, context);
    expect(again).not.toEqual(proof);
    expect(shareProofProblem(server.reveal().public, AGENT_ID, again, context)).toBeNull();
  });

  test("another share does not prove the agent's: the old (pre-refresh) share, the daemon's share, a random scalar", () => {
    const { agent, server, oldAgent } = refreshed();
    const pub = server.reveal().public;
    expect(shareProofProblem(pub, AGENT_ID, proveShare(oldAgent, context), context)).toMatch(/does not prove/);
    expect(shareProofProblem(pub, AGENT_ID, proveShare(server, context), context)).toMatch(/does not prove/);
    const k = agent.reveal();
    const forged = new Secret({ public: k.public, secret: { ...k.secret, signingShare: Uint8Array.from(Fn.toBytes(Fn.create(12345n))) } });
    expect(shareProofProblem(pub, AGENT_ID, proveShare(forged, context), context)).toMatch(/does not prove/);
    // The daemon's own share proves only the daemon's participant.
    expect(shareProofProblem(pub, SERVER_ID, proveShare(server, context), context)).toBeNull();
  });

  test('a proof for one refresh or wallet proves nothing for another', () => {
    const { agent, server } = refreshed();
    const pub = server.reveal().public;
    const proof = proveShare(agent, context);
    expect(shareProofProblem(pub, AGENT_ID, proof, { ...context, refreshId: 'kr_0000000000000000000000000b' })).toMatch(/does not prove/);
    expect(shareProofProblem(pub, AGENT_ID, proof, { ...context, walletId: 'wal_0000000000000000000000000b' })).toMatch(/does not prove/);
    // Another key (another wallet's, same ids) does not take it either.
    const other = refreshed();
    expect(shareProofProblem(other.server.reveal().public, AGENT_ID, proof, context)).not.toBeNull();
  });

  test('a tampered R or z is refused', () => {
    const { agent, server } = refreshed();
    const pub = server.reveal().public;
    const proof = proveShare(agent, context);
    const z = Fn.fromBytes(proof.subarray(32));
    const otherR = Uint8Array.from(proof);
    otherR.set(Point.BASE.multiply(7n).toBytes(), 0);
    expect(shareProofProblem(pub, AGENT_ID, otherR, context)).toMatch(/does not prove/);
    const flipped = Uint8Array.from(proof);
    flipped[5]! ^= 1;
    expect(shareProofProblem(pub, AGENT_ID, flipped, context)).not.toBeNull();
    const otherZ = Uint8Array.from(proof);
    otherZ.set(Fn.toBytes(Fn.add(z, 1n)), 32);
    expect(shareProofProblem(pub, AGENT_ID, otherZ, context)).toMatch(/does not prove/);
    expect(shareProofProblem(pub, AGENT_ID, proof.subarray(0, 63), context)).toMatch(/64 bytes/);
  });

  test('a non-canonical z (z + L, the same scalar mod L) is refused', () => {
    const { agent, server } = refreshed();
    const proof = proveShare(agent, context);
    const z = Fn.fromBytes(proof.subarray(32));
    const wide = Uint8Array.from(proof);
    const encoded = z + Fn.ORDER;
    for (let i = 0; i < 32; i++) wide[32 + i] = Number((encoded >> BigInt(8 * i)) & 0xffn);
    expect(shareProofProblem(server.reveal().public, AGENT_ID, wide, context)).toMatch(/^z /);
  });

  test('an identity or small-order R is refused, whatever z', () => {
    const { server } = refreshed();
    const pub = server.reveal().public;
    const identity = Point.ZERO.toBytes();
    // (0, −1), of order 2.
    const smallOrder = Point.fromAffine({ x: 0n, y: Point.Fp.ORDER - 1n }).toBytes();
    for (const r of [identity, smallOrder]) {
      const proof = new Uint8Array(64);
      proof.set(r, 0);
      expect(shareProofProblem(pub, AGENT_ID, proof, context)).toMatch(/^R /);
    }
  });
});
