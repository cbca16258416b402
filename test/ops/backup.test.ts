/** admin backup / restore on real data directories: manifest, modes, checksums, encryption, refusals. */
import { describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, SCHEMA_VERSION } from '../../src/db/open.ts';
import { restoredMarker } from '../../src/db/backup.ts';
import { BackupError, createBackup, restoreBackup } from '../../src/ops/backup.ts';
import { loadFeePayer, loadMasterKey } from '../../src/secret-files.ts';
import { runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';
import type { Store } from '../../src/db/store.ts';

/** A data directory as the daemon leaves it, with a ledger connection kept open (as a running daemon would). */
function dataDir(): { dir: string; db: Store } {
  const dir = join(tempDir('aw-bk-'), 'data');
  mkdirSync(dir, { mode: 0o700 });
  loadMasterKey(dir);
  loadFeePayer(dir, 'fee-payer.json');
  writeFileSync(join(dir, 'config.toml'), '[solana]\nnetwork = "simnet"\n');
  const db = openDatabase(join(dir, 'wallet.db'), { network: 'simnet' });
  return { dir, db };
}

const mode = (path: string) => statSync(path).mode & 0o777;
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('admin backup', () => {
  test('while the ledger is open and written: a consistent copy with every file, a manifest of sums, dir 0700 and files 0600', async () => {
    const { dir, db } = dataDir();
    // A write still in the WAL (not checkpointed): a file copy of wallet.db alone would miss it.
    await db.run("INSERT INTO meta (key, value) VALUES ('probe', 'in-the-wal')");
    const out = join(tempDir('aw-bk-out-'), 'backup');
    const manifest = createBackup(loadConfig({ dataDir: dir }, {}), out);
    db.close();

    expect(manifest.format).toBe('agent-wallet-backup/1');
    expect(manifest.schema_version).toBe(SCHEMA_VERSION);
    expect(manifest.network).toBe('simnet');
    expect(Date.parse(manifest.created_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(manifest.files.map((f) => f.path).sort()).toEqual(['config.toml', 'fee-payer.json', 'master.key', 'wallet.db']);
    expect(mode(out)).toBe(0o700);
    for (const name of readdirSync(out)) expect(mode(join(out, name))).toBe(0o600);
    for (const f of manifest.files) expect(sha(join(out, f.path))).toBe(f.sha256);
    expect(readFileSync(join(out, 'master.key'), 'utf8')).toBe(readFileSync(join(dir, 'master.key'), 'utf8'));
    const copy = new Database(join(out, 'wallet.db'), { readonly: true });
    expect(copy.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'probe'").get()?.value).toBe('in-the-wal');
    copy.close();
  });

  test('refuses a non-empty backup directory', () => {
    const { dir, db } = dataDir();
    db.close();
    const out = tempDir('aw-bk-full-');
    writeFileSync(join(out, 'something'), 'x');
    expect(() => createBackup(loadConfig({ dataDir: dir }, {}), out)).toThrow(/is not empty/);
  });
});

describe('admin restore', () => {
  function backup(passphrase?: string) {
    const { dir, db } = dataDir();
    db.close();
    const out = join(tempDir('aw-bk-out-'), 'backup');
    createBackup(loadConfig({ dataDir: dir }, {}), out, { passphrase });
    return { source: dir, out };
  }

  test('into a fresh dir: every file back with mode 0600 in a 0700 dir, the ledger passes integrity_check and is marked restored', async () => {
    const { source, out } = backup();
    const target = join(tempDir('aw-rs-'), 'data');
    const manifest = restoreBackup(out, target);
    expect(mode(target)).toBe(0o700);
    for (const name of ['master.key', 'fee-payer.json', 'config.toml', 'wallet.db']) expect(mode(join(target, name))).toBe(0o600);
    expect(readFileSync(join(target, 'master.key'))).toEqual(readFileSync(join(source, 'master.key')));
    const db = openDatabase(join(target, 'wallet.db'), { network: 'simnet' });
    expect((await restoredMarker(db))?.backup_created_at).toBe(manifest.created_at);
    db.close();
  });

  test('a changed file is named and nothing is written', () => {
    const { out } = backup();
    const key = join(out, 'master.key');
    writeFileSync(key, readFileSync(key, 'utf8').replace(/^./, (c) => (c === 'a' ? 'b' : 'a')));
    const target = join(tempDir('aw-rs-'), 'data');
    expect(() => restoreBackup(out, target)).toThrow(/master\.key do not match manifest\.json; nothing was restored/);
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(join(target, '..'))).toEqual([]);
  });

  test('a missing file is named', () => {
    const { out } = backup();
    Bun.spawnSync(['rm', join(out, 'fee-payer.json')]);
    expect(() => restoreBackup(out, join(tempDir('aw-rs-'), 'data'))).toThrow(/fee-payer\.json \(missing\)/);
  });

  test('a manifest naming a path outside the data dir is refused', () => {
    const { out } = backup();
    const manifestPath = join(out, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    manifest.files.push({ path: '../evil', sha256: sha(join(out, 'master.key')), bytes: 1 });
    writeFileSync(manifestPath, JSON.stringify(manifest));
    expect(() => restoreBackup(out, join(tempDir('aw-rs-'), 'data'))).toThrow(/names files a backup never holds \(\.\.\/evil\)/);
  });

  test('refuses a non-empty target', () => {
    const { out } = backup();
    const target = tempDir('aw-rs-full-');
    writeFileSync(join(target, 'wallet.db'), 'an older ledger');
    expect(() => restoreBackup(out, target)).toThrow(BackupError);
    expect(readFileSync(join(target, 'wallet.db'), 'utf8')).toBe('an older ledger');
  });

  test('encrypted: no secret in the clear, the right passphrase restores, a wrong one or none is refused', () => {
    const passphrase = 'correct horse battery staple';
    const { source, out } = backup(passphrase);
    const secret = readFileSync(join(source, 'master.key'), 'utf8').trim();
    for (const name of readdirSync(out)) expect(readFileSync(join(out, name), 'latin1').includes(secret)).toBe(false);
    expect(() => restoreBackup(out, join(tempDir('aw-rs-'), 'data'))).toThrow(/AGENT_WALLET_BACKUP_PASSPHRASE/);
    expect(() => restoreBackup(out, join(tempDir('aw-rs-'), 'data'), { passphrase: 'wrong passphrase here' })).toThrow(/not authenticated by this passphrase/);
    const target = join(tempDir('aw-rs-'), 'data');
    restoreBackup(out, target, { passphrase });
    expect(readFileSync(join(target, 'master.key'), 'utf8').trim()).toBe(secret);
  });

  test("a plain backup put in an encrypted one's place, or an edited manifest, is refused when the passphrase is given; nothing is written", () => {
    const passphrase = 'correct horse battery staple';
    const { out: sealed } = backup(passphrase);
    // Someone else's unencrypted backup (their master.key, their ledger) where the operator keeps the encrypted one.
    const { out: plain } = backup();
    const target = join(tempDir('aw-rs-'), 'data');
    expect(() => restoreBackup(plain, target, { passphrase })).toThrow(/not encrypted, but a passphrase was given/);
    expect(existsSync(target)).toBe(false);
    // An encrypted backup whose manifest was edited (a file dropped from it, a sum rewritten) does not authenticate.
    const manifestPath = join(sealed, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    writeFileSync(manifestPath, JSON.stringify({ ...manifest, files: manifest.files.filter((f: { path: string }) => f.path !== 'config.toml') }));
    expect(() => restoreBackup(sealed, target, { passphrase })).toThrow(/not authenticated/);
    const { mac: _mac, ...unsigned } = manifest;
    writeFileSync(manifestPath, JSON.stringify(unsigned));
    expect(() => restoreBackup(sealed, target, { passphrase })).toThrow(/not authenticated/);
    expect(existsSync(target)).toBe(false);
    writeFileSync(manifestPath, JSON.stringify(manifest));
    restoreBackup(sealed, target, { passphrase });
    expect(existsSync(join(target, 'master.key'))).toBe(true);
  });

  test('an encrypted manifest whose key parameters were edited to ones scrypt refuses is refused as unauthenticated, nothing written', () => {
    const passphrase = 'correct horse battery staple';
    const { out } = backup(passphrase);
    const manifestPath = join(out, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const target = join(tempDir('aw-rs-'), 'data');
    // A cost past scrypt's memory limit, a salt that is not text.
    for (const edit of [{ n: 1 << 24 }, { salt: 42 }]) {
      writeFileSync(manifestPath, JSON.stringify({ ...manifest, encryption: { ...manifest.encryption, ...edit } }));
      expect(() => restoreBackup(out, target, { passphrase })).toThrow(new BackupError(`${manifestPath} is not authenticated by this passphrase (its key parameters were changed); nothing was restored`));
      expect(existsSync(target)).toBe(false);
    }
  });

  test('the CLI: backup exits 0 with its manifest; a tampered restore exits 1 naming the file', async () => {
    const { dir, db } = dataDir();
    db.close();
    const out = join(tempDir('aw-bk-cli-'), 'backup');
    const made = await runCli(['admin', 'backup', out, '--data-dir', dir, '--json']);
    expect(made.code).toBe(0);
    expect(made.json.files.length).toBe(4);
    writeFileSync(join(out, 'config.toml'), '[solana]\nnetwork = "mainnet"\n');
    const refused = await runCli(['admin', 'restore', out, '--data-dir', join(tempDir('aw-rs-'), 'data')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('config.toml do not match manifest.json');
  });
});
