/**
 * `admin backup` and `admin restore`: everything a data directory needs to come back (the ledger
 * as an online SQLite snapshot, config.toml, master.key, fee-payer.json, simnet state) with a
 * manifest of SHA-256 sums, optionally sealed under a passphrase (AES-256-GCM, scrypt key).
 * Restore checks every sum before it writes anything, refuses a non-empty target, runs
 * integrity_check and marks the ledger restored for the daemon's first start (after-restore.ts).
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { checkAndMarkRestored, markRestored, snapshotDatabase } from '../db/backup.ts';
import { pgRunningNodes } from '../db/node-locks.ts';
import { openLedger } from '../db/ledger.ts';
import { SCHEMA_VERSION } from '../db/open.ts';
import type { Config } from '../config.ts';

export const BACKUP_FORMAT = 'agent-wallet-backup/1';

export interface ManifestFile {
  /** Where the file goes in the data directory. */
  path: string;
  /** sha256 of the bytes stored in the backup (sealed bytes when encrypted). */
  sha256: string;
  bytes: number;
}

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  schema_version: number;
  network: string;
  created_at: string;
  encryption: null | { cipher: 'aes-256-gcm'; kdf: 'scrypt'; salt: string; n: number; r: number; p: number };
  files: ManifestFile[];
  /** Encrypted backups: HMAC-SHA256 of the rest of the manifest under a key from the passphrase, so a manifest edited or swapped is refused. */
  mac?: string;
}

/** A backup or restore that cannot go ahead; the message names the file or the fix. */
export class BackupError extends Error {
  override readonly name = 'BackupError';
}

const SCRYPT = { n: 1 << 15, r: 8, p: 1 };
/** The only files a backup may restore: a manifest naming anything else (../, other paths) is refused. */
const KNOWN_FILES = new Set(['wallet.db', 'config.toml', 'master.key', 'fee-payer.json', 'simnet/state.bin']);

function keyOf(passphrase: string, salt: Buffer, params: { n: number; r: number; p: number } = SCRYPT): Buffer {
  return scryptSync(passphrase, salt, 32, { N: params.n, r: params.r, p: params.p, maxmem: 64 * 1024 * 1024 });
}

/** nonce (12) ‖ ciphertext ‖ tag (16); the file's path is the associated data, so files cannot be swapped. */
function seal(key: Buffer, path: string, plain: Buffer): Buffer {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(path));
  return Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

function open(key: Buffer, path: string, sealed: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(path));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
  } catch {
    throw new BackupError(`${path} does not open with this passphrase; check AGENT_WALLET_BACKUP_PASSPHRASE`);
  }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** The manifest's MAC: HMAC-SHA256 of its JSON (without `mac`) under a key kept apart from the file key. */
function manifestMac(key: Buffer, manifest: Omit<Manifest, 'mac'>): string {
  const macKey = createHash('sha256').update('agent-wallet backup manifest mac v1').update(key).digest();
  return createHmac('sha256', macKey).update(JSON.stringify(manifest)).digest('base64');
}

/** Backup file names are flat: simnet/state.bin is stored as simnet__state.bin. */
const storedName = (path: string, encrypted: boolean) => `${path.replaceAll('/', '__')}${encrypted ? '.enc' : ''}`;

function isEmptyOrMissing(dir: string): boolean {
  return !existsSync(dir) || (statSync(dir).isDirectory() && readdirSync(dir).length === 0);
}

