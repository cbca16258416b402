/**
 * The daemon's two secret files in the data directory: the master key (AES-256-GCM key that
 * seals server shares, DKG state and nonces) and the operator's fee-payer keypair (pays SOL
 * fees and rent). Generated on first start with mode 0600; start is refused when either is
 * readable by group or others, as ssh refuses a loose private key.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { chmodSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { getAddressDecoder, type Address } from '@solana/kit';

/** Thrown when a secret file is unusable; the message names the file and the fix. */
export class SecretFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretFileError';
  }
}

function writeNew(path: string, data: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

function readPrivate(path: string): string {
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new SecretFileError(
      `${path} has mode 0${mode.toString(8)} and is readable by group or others; run "chmod 600 ${path}" and start again`,
    );
  }
  return readFileSync(path, 'utf8');
}

/** Loads (or on first start creates) `<dataDir>/master.key`: 32 random bytes, hex. */
export function loadMasterKey(dataDir: string): Uint8Array {
  const path = join(dataDir, 'master.key');
  if (!existsSync(path)) writeNew(path, `${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}\n`);
  const hex = readPrivate(path).trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new SecretFileError(`${path} must hold 64 hex characters (a 32-byte key)`);
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** The operator's fee payer: the 64-byte Solana CLI keypair (seed ‖ public key) and its address. */
export interface FeePayerKey {
  keypairBytes: Uint8Array;
  address: Address;
}

/** Loads (or on first start creates) the fee-payer keypair file in Solana CLI JSON format. */
export function loadFeePayer(dataDir: string, file: string): FeePayerKey {
  const path = isAbsolute(file) ? file : join(dataDir, file);
  if (!existsSync(path)) {
    const seed = ed25519.utils.randomSecretKey();
    const bytes = new Uint8Array([...seed, ...ed25519.getPublicKey(seed)]);
    writeNew(path, `${JSON.stringify(Array.from(bytes))}\n`);
  }
  return readKeypairFile(path);
}

/** Reads an existing Solana CLI keypair file (JSON array of 64 numbers, not readable by others); never creates one. */
export function readKeypairFile(path: string): FeePayerKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readPrivate(path));
  } catch (err) {
    if (err instanceof SecretFileError) throw err;
    throw new SecretFileError(`${path} is not a Solana keypair file (a JSON array of 64 numbers)`);
  }
  if (!Array.isArray(parsed) || parsed.length !== 64 || !parsed.every((n) => Number.isInteger(n) && n >= 0 && n < 256)) {
    throw new SecretFileError(`${path} is not a Solana keypair file (a JSON array of 64 numbers)`);
  }
  const keypairBytes = new Uint8Array(parsed as number[]);
  const derived = ed25519.getPublicKey(keypairBytes.subarray(0, 32));
  if (!derived.every((b, i) => b === keypairBytes[32 + i])) throw new SecretFileError(`${path}: the public half does not match the secret half`);
  return { keypairBytes, address: getAddressDecoder().decode(derived) };
}
