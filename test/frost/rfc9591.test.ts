/**
 * Our FROST(Ed25519, SHA-512) signing path (src/frost/rfc9591.ts) is the same protocol as noble's
 * `ed25519_FROST`: the RFC 9591 vectors byte for byte, thousands of seeded cases with identical
 * nonces, commitments, shares and signatures, and every malformed input refused where noble refuses it.
 */
import { describe, expect, test } from 'bun:test';
import { ed25519, ed25519_FROST as noble } from '@noble/curves/ed25519.js';
import type { FrostPublic, FrostSecret, NonceCommitments, Nonces } from '@noble/curves/abstract/frost.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { decodeElement } from '../../src/frost/group.ts';
import * as ours from '../../src/frost/rfc9591.ts';
import { AGENT_ID, commit, decodeCommitments, encodeCommitments, SERVER_ID } from '../../src/frost/index.ts';
import { dkgPair, overHttp, solanaLikeMessage } from './helpers.ts';
import rfc from '../fixtures/frost-ed25519.json';

type Impl = Pick<typeof ours, 'commit' | 'signShare' | 'verifyShare' | 'aggregate'>;
const IMPLS: Record<'noble' | 'ours', Impl> = { noble: noble as unknown as Impl, ours };

const Point = ed25519.Point;

const Fn = Point.Fn;
const id = (n: number) => noble.Identifier.fromNumber(n);

/** A deterministic byte stream: SHA-512 of `seed:counter`, concatenated. */
function seeded(seed: string) {
  let counter = 0;
  let pool = new Uint8Array(0);
  return (n = 32): Uint8Array => {
    const out = new Uint8Array(n);
    for (let filled = 0; filled < n; ) {
      if (pool.length === 0) pool = sha512(utf8ToBytes(`${seed}:${counter++}`));
      const take = Math.min(pool.length, n - filled);
      out.set(pool.subarray(0, take), filled);
      pool = pool.subarray(take);
      filled += take;
    }
    return out;
  };
}

/** An RNG that replays the given chunks in order. */
function replay(...chunks: Uint8Array[]) {
  const queue = [...chunks];
  return (n?: number) => {
    const next = queue.shift();
    if (next === undefined || next.length !== n) throw new Error('unexpected rng call');
    return next.slice();
  };
}

const copyNonces = (n: Nonces): Nonces => ({ hiding: n.hiding.slice(), binding: n.binding.slice() }) as Nonces;

describe('RFC 9591 Appendix E.1 through our path', () => {
  const { inputs } = rfc;
  const message = hexToBytes(inputs.message);
  const shareOf = (n: number) => inputs.participant_shares.find((p) => p.identifier === n)!.participant_share;
  const pointOf = (scalarHex: string) => Point.BASE.multiply(Fn.fromBytes(hexToBytes(scalarHex))).toBytes();
  const pub = {
    signers: { min: 2, max: 3 },
    commitments: [hexToBytes(inputs.verifying_key_key), pointOf(inputs.share_polynomial_coefficients[0]!)],
    verifyingShares: Object.fromEntries([1, 2, 3].map((n) => [id(n), pointOf(shareOf(n))])),
  } as FrostPublic;

  test('nonces, commitments, shares, share checks and the signature match the RFC byte for byte', () => {
    const round1 = rfc.round_one_outputs.outputs.map((o) => {
      const secret = { identifier: id(o.identifier), signingShare: hexToBytes(shareOf(o.identifier)) } as FrostSecret;
      return { o, secret, ...ours.commit(secret, replay(hexToBytes(o.hiding_nonce_randomness), hexToBytes(o.binding_nonce_randomness))) };
    });
    for (const { o, nonces, commitments } of round1) {
      expect([bytesToHex(nonces.hiding), bytesToHex(nonces.binding)]).toEqual([o.hiding_nonce, o.binding_nonce]);
      expect([bytesToHex(commitments.hiding), bytesToHex(commitments.binding)]).toEqual([o.hiding_nonce_commitment, o.binding_nonce_commitment]);
    }
    const list = round1.map((r) => r.commitments);
    const shares: Record<string, Uint8Array> = {};
    for (const { o, secret, nonces } of round1) {
      const share = ours.signShare(secret, pub, nonces, list, message);
      expect(bytesToHex(share)).toBe(rfc.round_two_outputs.outputs.find((s) => s.identifier === o.identifier)!.sig_share);
      expect(ours.verifyShare(pub, list, message, secret.identifier, share)).toBe(true);
      shares[secret.identifier] = share;
    }
    expect(bytesToHex(ours.aggregate(pub, list, message, shares))).toBe(rfc.final_output.sig);
  });
});