/** Takes a backup of `config.dataDir` into `outDir` (created 0700, must be empty). */
export function createBackup(config: Config, outDir: string, opts: { passphrase?: string; now?: Date } = {}): Manifest {
  const dataDir = config.dataDir;
  const dbPath = join(dataDir, 'wallet.db');
  const onPostgres = Boolean(config.database.url);
  if (!onPostgres && !existsSync(dbPath)) throw new BackupError(`no ledger at ${dbPath}; pass the --data-dir the daemon runs with`);
  const dir = resolve(outDir);
  if (!isEmptyOrMissing(dir)) throw new BackupError(`${dir} is not empty; back up into a new directory`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);

  const salt = randomBytes(16);
  const key = opts.passphrase ? keyOf(opts.passphrase, salt) : null;
  const files: ManifestFile[] = [];
  const put = (path: string, plain: Buffer) => {
    const stored = key ? seal(key, path, plain) : plain;
    const target = join(dir, storedName(path, key !== null));
    writeFileSync(target, stored, { mode: 0o600 });
    chmodSync(target, 0o600);
    files.push({ path, sha256: sha256(stored), bytes: stored.length });
  };

  const snapshot = join(dir, `.wallet.db.snapshot-${process.pid}`);
  // On PostgreSQL the ledger is the database's to back up (its base backups and WAL archive, or the
  // provider's point-in-time recovery); the secrets that are not in it are backed up here all the same.
  let schemaVersion = SCHEMA_VERSION;
  if (!onPostgres) {
    try {
      schemaVersion = snapshotDatabase(dbPath, snapshot);
      put('wallet.db', readFileSync(snapshot));
    } finally {
      rmSync(snapshot, { force: true });
    }
  }
  const feePayerFile = config.solana.fee_payer_keypair_file;
  const sources: [string, string][] = [
    ['config.toml', join(dataDir, 'config.toml')],
    ['master.key', join(dataDir, 'master.key')],
    ['fee-payer.json', isAbsolute(feePayerFile) ? feePayerFile : join(dataDir, feePayerFile)],
  ];
  if (config.solana.network === 'simnet') sources.push(['simnet/state.bin', join(dataDir, 'simnet', 'state.bin')]);
  for (const [path, source] of sources) {
    if (existsSync(source)) put(path, readFileSync(source));
    else if (path === 'master.key' || path === 'fee-payer.json') throw new BackupError(`${source} is missing: without it the backup cannot restore custody`);
  }

  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    schema_version: schemaVersion,
    network: config.solana.network,
    created_at: (opts.now ?? new Date()).toISOString(),
    encryption: key ? { cipher: 'aes-256-gcm', kdf: 'scrypt', salt: salt.toString('base64'), ...SCRYPT } : null,
    files,
  };
  if (key) manifest.mac = manifestMac(key, manifest);
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  chmodSync(join(dir, 'manifest.json'), 0o600);
  return manifest;
}

/** Reads and checks a backup's manifest and every file's sum; returns the plain contents by path. Writes nothing. */
export function readBackup(backupDir: string, passphrase?: string): { manifest: Manifest; contents: Map<string, Buffer> } {
  const dir = resolve(backupDir);
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) throw new BackupError(`${manifestPath} is missing: not a backup directory`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  if (manifest.format !== BACKUP_FORMAT) throw new BackupError(`${manifestPath} has format "${manifest.format}", expected "${BACKUP_FORMAT}"`);
  if (manifest.schema_version > SCHEMA_VERSION) {
    throw new BackupError(`the backup has schema version ${manifest.schema_version}, newer than this binary's ${SCHEMA_VERSION}; restore it with the release that wrote it`);
  }
  const encrypted = manifest.encryption !== null;
  // A passphrase means the operator encrypted this backup: a plain one in its place was put there by someone else.
  if (passphrase && !encrypted) throw new BackupError(`${manifestPath} says the backup is not encrypted, but a passphrase was given: this is not the encrypted backup you made; nothing was restored`);
  let key: Buffer | null = null;
  if (encrypted) {
    if (!passphrase) throw new BackupError('the backup is encrypted: set AGENT_WALLET_BACKUP_PASSPHRASE to its passphrase');
    const enc = manifest.encryption!;
    try {
      key = keyOf(passphrase, Buffer.from(enc.salt, 'base64'), enc);
    } catch {
      // The key parameters are read before the MAC can be checked: ones scrypt refuses were edited in.
      throw new BackupError(`${manifestPath} is not authenticated by this passphrase (its key parameters were changed); nothing was restored`);
    }
    const { mac, ...rest } = manifest;
    const expected = manifestMac(key, rest);
    if (typeof mac !== 'string' || mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
      throw new BackupError(`${manifestPath} is not authenticated by this passphrase (changed, swapped, or the wrong passphrase); nothing was restored`);
    }
  }
  const unknown = manifest.files.map((f) => f.path).filter((path) => !KNOWN_FILES.has(path));
  if (unknown.length > 0) throw new BackupError(`${manifestPath} names files a backup never holds (${unknown.join(', ')}); nothing was restored`);
  const changed: string[] = [];
  const stored = new Map<string, Buffer>();
  for (const f of manifest.files) {
    const file = join(dir, storedName(f.path, encrypted));
    if (!existsSync(file)) {
      changed.push(`${storedName(f.path, encrypted)} (missing)`);
      continue;
    }
    const bytes = readFileSync(file);
    if (sha256(bytes) !== f.sha256) changed.push(storedName(f.path, encrypted));
    else stored.set(f.path, bytes);
  }
  if (changed.length > 0) throw new BackupError(`the backup in ${dir} was changed after it was taken: ${changed.join(', ')} do not match manifest.json; nothing was restored`);
  for (const required of ['wallet.db', 'master.key', 'fee-payer.json']) {
    if (!stored.has(required)) throw new BackupError(`the backup in ${dir} has no ${required}; nothing was restored`);
  }
  if (!key) return { manifest, contents: stored };
  return { manifest, contents: new Map([...stored].map(([path, bytes]) => [path, open(key, path, bytes)])) };
}

