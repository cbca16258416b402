/**
 * The owner's recovery share (DESIGN §4.1), pure: repairable sharing gives the owner f(3) on the
 * same key, each side's lie is named, neither helper can form f(3) from what it saw, recovery
 * pairs {1, 3} and {2, 3} sign for the same address while {1, 2} signs as before, and a refresh
 * keeps the address but leaves an old recovery share off the key.
 */
import { describe, expect, test } from 'bun:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { commit, signShare, aggregate, commitmentList, samePublicPackage, Secret, AGENT_ID, SERVER_ID, type KeyPackage } from '../../src/frost/index.ts';
import { ed25519Verifies } from '../../src/frost/native-ed25519.ts';
import * as rfc9591 from '../../src/frost/rfc9591.ts';
import {
  OWNER_ID,
  RepairError,
  ownerKeyPackage,
  ownerVerifyingShare,
  recoveryAggregate,
  recoverySignShare,
  refreshContribution,
  refreshKeyPackage,
  repairCombine,
  repairSplit,
  repairSum,
  type HelperReport,
} from '../../src/frost/recovery-share.ts';
import { dkgPair, solanaLikeMessage } from './helpers.ts';

const Fn = ed25519.Point.Fn;
const scalar = (b: Uint8Array) => Fn.fromBytes(b);

function keys(): { agent: Secret<KeyPackage>; server: Secret<KeyPackage> } {
  const { agent, server } = dkgPair();
  return { agent: agent.keyPackage, server: server.keyPackage };
}

function enroll(agent: Secret<KeyPackage>, server: Secret<KeyPackage>) {
  const a = repairSplit(agent);
  const d = repairSplit(server);
  const agentReport = repairSum(a, d.forOther, 'daemon');
  const daemonReport = repairSum(d, a.forOther, 'agent');
  return { a, d, agentReport, daemonReport };
}

function pairSignature(keys: [Secret<KeyPackage>, Secret<KeyPackage>], message: Uint8Array): Uint8Array {
  const rounds = keys.map((k) => ({ k, ...commit(k) }));
  const list = rounds.map((r) => r.commitments);
  const shares = Object.fromEntries(rounds.map((r) => [r.k.reveal().secret.identifier, recoverySignShare(r.k, r.nonces, list, message)]));
  return recoveryAggregate(keys[0].reveal().public, list, message, shares);
}

