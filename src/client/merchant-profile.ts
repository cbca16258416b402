/**
 * Merchant profiles of the command-line client: `<home>/merchants/<name>.json`, beside the agent
 * profiles and kept the same way (directory 0700, file 0600, written atomically). A merchant
 * profile holds the merchant API key — a secret — and never a key share (merchants do not sign).
 */
import { chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ProfileError } from './profile.ts';

/** What a merchant profile holds; `api_key` is the secret. */
export interface MerchantProfile {
  version: 1;
  server_url: string;
  merchant_id: string;
  username: string;
  name: string;
  payout_address: string;
  api_key: string;
  created_at: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class MerchantProfileStore {
  /** `home` is the client home (AGENT_WALLET_HOME); profiles live in its `merchants/` directory. */
  constructor(readonly home: string) {}

  get dir(): string {
    return join(this.home, 'merchants');
  }

  path(name: string): string {
    if (!NAME.test(name)) throw new ProfileError(`profile name "${name}" must be 1–64 of letters, digits, ".", "_" and "-"`);
    return join(this.dir, `${name}.json`);
  }

  exists(name: string): boolean {
    return existsSync(this.path(name));
  }

  /** Writes a profile atomically (temp file, fsync, rename); refuses to overwrite. */
  save(name: string, data: MerchantProfile): string {
    const path = this.path(name);
    if (existsSync(path)) throw new ProfileError(`merchant profile "${name}" already exists at ${path}; choose another with --profile NAME`);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.home, 0o700);
    chmodSync(this.dir, 0o700);
    const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(data, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    return path;
  }

  load(name: string): MerchantProfile {
    const path = this.path(name);
    if (!existsSync(path)) throw new ProfileError(`no merchant profile "${name}" in ${this.dir}; run "agent-wallet merchant register …" or pass --profile`);
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    if (parsed.version !== 1 || typeof parsed.api_key !== 'string') throw new ProfileError(`${path}: not a merchant profile (version 1)`);
    return parsed as unknown as MerchantProfile;
  }
}
