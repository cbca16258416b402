/** `agent-wallet admin copy-ledger`: holds the daemon's data-dir lock while it reads the ledger, so no daemon starts on it meanwhile. */
import { SQL } from 'bun';
import { expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyLedgerCommand } from '../../src/cli/admin-copy-ledger.ts';
import { openDatabase } from '../../src/db/open.ts';
import { PG_SERVER } from '../helpers/ledger.ts';
import { tempDir } from '../helpers/services.ts';

async function emptyDatabase(): Promise<string> {
  const name = `aw_copy_${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex')}`;
  const sql = new SQL(PG_SERVER!, { max: 1 });
  await sql.unsafe(`CREATE DATABASE ${name}`);
  await sql.close();
  const url = new URL(PG_SERVER!);
  url.pathname = `/${name}`;
  return url.toString();
}

test.skipIf(!PG_SERVER)("holds daemon.lock during the copy (lockDataDir refuses a daemon meanwhile) and releases it after", async () => {
  const dataDir = join(tempDir('aw-copy-cli-'), 'data');
  const db = openDatabase(join(dataDir, 'wallet.db'), { network: 'simnet' });
  await db.close();
  const lock = join(dataDir, 'daemon.lock');
  const seen: string[] = [];
  const io = {
    out: () => {},
    err: () => {
      seen.push(existsSync(lock) ? readFileSync(lock, 'utf8').trim() : 'none');
    },
    env: {},
  };
  expect(await copyLedgerCommand({ args: [], flags: { 'data-dir': dataDir, to: await emptyDatabase() }, declared: new Set(['data-dir', 'to', 'json']) }, io as never)).toBe(0);
  expect(seen.length).toBeGreaterThan(0);
  expect(new Set(seen)).toEqual(new Set([String(process.pid)]));
  expect(existsSync(lock)).toBe(false);
});