describe('differential against noble ed25519_FROST', () => {
  const CASES = 1000;
  const KEYS = 50;
  // noble spends ~10–15 ms signing and aggregating one case (it re-decodes and re-checks every point
  // on every call), so every case compares nonces and commitments and every eighth also the shares,
  // the signature and, every seventh of those, the culprit of a share for another message.
  const SIGNED_EVERY = 8;
  const TAMPERED_EVERY = 7;

  test(`${CASES} seeded cases: identical nonces and commitments; ${CASES / SIGNED_EVERY} also identical shares, signatures and culprits`, () => {
    const rng = seeded('frost-differential');
    const keys = Array.from({ length: KEYS }, () => noble.trustedDealer({ min: 2, max: 2 }, [AGENT_ID, SERVER_ID], undefined, rng));
    let signed = 0;
    let refused = 0;
    for (let i = 0; i < CASES; i++) {
      const key = keys[i % KEYS]!;
      const message = rng(rng(1)[0]! + (i % 3) * 100);
      const secrets = [key.secretShares[AGENT_ID]!, key.secretShares[SERVER_ID]!];
      const randomness = secrets.map(() => [rng(32), rng(32)] as const);
      const sign = i % SIGNED_EVERY === 0;
      const tamper = sign && (i / SIGNED_EVERY) % TAMPERED_EVERY === 3;
      type Outcome = { nonces: string[]; commitments: string[]; shares?: string[]; result?: string };
      const out: Record<string, Outcome> = Object.fromEntries(
        Object.entries(IMPLS).map(([name, impl]): [string, Outcome] => {
          const rounds = secrets.map((s, j) => impl.commit(s, replay(...randomness[j]!)));
          const list: NonceCommitments[] = rounds.map((r) => r.commitments);
          const nonces = rounds.map((r) => bytesToHex(concatBytes(r.nonces.hiding, r.nonces.binding)));
          const commitments = list.map((c) => bytesToHex(concatBytes(c.hiding, c.binding)));
          if (!sign) return [name, { nonces, commitments }];
          const shares = secrets.map((s, j) => impl.signShare(s, key.public, copyNonces(rounds[j]!.nonces), list, message));
          if (tamper) shares[0] = impl.signShare(secrets[0]!, key.public, rounds[0]!.nonces, list, concatBytes(message, Uint8Array.of(1)));
          let result: string;
          try {
            result = bytesToHex(impl.aggregate(key.public, list, message, { [AGENT_ID]: shares[0]!, [SERVER_ID]: shares[1]! }));
          } catch (err) {
            result = `refused, culprits ${(err as { cheaters: string[] }).cheaters.join()}`;
          }
          return [name, { nonces, commitments, shares: shares.map(bytesToHex), result }];
        }),
      );
      expect(out.ours).toEqual(out.noble);
      if (!sign) continue;
      signed++;
      const result = out.ours!.result!;
      if (tamper) {
        expect(result).toBe(`refused, culprits ${AGENT_ID}`);
        refused++;
      } else {
        expect(ed25519.verify(hexToBytes(result), message, key.public.commitments[0]!, { zip215: false })).toBe(true);
      }
    }
    expect([signed, refused]).toEqual([CASES / SIGNED_EVERY, Math.ceil((CASES / SIGNED_EVERY - 3) / TAMPERED_EVERY)]);
  }, 60_000);
});

