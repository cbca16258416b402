/** Strict decoding of every FROST wire package: each malformed input is refused naming its field. */
import { describe, expect, test } from 'bun:test';
import { bytesToHex } from '@noble/hashes/utils.js';
import {
  AGENT_ID,
  commit,
  decodeCommitments,
  decodePublicPackage,
  decodeRound1,
  decodeRound2,
  decodeSignatureShare,
  dkgRound1,
  dkgRound2,
  encodeCommitments,
  encodePublicPackage,
  encodeRound1,
  encodeRound2,
  encodeSignatureShare,
  FrostWireError,
  SERVER_ID,
} from '../../src/frost/index.ts';
import { dkgPair, overHttp } from './helpers.ts';

const IDENTITY = '0100000000000000000000000000000000000000000000000000000000000000';
const SMALL_ORDER = 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a';
const OFF_CURVE = '0200000000000000000000000000000000000000000000000000000000000000';
const NON_CANONICAL = 'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f';
const ABOVE_ORDER = 'edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010';

const { agent } = dkgPair();
const agent1 = dkgRound1(AGENT_ID);
const server1 = dkgRound1(SERVER_ID);
const round1 = encodeRound1(agent1.pkg);
const round2 = encodeRound2(dkgRound2(server1.state, agent1.pkg).forOther);
const publicPackage = encodePublicPackage(agent.publicPackage);
const commitments = encodeCommitments(commit(agent.keyPackage).commitments);
const share = encodeSignatureShare(AGENT_ID, new Uint8Array(32).fill(3));

type Case = [name: string, json: unknown, field: string];

