/**
 * Exports that can really be revoked, and a bot API key that can be rotated (issue 21 part 2):
 * the real CLI against a real daemon process on simnet, the owner over the real owner API.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { openDatabase } from '../../src/db/open.ts';
import { markClaimed } from '../../src/db/wallets.ts';
import { MAIN, runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

const OWNER = 'keys-owner@example.com';
let daemon: DaemonProcess;
let owner: ApiClient;

/** The operator's view of the daemon's ledger file, opened for one read or write. */
async function withDb<T>(fn: (db: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
  const db = openDatabase(join(daemon.dataDir, 'wallet.db'), { network: 'simnet' });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** Stands in for the claim flow (owner-browser.test.ts drives the real one): the wallet becomes OWNER's. */
async function claim(walletId: string): Promise<void> {
  await withDb(async (db) => {
    const { owner_id } = (await db.get<{ owner_id: string }>('SELECT owner_id FROM owners WHERE email = ?', OWNER))!;
    await db.transaction(async () => await markClaimed(db, walletId, owner_id, Date.now()));
  });
}

const releases = async (exportId: string) => await withDb(async (db) => Number((await db.get<{ n: bigint }>('SELECT count(*) AS n FROM wallet_import_calls WHERE export_id = ?', exportId))!.n));

/** A registered, claimed wallet with its profile in a fresh home. */
async function agentHome(name: string): Promise<{ home: string; walletId: string; address: string }> {
  const home = join(tempDir('aw-keys-'), 'agent');
  const reg = await runCli(['register', '--name', name, '--server', daemon.url, '--home', home, '--json']);
  expect(reg.code).toBe(0);
  await claim(reg.json.wallet_id);
  return { home, walletId: reg.json.wallet_id, address: reg.json.address };
}

const cli = (home: string, ...args: string[]) => runCli([...args, '--server', daemon.url, '--home', home, '--json']);

async function exportTo(home: string): Promise<{ file: string; exportId: string }> {
  const file = join(tempDir('aw-keys-wlt-'), 'wallet.wlt');
  const res = await cli(home, 'export', file);
  expect(res.code).toBe(0);
  return { file, exportId: res.json.export_id };
}

/** Imports `file` into a fresh home (the server named in the file) and returns the result and the home. */
async function importInto(file: string) {
  const home = join(tempDir('aw-keys-imp-'), 'agent');
  return { home, res: await runCli(['import', file, '--home', home, '--json']) };
}

/** `agent-wallet set-api-key` with the key on stdin, as the dashboard advises (it stays out of `ps`). */
async function setKeyFromStdin(home: string, key: string): Promise<{ code: number; json: any }> {
  const proc = Bun.spawn([process.execPath, MAIN, 'set-api-key', '--server', daemon.url, '--home', home, '--json'], { stdin: new Response(`${key}\n`), stdout: 'pipe', stderr: 'pipe' });
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { code, json: JSON.parse(stdout) };
}

beforeAll(async () => {
  daemon = await startDaemonProcess();
  const token = await runCli(['admin', 'owner-token', OWNER, '--json', '--data-dir', daemon.dataDir]);
  expect(token.code).toBe(0);
  owner = new ApiClient(daemon.url, token.json.token);
});
afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
});

test('an export the agent revoked is refused at import with a clear error: no key released, no profile written', async () => {
  const a = await agentHome('Revoker');
  const { file, exportId } = await exportTo(a.home);

  const revoked = await cli(a.home, 'export', 'revoke', exportId);
  expect(revoked.code).toBe(0);
  expect(revoked.json).toMatchObject({ export_id: exportId, wallet_id: a.walletId, revoked_at: expect.any(String) });

  const { home, res } = await importInto(file);
  expect(res.code).toBe(1);
  expect(res.json.error).toMatchObject({ code: 'INVALID_STATUS', revoked_at: revoked.json.revoked_at });
  expect(res.json.error.message).toContain('revoked');
  expect(res.json.error.how_to_fix).toContain('new export');
  expect(existsSync(join(home, 'default.json'))).toBe(false);
  expect(await releases(exportId)).toBe(0);

  const again = await cli(a.home, 'export', 'revoke', exportId);
  expect(again.code).toBe(1);
  expect(again.json.error.code).toBe('INVALID_STATUS');
  // Another wallet's agent cannot even tell the export exists.
  const other = await agentHome('Stranger');
  const foreign = await cli(other.home, 'export', 'revoke', exportId);
  expect(foreign.json.error.code).toBe('NOT_FOUND');

  const audit = await owner.call<any>('owner', 'audit_log', { wallet_id: a.walletId });
  expect(audit.items[0]).toMatchObject({ kind: 'export.revoked', actor: 'agent', data: { export_id: exportId } });
}, 60_000);