/**
 * Restores into `dataDir`, which must be missing or empty. Files are written to a sibling
 * directory first and moved into place only when the ledger passed integrity_check.
 */
export function restoreBackup(backupDir: string, dataDir: string, opts: { passphrase?: string; now?: Date } = {}): Manifest {
  const target = resolve(dataDir);
  if (!isEmptyOrMissing(target)) throw new BackupError(`${target} is not empty; restore into a new data directory`);
  const { manifest, contents } = readBackup(backupDir, opts.passphrase);
  const staging = join(dirname(target), `.restore-${process.pid}-${Date.now()}`);
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  try {
    for (const [path, bytes] of contents) {
      const file = join(staging, path);
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, bytes, { mode: 0o600 });
      chmodSync(file, 0o600);
    }
    // A backup of a daemon on PostgreSQL holds no ledger: the database's own restore brings it back (then mark-restored).
    if (contents.has('wallet.db')) {
      const answer = checkAndMarkRestored(join(staging, 'wallet.db'), { backup_created_at: manifest.created_at, restored_at: (opts.now ?? new Date()).toISOString() });
      if (answer !== 'ok') throw new BackupError(`wallet.db in the backup failed PRAGMA integrity_check (${answer}); nothing was restored`);
    }
    if (existsSync(target)) rmSync(target, { recursive: true });
    renameSync(staging, target);
    chmodSync(target, 0o700);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  return manifest;
}

/** Marks a ledger restored by other means (Litestream) so the daemon's first start reconciles it like `admin restore`. */
export async function markLedgerRestored(dataDir: string, backupCreatedAt: string, now = new Date(), config?: Config): Promise<void> {
  if (config?.database.url) {
    // A PostgreSQL point-in-time restore is a restore: the same rule, no pre-restore nonce ever signs.
    // Every node stopped first: one still serving the restored ledger could complete a round from before it.
    const running = await pgRunningNodes(config.database.url, { tls: config.database.tls });
    if (running > 0) {
      throw new BackupError(
        `${running} agent-wallet daemon${running === 1 ? ' is' : 's are'} running on this ledger; stop every node (systemctl stop agent-wallet-node on each), then run mark-restored again, then start one node and let it reconcile (its /readyz turns ready) before the others`,
      );
    }
    const ledger = await openLedger(config);
    try {
      await markRestored(ledger.store, { backup_created_at: backupCreatedAt, restored_at: now.toISOString() });
    } finally {
      await ledger.close();
    }
    return;
  }
  const path = join(resolve(dataDir), 'wallet.db');
  if (!existsSync(path)) throw new BackupError(`no ledger at ${path}; restore it first (litestream restore -o ${path} …)`);
  const answer = checkAndMarkRestored(path, { backup_created_at: backupCreatedAt, restored_at: now.toISOString() });
  if (answer !== 'ok') throw new BackupError(`${path} failed PRAGMA integrity_check (${answer})`);
}