function expectWireError(decode: () => unknown, field: string) {
  let caught: unknown;
  try {
    decode();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(FrostWireError);
  expect((caught as FrostWireError).field).toBe(field);
}

describe('wire round trips', () => {
  test('every package survives encode → JSON → decode unchanged', () => {
    expect(encodeRound1(decodeRound1(overHttp(round1), AGENT_ID))).toEqual(round1);
    expect(encodeRound2(decodeRound2(overHttp(round2), SERVER_ID))).toEqual(round2);
    expect(encodePublicPackage(decodePublicPackage(overHttp(publicPackage)))).toEqual(publicPackage);
    expect(encodeCommitments(decodeCommitments(overHttp(commitments), AGENT_ID))).toEqual(commitments);
    expect(bytesToHex(decodeSignatureShare(overHttp(share), AGENT_ID))).toBe(share.share);
  });

  test('the public package wire names the group key first and lists both verifying shares', () => {
    expect(publicPackage.group_public_key).toBe(bytesToHex(agent.groupKey));
    expect(Object.keys(publicPackage.verifying_shares).sort()).toEqual([AGENT_ID, SERVER_ID].sort());
  });
});

describe('round-1 decoder', () => {
  const cases: Case[] = [
    ['a non-object', [round1], 'round1'],
    ['an extra key', { ...round1, extra: 1 }, 'round1.extra'],
    ['a missing key', { identifier: round1.identifier, commitment: round1.commitment }, 'round1.proof_of_knowledge'],
    ['another identifier', { ...round1, identifier: SERVER_ID }, 'round1.identifier'],
    ['a numeric identifier', { ...round1, identifier: 1 }, 'round1.identifier'],
    ['one commitment point', { ...round1, commitment: [round1.commitment[0]] }, 'round1.commitment'],
    ['a short commitment point', { ...round1, commitment: [round1.commitment[0], round1.commitment[1]!.slice(2)] }, 'round1.commitment[1]'],
    ['non-hex', { ...round1, commitment: [`zz${round1.commitment[0]!.slice(2)}`, round1.commitment[1]] }, 'round1.commitment[0]'],
    ['upper-case hex', { ...round1, commitment: [round1.commitment[0]!.toUpperCase(), round1.commitment[1]] }, 'round1.commitment[0]'],
    ['the identity point', { ...round1, commitment: [IDENTITY, round1.commitment[1]] }, 'round1.commitment[0]'],
    ['a small-order point', { ...round1, commitment: [round1.commitment[0], SMALL_ORDER] }, 'round1.commitment[1]'],
    ['an off-curve point', { ...round1, commitment: [OFF_CURVE, round1.commitment[1]] }, 'round1.commitment[0]'],
    ['a non-canonical point', { ...round1, commitment: [NON_CANONICAL, round1.commitment[1]] }, 'round1.commitment[0]'],
    ['a 63-byte proof', { ...round1, proof_of_knowledge: round1.proof_of_knowledge.slice(2) }, 'round1.proof_of_knowledge'],
    ['a proof with an invalid R', { ...round1, proof_of_knowledge: OFF_CURVE + round1.proof_of_knowledge.slice(64) }, 'round1.proof_of_knowledge'],
    ['a proof with z above the order', { ...round1, proof_of_knowledge: round1.proof_of_knowledge.slice(0, 64) + ABOVE_ORDER }, 'round1.proof_of_knowledge'],
  ];
  for (const [name, json, field] of cases) {
    test(`rejects ${name}, naming ${field}`, () => expectWireError(() => decodeRound1(json, AGENT_ID), field));
  }
});

describe('round-2 decoder', () => {
  const cases: Case[] = [
    ['null', null, 'round2'],
    ['an extra key', { ...round2, recipient: AGENT_ID }, 'round2.recipient'],
    ['another identifier', { ...round2, identifier: AGENT_ID }, 'round2.identifier'],
    ['a 31-byte share', { ...round2, signing_share: round2.signing_share.slice(2) }, 'round2.signing_share'],
    ['a share above the group order', { ...round2, signing_share: ABOVE_ORDER }, 'round2.signing_share'],
    ['a numeric share', { ...round2, signing_share: 5 }, 'round2.signing_share'],
  ];
  for (const [name, json, field] of cases) {
    test(`rejects ${name}, naming ${field}`, () => expectWireError(() => decodeRound2(json, SERVER_ID), field));
  }
});

describe('public package decoder', () => {
  const other = encodePublicPackage(dkgPair().agent.publicPackage);
  const cases: Case[] = [
    ['an extra key', { ...publicPackage, address: 'x' }, 'public_package.address'],
    ['a group key that is not commitments[0]', { ...publicPackage, group_public_key: other.group_public_key }, 'public_package.group_public_key'],
    ['three commitments', { ...publicPackage, commitments: [...publicPackage.commitments, publicPackage.commitments[0]] }, 'public_package.commitments'],
    ['a missing verifying share', { ...publicPackage, verifying_shares: { [AGENT_ID]: publicPackage.verifying_shares[AGENT_ID] } }, `public_package.verifying_shares.${SERVER_ID}`],
    ['a third verifying share', { ...publicPackage, verifying_shares: { ...publicPackage.verifying_shares, [`03${AGENT_ID.slice(2)}`]: IDENTITY } }, `public_package.verifying_shares.03${AGENT_ID.slice(2)}`],
    ['a verifying share of another key', { ...publicPackage, verifying_shares: { ...publicPackage.verifying_shares, [SERVER_ID]: other.verifying_shares[SERVER_ID] } }, `public_package.verifying_shares.${SERVER_ID}`],
    ['swapped verifying shares', { ...publicPackage, verifying_shares: { [AGENT_ID]: publicPackage.verifying_shares[SERVER_ID], [SERVER_ID]: publicPackage.verifying_shares[AGENT_ID] } }, `public_package.verifying_shares.${AGENT_ID}`],
  ];
  for (const [name, json, field] of cases) {
    test(`rejects ${name}, naming ${field}`, () => expectWireError(() => decodePublicPackage(json), field));
  }
});

describe('signing decoders', () => {
  const cases: [string, () => unknown, string][] = [
    ['commitments with an extra key', () => decodeCommitments({ ...commitments, message: '00' }, AGENT_ID), 'commitments.message'],
    ['commitments of another identifier', () => decodeCommitments(commitments, SERVER_ID), 'commitments.identifier'],
    ['an identity hiding commitment', () => decodeCommitments({ ...commitments, hiding: IDENTITY }, AGENT_ID), 'commitments.hiding'],
    ['a small-order binding commitment', () => decodeCommitments({ ...commitments, binding: SMALL_ORDER }, AGENT_ID), 'commitments.binding'],
    ['a share of another identifier', () => decodeSignatureShare(share, SERVER_ID), 'signature_share.identifier'],
    ['a share above the group order', () => decodeSignatureShare({ ...share, share: ABOVE_ORDER }, AGENT_ID), 'signature_share.share'],
    ['a 33-byte share', () => decodeSignatureShare({ ...share, share: `${share.share}00` }, AGENT_ID), 'signature_share.share'],
    ['a share with an extra key', () => decodeSignatureShare({ ...share, identifier2: AGENT_ID }, AGENT_ID), 'signature_share.identifier2'],
  ];
  for (const [name, decode, field] of cases) {
    test(`rejects ${name}, naming ${field}`, () => expectWireError(decode, field));
  }

  test('field paths follow the caller-given location', () => {
    expectWireError(() => decodeCommitments({ ...commitments, hiding: IDENTITY }, AGENT_ID, 'params.commitments'), 'params.commitments.hiding');
  });
});
