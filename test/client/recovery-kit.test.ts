/** The owner's recovery kit: sealed under a passphrase for one wallet, opened into identifier 3 of the same key. */
import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { statSync } from 'node:fs';
import { getBase58Decoder } from '@solana/kit';
import { ed25519 } from '@noble/curves/ed25519.js';
import { makeKit, openKit, readKit, writeKit } from '../../src/client/recovery-kit.ts';
import { OWNER_ID, recoveryFingerprint, repairCombine, repairSplit, repairSum } from '../../src/frost/recovery-share.ts';
import { dkgPair } from '../frost/helpers.ts';
import { tempDir } from '../helpers/services.ts';

function enrolled() {
  const { agent, server } = dkgPair();
  const a = repairSplit(agent.keyPackage);
  const d = repairSplit(server.keyPackage);
  const pub = agent.publicPackage;
  const share = repairCombine(pub, repairSum(a, d.forOther, 'daemon'), repairSum(d, a.forOther, 'agent'));
  return { pub, share, address: getBase58Decoder().decode(pub.commitments[0]!) };
}

test('a kit written 0600 opens with its passphrase into the owner key package; a wrong passphrase, another wallet id or an existing file is refused', () => {
  const { pub, share, address } = enrolled();
  const kit = makeKit({ walletId: 'wal_1', address, pub, share, passphrase: 'correct horse battery', now: new Date() });
  expect(kit.fingerprint).toBe(recoveryFingerprint('wal_1', pub));
  const path = join(tempDir('aw-kit-'), 'kit.json');
  writeKit(path, kit);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(() => writeKit(path, kit)).toThrow(/already exists/);
  const key = openKit(readKit(path), 'correct horse battery').reveal();
  expect(key.secret.identifier).toBe(OWNER_ID);
  expect(ed25519.Point.BASE.multiply(ed25519.Point.Fn.fromBytes(key.secret.signingShare)).toBytes()).toEqual(key.public.verifyingShares[OWNER_ID]!);
  expect(() => openKit(kit, 'wrong horse battery')).toThrow(/does not open/);
  expect(() => openKit({ ...kit, wallet_id: 'wal_2' }, 'correct horse battery')).toThrow(/does not open/);
  expect(() => makeKit({ walletId: 'wal_1', address, pub, share, passphrase: 'short', now: new Date() })).toThrow(/12 characters/);
});

test("a kit whose commitment was swapped for another key's is refused", () => {
  const one = enrolled();
  const two = enrolled();
  const kit = makeKit({ walletId: 'wal_1', address: one.address, pub: one.pub, share: one.share, passphrase: 'correct horse battery', now: new Date() });
  const swapped = { ...kit, commitments: [Buffer.from(two.pub.commitments[0]!).toString('hex'), Buffer.from(two.pub.commitments[1]!).toString('hex')] as [string, string] };
  expect(() => openKit(swapped, 'correct horse battery')).toThrow();
});