describe('enrollment', () => {
  test("the owner's share is f(3) of the same key: it matches verifying share 3, and {1, 3} and {2, 3} sign for the group key", () => {
    const { agent, server } = keys();
    const { agentReport, daemonReport } = enroll(agent, server);
    const pub = agent.reveal().public;
    const share = repairCombine(pub, agentReport, daemonReport);
    expect(ed25519.Point.BASE.multiply(share.reveal()).toBytes()).toEqual(ownerVerifyingShare(pub));
    const owner = ownerKeyPackage(pub, share);
    const groupKey = pub.commitments[0]!;
    const message = solanaLikeMessage(3);
    expect(ed25519Verifies(pairSignature([agent, owner], message), message, groupKey)).toBe(true);
    expect(ed25519Verifies(pairSignature([server, owner], message), message, groupKey)).toBe(true);
    // Agent + daemon sign exactly as before enrollment.
    const ra = commit(agent);
    const rs = commit(server);
    const list = commitmentList(ra.commitments, rs.commitments);
    const sig = aggregate(pub, list, message, { [AGENT_ID]: signShare(agent, ra.nonces, list, message), [SERVER_ID]: signShare(server, rs.nonces, list, message) });
    expect(ed25519Verifies(sig, message, groupKey)).toBe(true);
  });

  const tamper = (r: HelperReport): HelperReport => ({ ...r, sigma: Fn.toBytes(Fn.add(scalar(r.sigma), 1n)) });
  test('a sum tampered by the daemon is refused naming the daemon; by the agent, naming the agent', () => {
    const { agent, server } = keys();
    const { agentReport, daemonReport } = enroll(agent, server);
    const pub = agent.reveal().public;
    expect(() => repairCombine(pub, agentReport, tamper(daemonReport))).toThrow(expect.objectContaining({ culprit: 'daemon' }));
    expect(() => repairCombine(pub, tamper(agentReport), daemonReport)).toThrow(expect.objectContaining({ culprit: 'agent' }));
  });

  test('a daemon that changes its sum and its points together is still named: its pieces no longer add up to its share of the key', () => {
    const { agent, server } = keys();
    const { agentReport, daemonReport } = enroll(agent, server);
    const bump = Fn.add(scalar(daemonReport.sigma), 5n);
    const forged = { ...daemonReport, sigma: Fn.toBytes(bump), kept: ed25519.Point.fromBytes(daemonReport.kept).add(ed25519.Point.BASE.multiply(5n)).toBytes() };
    expect(() => repairCombine(agent.reveal().public, agentReport, forged)).toThrow(expect.objectContaining({ culprit: 'daemon' }));
  });

  test('reports that disagree on the exchanged pieces are refused as an exchange lie; malformed elements and scalars are refused', () => {
    const { agent, server } = keys();
    const { agentReport, daemonReport } = enroll(agent, server);
    const other = enroll(agent, server);
    const pub = agent.reveal().public;
    expect(() => repairCombine(pub, agentReport, other.daemonReport)).toThrow(expect.objectContaining({ culprit: 'exchange' }));
    const identity = ed25519.Point.ZERO.toBytes();
    expect(() => repairCombine(pub, { ...agentReport, kept: identity }, daemonReport)).toThrow(/identity/);
    expect(() => repairCombine(pub, { ...agentReport, received: new Uint8Array(32).fill(0xff) }, daemonReport)).toThrow(RepairError);
    expect(() => repairCombine(pub, { ...agentReport, sigma: new Uint8Array(32).fill(0xff) }, daemonReport)).toThrow(/agent's sum/);
    expect(() => repairSum(repairSplit(agent), new Uint8Array(32), 'daemon')).toThrow(/daemon's piece is zero/);
  });

  test("neither helper can form f(3) from what it saw: no small combination of its scalars and its own share is the owner's", () => {
    const { agent, server } = keys();
    const { a, d, agentReport, daemonReport } = enroll(agent, server);
    const f3 = repairCombine(agent.reveal().public, agentReport, daemonReport).reveal();
    const seen = {
      daemon: [scalar(server.reveal().secret.signingShare), d.keep.reveal(), scalar(d.forOther), scalar(a.forOther), scalar(daemonReport.sigma)],
      agent: [scalar(agent.reveal().secret.signingShare), a.keep.reveal(), scalar(a.forOther), scalar(d.forOther), scalar(agentReport.sigma)],
    };
    for (const [who, scalars] of Object.entries(seen)) {
      let hits = 0;
      const coefficients = [-2n, -1n, 0n, 1n, 2n];
      const walk = (i: number, acc: bigint) => {
        if (i === scalars.length) {
          if (acc === f3) hits++;
          return;
        }
        for (const c of coefficients) walk(i + 1, Fn.add(acc, Fn.mul(Fn.create(c), scalars[i]!)));
      };
      walk(0, 0n);
      expect({ who, hits }).toEqual({ who, hits: 0 });
    }
    // Together, of course, they can: the test's combination search finds f(3) from both sets.
    expect(Fn.add(scalar(agentReport.sigma), scalar(daemonReport.sigma))).toBe(f3);
  });
});

describe('refresh', () => {
  test('keeps the address and {1, 2} signing; an old recovery share is refused; a new enrollment works', () => {
    const { agent, server } = keys();
    const before = enroll(agent, server);
    const pub = agent.reveal().public;
    const oldShare = repairCombine(pub, before.agentReport, before.daemonReport);
    const contributions = { agent: refreshContribution(), daemon: refreshContribution() };
    const agent2 = refreshKeyPackage(agent, contributions);
    const server2 = refreshKeyPackage(server, contributions);
    const pub2 = agent2.reveal().public;
    expect(pub2.commitments[0]).toEqual(pub.commitments[0]);
    expect(samePublicPackage(pub2, server2.reveal().public)).toBe(true);
    expect(agent2.reveal().secret.signingShare).not.toEqual(agent.reveal().secret.signingShare);
    const message = solanaLikeMessage(9);
    const ra = commit(agent2);
    const rs = commit(server2);
    const list = commitmentList(ra.commitments, rs.commitments);
    const sig = aggregate(pub2, list, message, { [AGENT_ID]: signShare(agent2, ra.nonces, list, message), [SERVER_ID]: signShare(server2, rs.nonces, list, message) });
    expect(ed25519Verifies(sig, message, pub2.commitments[0]!)).toBe(true);
    expect(() => ownerKeyPackage(pub2, oldShare)).toThrow(/refreshed since/);
    // An old share signing anyway with a refreshed helper does not make a valid signature.
    const staleOwner = new Secret({ public: pub2, secret: { identifier: OWNER_ID, signingShare: Uint8Array.from(Fn.toBytes(oldShare.reveal())) } });
    expect(() => pairSignature([server2, staleOwner], message)).toThrow(rfc9591.AggregateError);
    const after = enroll(agent2, server2);
    const owner2 = ownerKeyPackage(pub2, repairCombine(pub2, after.agentReport, after.daemonReport));
    expect(ed25519Verifies(pairSignature([agent2, owner2], message), message, pub2.commitments[0]!)).toBe(true);
  });

  test('contributions that cancel out are refused', () => {
    const { agent } = keys();
    const c = refreshContribution();
    expect(() => refreshKeyPackage(agent, { agent: c, daemon: Fn.toBytes(Fn.neg(scalar(c))) })).toThrow(/cancel out/);
  });
});
