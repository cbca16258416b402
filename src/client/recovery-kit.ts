/**
 * The owner's recovery kit (DESIGN §4.1): `{wallet_id, address, the key's public commitment,
 * identifier 3, the share}` with the share sealed under a passphrase (scrypt → AES-256-GCM, the
 * wallet id as associated data, so a kit's sealed share pasted into another wallet's kit does not
 * open), and a fingerprint the dashboard shows for the enrollment. Written 0600, atomically.
 */
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { getBase58Encoder } from '@solana/kit';
import { scryptSync } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { SealError } from '../frost/errors.ts';
import { AGENT_ID, SERVER_ID } from '../frost/ids.ts';
import { ownerKeyPackage, recoveryFingerprint } from '../frost/recovery-share.ts';
import { open, seal } from '../frost/seal.ts';
import { Secret } from '../frost/secret.ts';
import type { KeyPackage, PublicPackage } from '../frost/types.ts';
import { verifyingShareFor } from '../frost/group.ts';

const Fn = ed25519.Point.Fn;
const SCRYPT = { N: 1 << 17, r: 8, p: 1, maxmem: 256 * 1024 * 1024 };
export const KIT_KIND = 'agent-wallet-recovery-kit';

export interface RecoveryKit {
  kind: typeof KIT_KIND;
  version: 1;
  wallet_id: string;
  address: string;
  /** The key's VSS commitment (C0 is the group key = the address), hex. */
  commitments: [string, string];
  identifier: 3;
  fingerprint: string;
  created_at: string;
  sealed: { kdf: 'scrypt'; n: number; r: number; p: number; salt: string; share: string };
}

export class KitError extends Error {
  override readonly name = 'KitError';
}

const aadOf = (walletId: string) => `agent-wallet recovery kit v1|${walletId}`;

function keyOf(passphrase: string, salt: Uint8Array, n: number, r: number, p: number): Uint8Array {
  if (passphrase.length < 12) throw new KitError('the kit passphrase must be at least 12 characters');
  return new Uint8Array(scryptSync(passphrase, salt, 32, { N: n, r, p, maxmem: SCRYPT.maxmem }));
}

/** The public package a kit's commitment implies (both helpers' verifying shares derived from it). */
export function kitPublicPackage(kit: Pick<RecoveryKit, 'commitments'>): PublicPackage {
  const commitments = kit.commitments.map((c) => Uint8Array.from(hexToBytes(c)));
  return {
    signers: { min: 2, max: 2 },
    commitments,
    verifyingShares: { [AGENT_ID]: Uint8Array.from(verifyingShareFor(commitments, AGENT_ID)), [SERVER_ID]: Uint8Array.from(verifyingShareFor(commitments, SERVER_ID)) },
  };
}

/** Seals a freshly combined share into a kit. */
export function makeKit(p: { walletId: string; address: string; pub: PublicPackage; share: Secret<bigint>; passphrase: string; now: Date }): RecoveryKit {
  ownerKeyPackage(p.pub, p.share);
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const key = keyOf(p.passphrase, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p);
  const sealed = seal(key, Fn.toBytes(p.share.reveal()), aadOf(p.walletId));
  key.fill(0);
  return {
    kind: KIT_KIND,
    version: 1,
    wallet_id: p.walletId,
    address: p.address,
    commitments: [bytesToHex(p.pub.commitments[0]!), bytesToHex(p.pub.commitments[1]!)],
    identifier: 3,
    fingerprint: recoveryFingerprint(p.walletId, p.pub),
    created_at: p.now.toISOString(),
    sealed: { kdf: 'scrypt', n: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p, salt: Buffer.from(salt).toString('base64'), share: Buffer.from(sealed).toString('base64') },
  };
}

/** Opens a kit: the owner's key package (identifier 3), checked against the kit's own commitment. */
export function openKit(kit: RecoveryKit, passphrase: string): Secret<KeyPackage> {
  if (kit.kind !== KIT_KIND || kit.version !== 1 || kit.identifier !== 3) throw new KitError('not an agent-wallet recovery kit (version 1)');
  const s = kit.sealed;
  const key = keyOf(passphrase, new Uint8Array(Buffer.from(s.salt, 'base64')), s.n, s.r, s.p);
  let share: Uint8Array;
  try {
    share = open(key, new Uint8Array(Buffer.from(s.share, 'base64')), aadOf(kit.wallet_id));
  } catch (err) {
    throw err instanceof SealError ? new KitError('the kit does not open: wrong passphrase, or the file was changed') : err;
  } finally {
    key.fill(0);
  }
  const pub = kitPublicPackage(kit);
  if (bytesToHex(pub.commitments[0]!) !== bytesToHex(addressBytes(kit.address))) throw new KitError("the kit's address is not its key's group key");
  return ownerKeyPackage(pub, new Secret(Fn.fromBytes(share)));
}

function addressBytes(address: string): Uint8Array {
  try {
    return new Uint8Array(getBase58Encoder().encode(address));
  } catch {
    throw new KitError("the kit's address is not base58");
  }
}

/** Writes a kit 0600 (never over an existing file), atomically. */
export function writeKit(path: string, kit: RecoveryKit): void {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(kit, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    // A hard link fails when the name is taken: a kit is never written over another.
    linkSync(tmp, path);
  } catch {
    throw new KitError(`${path} already exists; choose another --out`);
  } finally {
    unlinkSync(tmp);
  }
}

export function readKit(path: string): RecoveryKit {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as RecoveryKit;
  } catch (err) {
    throw new KitError(`cannot read the kit ${path}: ${(err as Error).message}`);
  }
}
