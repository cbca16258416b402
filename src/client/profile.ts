/**
 * The agent's profile store: one file per wallet under AGENT_WALLET_HOME (default
 * ~/.agent-wallet, mode 0700), each 0600, written atomically (temp file, fsync, rename) so a
 * crash never leaves half a key. With AGENT_WALLET_PASSPHRASE set, the file content is sealed
 * with a key derived by scrypt.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, writeSync, chmodSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { scryptSync } from 'node:crypto';
import { open as openSealed, seal } from '../frost/seal.ts';
import type { PublicPackageWire } from '../frost/wire.ts';
import type { Pins } from './custody.ts';
import { withFileLock } from './file-lock.ts';

/** What a profile holds. `key_package` and `api_key` are secrets. */
export interface ProfileData {
  version: 1;
  server_url: string;
  wallet_id: string;
  username: string;
  address: string;
  network: string;
  api_key: string;
  /** The agent's FROST key package, encoded with encodeSecretState, base64. */
  key_package: string;
  public_package: PublicPackageWire;
  created_at: string;
  /** What the agent pinned (src/client/custody.ts); absent in profiles made before pins, added on first use. */
  custody?: Pins;
  /**
   * A key refresh begun and not yet known to be committed (src/client/recovery-refresh.ts): the
   * refreshed key package, base64, beside the active one, and the bot API key the commit makes the
   * wallet's (absent in refreshes begun before keys rotated with them).
   */
  pending_refresh?: { refresh_id: string; key_package: string; public_package: PublicPackageWire; api_key?: string };
}

export class ProfileError extends Error {
  override readonly name = 'ProfileError';
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

export function defaultHome(env: Record<string, string | undefined> = process.env): string {
  return env.AGENT_WALLET_HOME || join(homedir(), '.agent-wallet');
}

export class ProfileStore {
  /**
   * The last salt and scrypt key this store derived: a rewrite after a load (pins changed) reuses
   * them instead of paying scrypt again; each seal still draws a fresh random nonce.
   */
  private derived: { salt: Uint8Array; key: Uint8Array } | null = null;

  constructor(
    readonly home: string,
    private readonly passphrase?: string,
  ) {}

  path(name: string): string {
    if (!NAME.test(name)) throw new ProfileError(`profile name "${name}" must be 1–64 of letters, digits, ".", "_" and "-"`);
    return join(this.home, `${name}.json`);
  }

  exists(name: string): boolean {
    return existsSync(this.path(name));
  }

  list(): string[] {
    if (!existsSync(this.home)) return [];
    return readdirSync(this.home)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -5))
      .sort();
  }

  /** Writes a profile atomically; refuses to overwrite unless `overwrite`. */
  save(name: string, data: ProfileData, opts: { overwrite?: boolean } = {}): string {
    const path = this.path(name);
    if (!opts.overwrite && existsSync(path)) throw new ProfileError(`profile "${name}" already exists at ${path}; choose another with --profile NAME`);
    mkdirSync(this.home, { recursive: true, mode: 0o700 });
    chmodSync(this.home, 0o700);
    const content = this.passphrase ? JSON.stringify(this.encrypt(data)) : JSON.stringify(data, null, 2);
    const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, `${content}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    return path;
  }

  /**
   * Changes a profile another process may be changing too: under the profile's lock, reads the
   * file as it is now, applies `change` and writes it back, so each writer's change lands on the
   * other's (a pin or an intent is never lost to a stale copy). Returns what was written.
   */
  update(name: string, change: (profile: ProfileData) => void): ProfileData {
    return withFileLock(this.path(name), () => {
      const fresh = this.load(name);
      change(fresh);
      this.save(name, fresh, { overwrite: true });
      return fresh;
    });
  }

  load(name: string): ProfileData {
    const path = this.path(name);
    if (!existsSync(path)) throw new ProfileError(`no profile "${name}" in ${this.home}; run "agent-wallet register --name …" or pass --profile`);
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    if ('encrypted' in parsed) return this.decrypt(parsed.encrypted as Record<string, string>, path);
    if (parsed.version !== 1) throw new ProfileError(`${path}: unknown profile version ${String(parsed.version)}`);
    return parsed as unknown as ProfileData;
  }

  private key(salt: Uint8Array): Uint8Array {
    if (this.derived && Buffer.compare(this.derived.salt, salt) === 0) return this.derived.key;
    const key = new Uint8Array(scryptSync(this.passphrase ?? '', salt, 32, SCRYPT));
    this.derived = { salt, key };
    return key;
  }

  private encrypt(data: ProfileData) {
    const salt = this.derived?.salt ?? crypto.getRandomValues(new Uint8Array(16));
    const sealed = seal(this.key(salt), new TextEncoder().encode(JSON.stringify(data)), 'agent-wallet-profile-v1');
    return { version: 1, encrypted: { kdf: 'scrypt', n: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p, salt: Buffer.from(salt).toString('base64'), sealed: Buffer.from(sealed).toString('base64') } };
  }

  private decrypt(enc: Record<string, string>, path: string): ProfileData {
    if (!this.passphrase) throw new ProfileError(`${path} is encrypted; set AGENT_WALLET_PASSPHRASE`);
    try {
      const plain = openSealed(this.key(new Uint8Array(Buffer.from(enc.salt ?? '', 'base64'))), Buffer.from(enc.sealed ?? '', 'base64'), 'agent-wallet-profile-v1');
      return JSON.parse(new TextDecoder().decode(plain)) as ProfileData;
    } catch {
      throw new ProfileError(`${path}: wrong AGENT_WALLET_PASSPHRASE or a damaged file`);
    }
  }
}
