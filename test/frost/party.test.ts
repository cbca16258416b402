/** Two-party DKG and signing as the agent's client and the server run them, through the wire formats. */
import { describe, expect, test } from 'bun:test';
import { ed25519, ed25519_FROST } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import {
  AGENT_ID,
  aggregate,
  assertCommitmentList,
  commit,
  commitmentList,
  decodeCommitments,
  decodePublicPackage,
  decodeRound1,
  decodeRound2,
  decodeSecretState,
  decodeSignatureShare,
  dkgRound1,
  dkgRound2,
  dkgRound3,
  encodeCommitments,
  encodePublicPackage,
  encodeRound1,
  encodeRound2,
  encodeSecretState,
  encodeSignatureShare,
  FrostProtocolError,
  open,
  samePublicPackage,
  seal,
  Secret,
  SERVER_ID,
  signShare,
  verifyShare,
} from '../../src/frost/index.ts';
import type { DkgState, PublicPackage, SigningCommitments, SigningNonces } from '../../src/frost/index.ts';
import { dkgPair, overHttp, solanaLikeMessage } from './helpers.ts';

const masterKey = new Uint8Array(32).fill(9);

describe('agent↔server DKG over the wire', () => {
  test('participants are identifiers 1 (agent) and 2 (server), and no other identifier may run the DKG', () => {
    expect(AGENT_ID).toBe(`01${'00'.repeat(31)}`);
    expect(SERVER_ID).toBe(`02${'00'.repeat(31)}`);
    expect(() => dkgRound1(ed25519_FROST.Identifier.fromNumber(3))).toThrow(/not a participant/);
  });

  test('both parties derive the same group key and public package, with the server state sealed between requests', () => {
    // Agent: round 1, sent as dkg_init.
    const agent1 = dkgRound1(AGENT_ID);
    const dkgInit = overHttp({ round1: encodeRound1(agent1.pkg) }) as { round1: unknown };

    // Server: round 1 + round 2, state sealed at rest, packages returned.
    const server1 = dkgRound1(SERVER_ID);
    const agentRound1 = decodeRound1(dkgInit.round1, AGENT_ID);
    const toAgent = dkgRound2(server1.state, agentRound1).forOther;
    const sealedState = seal(masterKey, encodeSecretState(server1.state.reveal()), 'dkg:fr_1');
    const initReply = overHttp({ round1: encodeRound1(server1.pkg), round2: encodeRound2(toAgent) }) as { round1: unknown; round2: unknown };

    // Agent: round 2 + round 3.
    const serverRound1 = decodeRound1(initReply.round1, SERVER_ID);
    const toServer = dkgRound2(agent1.state, serverRound1).forOther;
    const agentKey = dkgRound3(agent1.state, serverRound1, decodeRound2(initReply.round2, SERVER_ID));
    const complete = overHttp({ round2: encodeRound2(toServer) }) as { round2: unknown };

    // Server: reopen its state, round 3, return the public package.
    const state = new Secret(decodeSecretState(open(masterKey, sealedState, 'dkg:fr_1')) as DkgState);
    const serverKey = dkgRound3(state, agentRound1, decodeRound2(complete.round2, AGENT_ID));
    const completeReply = overHttp(encodePublicPackage(serverKey.publicPackage));

    // Agent: the server's public package must equal its own.
    expect(samePublicPackage(agentKey.publicPackage, decodePublicPackage(completeReply))).toBe(true);
    expect(bytesToHex(agentKey.groupKey)).toBe(bytesToHex(serverKey.groupKey));
    expect(agentKey.groupKey.length).toBe(32);
    expect(bytesToHex(agentKey.keyPackage.reveal().secret.signingShare)).not.toBe(bytesToHex(serverKey.keyPackage.reveal().secret.signingShare));
  });

  test('samePublicPackage ignores the order of verifying shares but not their values', () => {
    const { agent, server } = dkgPair();
    const pub = agent.publicPackage;
    const reordered: PublicPackage = { ...pub, verifyingShares: { [SERVER_ID]: pub.verifyingShares[SERVER_ID]!, [AGENT_ID]: pub.verifyingShares[AGENT_ID]! } };
    expect(samePublicPackage(reordered, server.publicPackage)).toBe(true);
    const other = dkgPair().agent.publicPackage;
    expect(samePublicPackage(pub, other)).toBe(false);
    expect(samePublicPackage(pub, { ...pub, verifyingShares: { ...pub.verifyingShares, [AGENT_ID]: other.verifyingShares[AGENT_ID]! } })).toBe(false);
  });

  test('rejects a round-1 package with a bad proof of knowledge', () => {
    const agent1 = dkgRound1(AGENT_ID);
    const server1 = dkgRound1(SERVER_ID);
    const wire = encodeRound1(agent1.pkg);
    const z0 = Number.parseInt(wire.proof_of_knowledge.slice(64, 66), 16) ^ 1;
    wire.proof_of_knowledge = wire.proof_of_knowledge.slice(0, 64) + z0.toString(16).padStart(2, '0') + wire.proof_of_knowledge.slice(66);
    const forged = decodeRound1(overHttp(wire), AGENT_ID);
    expect(() => dkgRound2(server1.state, forged)).toThrow(/agent's round-1 package is refused: invalid proof of knowledge/);
    try {
      dkgRound2(server1.state, forged);
    } catch (err) {
      expect(err).toBeInstanceOf(FrostProtocolError);
      expect((err as FrostProtocolError).culprits).toEqual([AGENT_ID]);
    }
  });

  test('refuses its own round-1 package reflected back under the agent identifier (proofs bind the identifier)', () => {
    const server1 = dkgRound1(SERVER_ID);
    const reflected = decodeRound1(overHttp({ ...encodeRound1(server1.pkg), identifier: AGENT_ID }), AGENT_ID);
    expect(() => dkgRound2(server1.state, reflected)).toThrow(/invalid proof of knowledge/);
  });

  test('refuses a round-1 package that does not come from the other party', () => {
    const agent1 = dkgRound1(AGENT_ID);
    const another = dkgRound1(AGENT_ID);
    expect(() => dkgRound2(agent1.state, another.pkg)).toThrow(/must come from the server/);
  });

  test('rejects a tampered round-2 share', () => {
    const agent1 = dkgRound1(AGENT_ID);
    const server1 = dkgRound1(SERVER_ID);
    dkgRound2(agent1.state, server1.pkg);
    const toAgent = dkgRound2(server1.state, agent1.pkg).forOther;
    const tampered = { ...toAgent, signingShare: toAgent.signingShare.slice() };
    tampered.signingShare[0]! ^= 1;
    expect(() => dkgRound3(agent1.state, server1.pkg, tampered)).toThrow(/server's round-2 share does not match its round-1 commitment/);
    const key = dkgRound3(agent1.state, server1.pkg, toAgent);
    expect(key.groupKey.length).toBe(32);
  });

  test('resumes a DKG from encoded-then-decoded state with the same result', () => {
    const agent1 = dkgRound1(AGENT_ID);
    const server1 = dkgRound1(SERVER_ID);
    const beforeRound2 = encodeSecretState(server1.state.reveal());
    const toAgent = dkgRound2(server1.state, agent1.pkg).forOther;
    const afterRound2 = encodeSecretState(server1.state.reveal());
    const toServer = dkgRound2(agent1.state, server1.pkg).forOther;

    const resumedRound2 = dkgRound2(new Secret(decodeSecretState(beforeRound2) as DkgState), agent1.pkg).forOther;
    expect(bytesToHex(resumedRound2.signingShare)).toBe(bytesToHex(toAgent.signingShare));

    const resumed = dkgRound3(new Secret(decodeSecretState(afterRound2) as DkgState), agent1.pkg, toServer);
    const original = dkgRound3(server1.state, agent1.pkg, toServer);
    expect(bytesToHex(resumed.keyPackage.reveal().secret.signingShare)).toBe(bytesToHex(original.keyPackage.reveal().secret.signingShare));
    expect(samePublicPackage(resumed.publicPackage, original.publicPackage)).toBe(true);
  });
});

describe('agent↔server signing over the wire', () => {
  const { agent, server } = dkgPair();
  const message = solanaLikeMessage();

  function session() {
    const agentRound = commit(agent.keyPackage);
    const serverRound = commit(server.keyPackage);
    const list = commitmentList(agentRound.commitments, serverRound.commitments);
    return { agentRound, serverRound, list };
  }

  test('shares from both parties aggregate into a plain Ed25519 signature under the group key', () => {
    // frost_sign_init: the agent sends its commitments; the server commits and seals its nonces.
    const agentRound = commit(agent.keyPackage);
    const signInit = overHttp({ commitments: encodeCommitments(agentRound.commitments) }) as { commitments: unknown };
    const agentCommitments = decodeCommitments(signInit.commitments, AGENT_ID);
    const serverRound = commit(server.keyPackage);
    const sealedNonces = seal(masterKey, encodeSecretState(serverRound.nonces.reveal()), 'nonce:tx_1');
    const initReply = overHttp({ commitments: encodeCommitments(serverRound.commitments) }) as { commitments: unknown };

    // Agent: builds the same list and signs.
    const agentList = commitmentList(agentRound.commitments, decodeCommitments(initReply.commitments, SERVER_ID));
    const agentShare = signShare(agent.keyPackage, agentRound.nonces, agentList, message);
    const complete = overHttp({ signature_share: encodeSignatureShare(AGENT_ID, agentShare) }) as { signature_share: unknown };

    // frost_sign_complete: the server reopens its nonces, signs, aggregates.
    const serverList = commitmentList(agentCommitments, serverRound.commitments);
    const receivedShare = decodeSignatureShare(complete.signature_share, AGENT_ID);
    expect(verifyShare(server.publicPackage, serverList, message, AGENT_ID, receivedShare)).toBe(true);
    const nonces = new Secret(decodeSecretState(open(masterKey, sealedNonces, 'nonce:tx_1')) as SigningNonces);
    const serverShare = signShare(server.keyPackage, nonces, serverList, message);
    const signature = aggregate(server.publicPackage, serverList, message, { [AGENT_ID]: receivedShare, [SERVER_ID]: serverShare });

    expect(signature.length).toBe(64);
    expect(ed25519.verify(signature, message, server.groupKey, { zip215: false })).toBe(true);
    expect(ed25519_FROST.verify(signature, message, agent.groupKey)).toBe(true);
  });

  test('signing the same message twice gives different signatures, both valid', () => {
    const sigs = [0, 1].map(() => {
      const { agentRound, serverRound, list } = session();
      const shares = {
        [AGENT_ID]: signShare(agent.keyPackage, agentRound.nonces, list, message),
        [SERVER_ID]: signShare(server.keyPackage, serverRound.nonces, list, message),
      };
      return aggregate(server.publicPackage, list, message, shares);
    });
    expect(bytesToHex(sigs[0]!)).not.toBe(bytesToHex(sigs[1]!));
    for (const sig of sigs) expect(ed25519.verify(sig, message, server.groupKey)).toBe(true);
  });

  test('refuses to sign twice with the same nonces', () => {
    const { agentRound, list } = session();
    signShare(agent.keyPackage, agentRound.nonces, list, message);
    expect(() => signShare(agent.keyPackage, agentRound.nonces, list, message)).toThrow(/refusing to sign: signing nonces already used/);
  });

  test('refuses to sign when the list does not carry its own commitments', () => {
    const { agentRound, serverRound } = session();
    const stale = commit(agent.keyPackage);
    const list = commitmentList(stale.commitments, serverRound.commitments);
    expect(() => signShare(agent.keyPackage, agentRound.nonces, list, message)).toThrow(/incorrect signer commitment/);
  });

  test('a share over another message fails verifyShare', () => {
    const { agentRound, list } = session();
    const share = signShare(agent.keyPackage, agentRound.nonces, list, solanaLikeMessage(8));
    expect(verifyShare(server.publicPackage, list, message, AGENT_ID, share)).toBe(false);
    expect(verifyShare(server.publicPackage, list, solanaLikeMessage(8), AGENT_ID, share)).toBe(true);
    expect(verifyShare(server.publicPackage, list, solanaLikeMessage(8), SERVER_ID, share)).toBe(false);
  });

  test('aggregation names the agent as culprit when its share is bad', () => {
    const { agentRound, serverRound, list } = session();
    const badShare = signShare(agent.keyPackage, agentRound.nonces, list, utf8ToBytes('something else'));
    const serverShare = signShare(server.keyPackage, serverRound.nonces, list, message);
    let caught: unknown;
    try {
      aggregate(server.publicPackage, list, message, { [AGENT_ID]: badShare, [SERVER_ID]: serverShare });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(FrostProtocolError);
    expect((caught as FrostProtocolError).message).toBe('invalid signature share from the agent');
    expect((caught as FrostProtocolError).culprits).toEqual([AGENT_ID]);
  });

  test('aggregation refuses a share set that is not exactly {agent, server}', () => {
    const { agentRound, list } = session();
    const share = signShare(agent.keyPackage, agentRound.nonces, list, message);
    expect(() => aggregate(server.publicPackage, list, message, { [AGENT_ID]: share })).toThrow(/exactly one share from the agent and one from the server/);
  });

  describe('commitment lists', () => {
    const third = ed25519_FROST.Identifier.fromNumber(3);
    const identity = hexToBytes('0100000000000000000000000000000000000000000000000000000000000000');
    const smallOrder = hexToBytes('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a');
    const cases: [string, (a: SigningCommitments, s: SigningCommitments) => SigningCommitments[], RegExp][] = [
      ['a third identifier in place of the server', (a, s) => [a, { ...s, identifier: third }], /exactly the agent and the server/],
      ['the agent twice', (a) => [a, a], /exactly the agent and the server, once each/],
      ['only one party', (a) => [a], /exactly the agent and the server/],
      ['three entries', (a, s) => [a, s, s], /exactly the agent and the server/],
      ['an identity hiding commitment', (a, s) => [a, { ...s, hiding: identity }], /server's hiding commitment is the identity point/],
      ['a small-order binding commitment', (a, s) => [{ ...a, binding: smallOrder }, s], /agent's binding commitment is not in the prime-order subgroup/],
    ];
    for (const [name, build, error] of cases) {
      test(`refuses to sign with ${name}, leaving the nonces unused`, () => {
        const { agentRound, serverRound } = session();
        const list = build(agentRound.commitments, serverRound.commitments);
        expect(() => assertCommitmentList(list)).toThrow(error);
        expect(() => signShare(agent.keyPackage, agentRound.nonces, list, message)).toThrow(FrostProtocolError);
        expect(agentRound.nonces.reveal().hiding.some((b) => b !== 0)).toBe(true);
      });
    }

    test('commitmentList refuses commitments whose identifiers are swapped', () => {
      const { agentRound, serverRound } = session();
      expect(() => commitmentList(serverRound.commitments, agentRound.commitments)).toThrow(/agent's commitments carry another identifier/);
    });
  });
});
