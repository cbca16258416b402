/**
 * Paths on the command line resolve against the user's directory, also through
 * `npm run -s agent-wallet -- …` (npm runs us in the package's directory and passes the user's in
 * INIT_CWD), and the commands print them absolute. The real entry in a child process.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/open.ts';
import { loadFeePayer, loadMasterKey } from '../../src/secret-files.ts';
import { userCwd } from '../../src/cli/paths.ts';
import { MAIN } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

/** Runs the CLI with `cwd` as npm would leave it and `env` on top of ours. */
async function run(args: string[], cwd: string, env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], { cwd, env: { ...process.env, INIT_CWD: '', npm_lifecycle_event: '', ...env }, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** A data directory as the daemon leaves it, at `dir`. */
function dataDir(dir: string): void {
  mkdirSync(dir, { mode: 0o700 });
  loadMasterKey(dir);
  loadFeePayer(dir, 'fee-payer.json');
  writeFileSync(join(dir, 'config.toml'), '[solana]\nnetwork = "simnet"\n');
  openDatabase(join(dir, 'wallet.db'), { network: 'simnet' }).close();
}

describe('paths are the user\'s', () => {
  test('under npm run (INIT_CWD): a backup lands in the directory the user ran it from and the printed paths are absolute', async () => {
    const pkg = tempDir('aw-cli-pkg-');
    const user = tempDir('aw-cli-user-');
    dataDir(join(user, 'data'));
    const res = await run(['admin', 'backup', 'bk', '--data-dir', 'data'], pkg, { INIT_CWD: user, npm_lifecycle_event: 'agent-wallet' });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(existsSync(join(user, 'bk', 'manifest.json'))).toBe(true);
    expect(existsSync(join(pkg, 'bk'))).toBe(false);
    expect(res.stdout).toContain(`Backup of ${join(user, 'data')} `);
    expect(res.stdout).toContain(` in ${join(user, 'bk')}:`);
  }, 20_000);

  test('relative --home, a read file and --key name the absolute path in the user\'s directory', async () => {
    const pkg = tempDir('aw-cli-pkg-');
    const user = tempDir('aw-cli-user-');
    const npm = { INIT_CWD: user, npm_lifecycle_event: 'agent-wallet' };
    const home = await run(['info', '--home', 'h', '--json'], pkg, npm);
    expect(JSON.parse(home.stdout).error.message).toContain(`in ${join(user, 'h')};`);
    const imported = await run(['import', 'w.wlt', '--json', '--home', 'h'], pkg, npm);
    expect(JSON.parse(imported.stdout).error.message).toContain(`cannot read ${join(user, 'w.wlt')}:`);
    writeFileSync(join(user, 'log.jsonl'), '');
    const verify = await run(['owner', 'verify-log', 'log.jsonl', '--key', 'key.json', '--json'], pkg, npm);
    expect(JSON.parse(verify.stdout).error.message).toContain(`--key ${join(user, 'key.json')}: no such file`);
  }, 20_000);

  test('without npm, or under another npm script (npm test running us), paths resolve against the working directory', async () => {
    const cwd = tempDir('aw-cli-cwd-');
    const elsewhere = tempDir('aw-cli-else-');
    for (const env of [{}, { INIT_CWD: elsewhere, npm_lifecycle_event: 'test' }] as Record<string, string>[]) {
      const res = await run(['info', '--home', 'h', '--json'], cwd, env);
      expect(JSON.parse(res.stdout).error.message).toContain(`in ${join(cwd, 'h')};`);
    }
    expect(userCwd({ INIT_CWD: '/u', npm_lifecycle_event: 'start' }, '/pkg')).toBe('/u');
    expect(userCwd({ INIT_CWD: '/u' }, '/pkg')).toBe('/pkg');
  }, 20_000);
});
