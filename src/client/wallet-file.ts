/**
 * The `.wlt` wallet export file (DESIGN §4). The profile (agent key share and API key) is
 * encrypted under a fresh key K that only the server holds, released by wallet_import_key at
 * most 5 times a day and revocable. Every header field is bound as AES-GCM associated data, so a
 * file whose header was edited does not decrypt. The server's share never leaves the server.
 */
import { open, seal } from '../frost/seal.ts';
import { SealError } from '../frost/errors.ts';
import type { ApiClient } from './api.ts';
import type { ProfileData } from './profile.ts';

export const WLT_FORMAT = 'agent-wallet-export';

export interface WalletFileHeader {
  format: typeof WLT_FORMAT;
  version: 1;
  export_id: string;
  import_token: string;
  server_url: string;
  wallet_id: string;
  address: string;
  created_at: string;
}

export interface WalletFile extends WalletFileHeader {
  sealed: string;
}

export class WalletFileError extends Error {
  override readonly name = 'WalletFileError';
}

function aad(h: WalletFileHeader): string {
  return JSON.stringify([h.format, h.version, h.export_id, h.import_token, h.server_url, h.wallet_id, h.address, h.created_at]);
}

/** Asks the server for a fresh file key and builds the encrypted file content. */
export async function exportWallet(api: ApiClient, profile: ProfileData): Promise<WalletFile> {
  const res = await api.call<{ export_id: string; import_token: string; file_key: string }>('bot', 'wallet_export');
  const header: WalletFileHeader = {
    format: WLT_FORMAT,
    version: 1,
    export_id: res.export_id,
    import_token: res.import_token,
    server_url: profile.server_url,
    wallet_id: profile.wallet_id,
    address: profile.address,
    created_at: new Date().toISOString(),
  };
  const sealed = seal(Buffer.from(res.file_key, 'base64'), new TextEncoder().encode(JSON.stringify(profile)), aad(header));
  return { ...header, sealed: Buffer.from(sealed).toString('base64') };
}

/** Parses a file's JSON and checks its header shape. */
export function parseWalletFile(text: string): WalletFile {
  let f: Partial<WalletFile>;
  try {
    f = JSON.parse(text) as Partial<WalletFile>;
  } catch {
    throw new WalletFileError('not a .wlt file (not JSON)');
  }
  if (f.format !== WLT_FORMAT || f.version !== 1) throw new WalletFileError('not an agent-wallet export file (format/version)');
  for (const k of ['export_id', 'import_token', 'server_url', 'wallet_id', 'address', 'created_at', 'sealed'] as const) {
    if (typeof f[k] !== 'string') throw new WalletFileError(`the file has no ${k}`);
  }
  return f as WalletFile;
}

/** Fetches the file key from the server (one of its 5 daily releases) and decrypts the profile. */
export async function importWallet(api: ApiClient, file: WalletFile): Promise<ProfileData> {
  const res = await api.call<{ file_key: string; wallet_id: string }>('bot', 'wallet_import_key', { export_id: file.export_id, import_token: file.import_token });
  if (res.wallet_id !== file.wallet_id) throw new WalletFileError('the file header names another wallet than its export; refused');
  const { sealed, ...header } = file;
  let plain: Uint8Array;
  try {
    plain = open(Buffer.from(res.file_key, 'base64'), Buffer.from(sealed, 'base64'), aad(header));
  } catch (err) {
    if (err instanceof SealError) throw new WalletFileError('the file was modified (its header or content does not match what was exported); refused');
    throw err;
  }
  const profile = JSON.parse(new TextDecoder().decode(plain)) as ProfileData;
  if (profile.wallet_id !== file.wallet_id || profile.address !== file.address) throw new WalletFileError('the file content does not match its header; refused');
  return profile;
}