describe('default nonces (native-ed25519.ts hashedBaseMultiple), checked against noble', () => {
  test('200 commits: fresh canonical nonces, commitments that are noble\'s base multiples of them, shares noble computes alike, signatures noble verifies', () => {
    const rng = seeded('frost-native-nonces');
    const keys = Array.from({ length: 10 }, () => noble.trustedDealer({ min: 2, max: 2 }, [AGENT_ID, SERVER_ID], undefined, rng));
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const key = keys[i % keys.length]!;
      const secrets = [key.secretShares[AGENT_ID]!, key.secretShares[SERVER_ID]!];
      const rounds = secrets.map((s) => ours.commit(s));
      for (const { nonces, commitments } of rounds) {
        for (const [nonce, commitment] of [[nonces.hiding, commitments.hiding], [nonces.binding, commitments.binding]] as const) {
          const scalar = Fn.fromBytes(nonce);
          expect(Fn.is0(scalar)).toBe(false);
          expect(bytesToHex(commitment)).toBe(Point.BASE.multiply(scalar).toHex());
          seen.add(bytesToHex(nonce));
        }
      }
      if (i % 10 !== 0) continue;
      const list = rounds.map((r) => r.commitments);
      const message = rng(40 + i);
      const nobleShares = secrets.map((s, j) => noble.signShare(s, key.public, copyNonces(rounds[j]!.nonces), list, message));
      const shares = secrets.map((s, j) => ours.signShare(s, key.public, rounds[j]!.nonces, list, message));
      expect(shares).toEqual(nobleShares);
      const signature = ours.aggregate(key.public, list, message, { [AGENT_ID]: shares[0]!, [SERVER_ID]: shares[1]! });
      expect(ed25519.verify(signature, message, key.public.commitments[0]!, { zip215: false })).toBe(true);
    }
    expect(seen.size).toBe(800);
  });

  test('two commits with the same secret share draw different nonces (fresh randomness each time)', () => {
    const { server } = dkgPair();
    const secret = server.keyPackage.reveal().secret;
    const a = ours.commit(secret);
    const b = ours.commit(secret);
    expect(bytesToHex(a.nonces.hiding)).not.toBe(bytesToHex(b.nonces.hiding));
    expect(bytesToHex(a.commitments.binding)).not.toBe(bytesToHex(b.commitments.binding));
  });
});