test('the owner lists and revokes exports and rotates the bot key: the old key is 401 everywhere, the new key pays, earlier exports are refused', async () => {
  const a = await agentHome('Rotated');
  const early = await exportTo(a.home);
  const imported = await exportTo(a.home);
  const copy = await importInto(imported.file);
  expect(copy.res.code).toBe(0);

  // The owner sees both exports, and that one of them was imported once.
  const listed = await owner.call<any>('owner', 'exports', { wallet_id: a.walletId });
  expect(listed.total).toBe(2);
  expect(listed.items).toEqual([
    { export_id: imported.exportId, created_at: expect.any(String), active: true, revoked_at: null, imports: 1, last_import_at: expect.any(String) },
    { export_id: early.exportId, created_at: expect.any(String), active: true, revoked_at: null, imports: 0, last_import_at: null },
  ]);

  const revoked = await owner.call<any>('owner', 'revoke_export', { export_id: early.exportId });
  expect(revoked).toMatchObject({ export_id: early.exportId, wallet_id: a.walletId });
  const refused = await importInto(early.file);
  expect(refused.res.json.error.code).toBe('INVALID_STATUS');
  expect(await releases(early.exportId)).toBe(0);

  const oldKey = JSON.parse(readFileSync(join(a.home, 'default.json'), 'utf8')).api_key as string;
  const rotated = await owner.call<any>('owner', 'rotate_api_key', { wallet_id: a.walletId });
  expect(rotated.api_key).toMatch(/^wallet_bot_/);
  expect(rotated.api_key).not.toBe(oldKey);
  expect(rotated.revoked_exports).toEqual([imported.exportId]);

  // The old key is refused: by the agent's profile, by the copy imported before, and on the wire.
  expect((await cli(a.home, 'info')).code).toBe(4);
  expect((await cli(copy.home, 'balance')).code).toBe(4);
  const raw = await fetch(`${daemon.url}/bot`, { method: 'POST', headers: { authorization: `Bearer ${oldKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'info' }) });
  expect(raw.status).toBe(401);

  // A file made before the rotation carries the dead key: its import says so and releases nothing.
  const stale = await importInto(imported.file);
  expect(stale.res.code).toBe(1);
  expect(stale.res.json.error.code).toBe('INVALID_STATUS');
  expect(stale.res.json.error.message).toContain("rotated the wallet's API key");
  expect(await releases(imported.exportId)).toBe(1);

  // A key of another wallet is not stored; the rotated key is, and it pays through the FROST round.
  const bob = await registerWallet(new ApiClient(daemon.url), { name: 'Bob' });
  const wrong = await cli(a.home, 'set-api-key', bob.profile.api_key);
  expect(wrong.code).toBe(1);
  expect(JSON.parse(readFileSync(join(a.home, 'default.json'), 'utf8')).api_key).toBe(oldKey);
  const stored = await setKeyFromStdin(a.home, rotated.api_key);
  expect(stored).toMatchObject({ code: 0, json: { wallet_id: a.walletId } });
  expect(JSON.parse(readFileSync(join(a.home, 'default.json'), 'utf8')).api_key).toBe(rotated.api_key);
  expect((await runCli(['admin', 'faucet', a.address, '5', '--data-dir', daemon.dataDir])).code).toBe(0);
  const paid = await cli(a.home, 'pay', bob.profile.username, '1');
  expect(paid.code).toBe(0);
  expect(paid.json.status).toBe('completed');

  // An export made with the new key imports and works.
  const fresh = await exportTo(a.home);
  const restored = await importInto(fresh.file);
  expect(restored.res.code).toBe(0);
  expect((await runCli(['info', '--home', restored.home, '--json'])).json.wallet_id).toBe(a.walletId);

  const audit = await owner.call<any>('owner', 'audit_log', { wallet_id: a.walletId });
  const kinds = audit.items.map((e: any) => [e.kind, e.actor]);
  expect(kinds).toContainEqual(['api_key.rotated', expect.stringMatching(/^owner:own_\w+ via api$/)]);
  expect(kinds).toContainEqual(['export.revoked', expect.stringMatching(/^owner:own_\w+ via api$/)]);
  expect(audit.items.find((e: any) => e.kind === 'api_key.rotated').data).toEqual({ revoked_exports: [imported.exportId] });
}, 90_000);