describe('malformed inputs are refused as noble refuses them', () => {
  const rng = seeded('frost-malformed');
  const key = noble.trustedDealer({ min: 2, max: 2 }, [AGENT_ID, SERVER_ID], undefined, rng);
  const agentSecret = key.secretShares[AGENT_ID]!;
  const serverSecret = key.secretShares[SERVER_ID]!;
  const message = solanaLikeMessage(3);
  const L = Fn.ORDER;
  const le = (n: bigint): Uint8Array<ArrayBuffer> => {
    const out = new Uint8Array(32);
    for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
    return out;
  };
  const ORDER_8 = '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05';
  const BAD_POINTS: Record<string, Uint8Array<ArrayBuffer>> = {
    'the identity': Uint8Array.from(Point.ZERO.toBytes()),
    'a small-order point (order 2)': Uint8Array.from(hexToBytes('ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f')),
    'a small-order point (order 4)': Uint8Array.from(hexToBytes('0000000000000000000000000000000000000000000000000000000000000000')),
    'a small-order point (order 8)': Uint8Array.from(hexToBytes(ORDER_8)),
    'a mixed-torsion point (valid + order 8)': Uint8Array.from(Point.BASE.multiply(12345n).add(Point.fromHex(ORDER_8)).toBytes()),
    'a non-canonical encoding (y = p + 1)': Uint8Array.from(le(2n ** 255n - 19n + 1n)),
    'a non-canonical encoding (x = 0 with the sign bit set)': Uint8Array.from(hexToBytes('0100000000000000000000000000000000000000000000000000000000000080')),
    'not a curve point': Uint8Array.from(hexToBytes('0200000000000000000000000000000000000000000000000000000000000000')),
  };
  const BAD_SCALARS: Record<string, Uint8Array<ArrayBuffer>> = { 'L': le(L), 'L + 1': le(L + 1n), '2^256 - 1': le(2n ** 256n - 1n) };

  type Outcome = 'ok' | 'false' | 'throws';
  function outcome(run: () => unknown): Outcome {
    try {
      return run() === false ? 'false' : 'ok';
    } catch {
      return 'throws';
    }
  }

  /** A fresh honest session from `impl`: both parties' nonces, the list, and both shares. */
  function honest(impl: Impl, msg = message) {
    const a = impl.commit(agentSecret);
    const s = impl.commit(serverSecret);
    const list = [a.commitments, s.commitments];
    const sNonces = copyNonces(s.nonces);
    const agentShare = impl.signShare(agentSecret, key.public, copyNonces(a.nonces), list, msg);
    const serverShare = impl.signShare(serverSecret, key.public, sNonces, list, msg);
    return { a, s, list, agentShare, serverShare };
  }

  const rows: [string, (impl: Impl) => unknown][] = [];
  for (const [name, bad] of Object.entries(BAD_POINTS)) {
    rows.push([`${name} as the agent's hiding commitment, when the server signs`, (impl) => {
      const s = impl.commit(serverSecret);
      return impl.signShare(serverSecret, key.public, s.nonces, [{ identifier: AGENT_ID, hiding: bad, binding: s.commitments.binding }, s.commitments], message);
    }]);
    rows.push([`${name} as the agent's binding commitment, in verifyShare`, (impl) => {
      const h = honest(impl);
      return impl.verifyShare(key.public, [{ ...h.a.commitments, binding: bad }, h.s.commitments], message, AGENT_ID, h.agentShare);
    }]);
    rows.push([`${name} as the agent's hiding commitment, in aggregate`, (impl) => {
      const h = honest(impl);
      return impl.aggregate(key.public, [{ ...h.a.commitments, hiding: bad }, h.s.commitments], message, { [AGENT_ID]: h.agentShare, [SERVER_ID]: h.serverShare });
    }]);
    rows.push([`${name} as the group key`, (impl) => {
      const s = impl.commit(serverSecret);
      const a = impl.commit(agentSecret);
      return impl.signShare(serverSecret, { ...key.public, commitments: [bad, key.public.commitments[1]!] }, s.nonces, [a.commitments, s.commitments], message);
    }]);
    rows.push([`${name} as the agent's verifying share`, (impl) => {
      const h = honest(impl);
      return impl.verifyShare({ ...key.public, verifyingShares: { ...key.public.verifyingShares, [AGENT_ID]: bad } }, h.list, message, AGENT_ID, h.agentShare);
    }]);
  }
  for (const [name, bad] of Object.entries(BAD_SCALARS)) {
    rows.push([`a signature share of ${name}, in verifyShare`, (impl) => impl.verifyShare(key.public, honest(impl).list, message, AGENT_ID, bad)]);
    rows.push([`a signature share of ${name}, in aggregate`, (impl) => {
      const h = honest(impl);
      return impl.aggregate(key.public, h.list, message, { [AGENT_ID]: bad, [SERVER_ID]: h.serverShare });
    }]);
    rows.push([`a hiding nonce of ${name}`, (impl) => {
      const s = impl.commit(serverSecret);
      const a = impl.commit(agentSecret);
      return impl.signShare(serverSecret, key.public, { hiding: bad, binding: s.nonces.binding } as Nonces, [a.commitments, s.commitments], message);
    }]);
    rows.push([`a signing share of ${name}`, (impl) => impl.commit({ identifier: SERVER_ID, signingShare: bad } as FrostSecret)]);
  }
  rows.push(["a share for another message, in verifyShare", (impl) => {
    const h = honest(impl, concatBytes(message, Uint8Array.of(0)));
    return impl.verifyShare(key.public, h.list, message, AGENT_ID, h.agentShare);
  }]);
  rows.push(["a share replayed from an earlier session over the same message, in verifyShare", (impl) => {
    const earlier = honest(impl);
    return impl.verifyShare(key.public, honest(impl).list, message, AGENT_ID, earlier.agentShare);
  }]);
  rows.push(["a share replayed from an earlier session, in aggregate", (impl) => {
    const earlier = honest(impl);
    const now = honest(impl);
    return impl.aggregate(key.public, now.list, message, { [AGENT_ID]: earlier.agentShare, [SERVER_ID]: now.serverShare });
  }]);
  rows.push(['consumed nonces, signing a second time', (impl) => {
    const s = impl.commit(serverSecret);
    const a = impl.commit(agentSecret);
    const list = [a.commitments, s.commitments];
    impl.signShare(serverSecret, key.public, s.nonces, list, message);
    return impl.signShare(serverSecret, key.public, s.nonces, list, message);
  }]);
  rows.push(["another signer's commitments in place of the server's own", (impl) => {
    const s = impl.commit(serverSecret);
    const other = impl.commit(serverSecret);
    return impl.signShare(serverSecret, key.public, s.nonces, [impl.commit(agentSecret).commitments, other.commitments], message);
  }]);
  rows.push(['a commitment list missing the signer', (impl) => {
    const s = impl.commit(serverSecret);
    const a = impl.commit(agentSecret);
    return impl.signShare(serverSecret, key.public, s.nonces, [a.commitments, { ...a.commitments, identifier: id(3) }], message);
  }]);
  rows.push(['a commitment list of one signer', (impl) => {
    const s = impl.commit(serverSecret);
    return impl.signShare(serverSecret, key.public, s.nonces, [s.commitments], message);
  }]);
  rows.push(['the same signer twice, in aggregate', (impl) => {
    const h = honest(impl);
    return impl.aggregate(key.public, [h.a.commitments, h.a.commitments], message, { [AGENT_ID]: h.agentShare });
  }]);

  test.each(rows)('%s', (_name, run) => {
    const got = { noble: outcome(() => run(IMPLS.noble)), ours: outcome(() => run(IMPLS.ours)) };
    expect(got.ours).not.toBe('ok');
    expect(got.ours).toBe(got.noble);
  });

  test('a replayed share names the agent as the culprit in both', () => {
    const culprits = Object.values(IMPLS).map((impl) => {
      const earlier = honest(impl);
      const now = honest(impl);
      try {
        impl.aggregate(key.public, now.list, message, { [AGENT_ID]: earlier.agentShare, [SERVER_ID]: now.serverShare });
      } catch (err) {
        return (err as { cheaters: string[] }).cheaters;
      }
      return null;
    });
    expect(culprits).toEqual([[AGENT_ID], [AGENT_ID]]);
  });
});

describe('cost: each element is decoded and subgroup-checked once', () => {
  test('a second decoding of an encoding returns the point the first one validated', () => {
    const bytes = Point.BASE.multiply(987654321n).toBytes();
    const first = decodeElement(bytes);
    expect(decodeElement(Uint8Array.from(bytes))).toBe(first);
    expect(decodeElement(hexToBytes(bytesToHex(bytes)))).toBe(first);
  });

  test('our own commitments are known valid from the moment they are computed', () => {
    const { server } = dkgPair();
    const { commitments } = commit(server.keyPackage);
    const again = decodeCommitments(overHttp(encodeCommitments(commitments)), SERVER_ID);
    expect(decodeElement(again.hiding)).toBe(decodeElement(commitments.hiding));
    expect(decodeElement(again.binding)).toBe(decodeElement(commitments.binding));
  });

  test('a refused encoding is refused again, never remembered', () => {
    const mixed = Point.BASE.multiply(5n).add(Point.fromHex('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05')).toBytes();
    expect(() => decodeElement(mixed)).toThrow(/not in the prime-order subgroup/);
    expect(() => decodeElement(mixed)).toThrow(/not in the prime-order subgroup/);
  });
});
