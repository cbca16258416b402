/** `agent-wallet admin catalog` opens the ledger the data dir's config names, like every admin command (admin.ts's withLedger). */
import { expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { catalogCommand } from '../../src/cli/admin-catalog.ts';
import { freshPgLedgerUrl, PG_SERVER } from '../helpers/ledger.ts';
import { tempDir } from '../helpers/services.ts';

function capture(env: Record<string, string | undefined>) {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t), env } };
}

test('a data dir without a ledger is exit code 1 with the reason, not a crash', async () => {
  const dataDir = join(tempDir('aw-catalog-none-'), 'data');
  const c = capture({});
  expect(await catalogCommand(['list', '--data-dir', dataDir], c.io)).toBe(1);
  expect(c.err.join('')).toContain(`no ledger at ${join(dataDir, 'wallet.db')}`);
});

test.skipIf(!PG_SERVER)('on PostgreSQL ([database] url) it reads that ledger and creates no wallet.db', async () => {
  const url = await freshPgLedgerUrl();
  const dataDir = join(tempDir('aw-catalog-pg-'), 'data');
  const c = capture({ AGENT_WALLET_DATABASE_URL: url });
  expect(await catalogCommand(['list', '--all', '--json', '--data-dir', dataDir], c.io)).toBe(0);
  expect(JSON.parse(c.out.join(''))).toEqual({ items: [], total: 0 });
  expect(await catalogCommand(['remove', 'cat_missing', '--data-dir', dataDir], c.io)).toBe(1);
  expect(c.err.join('')).toContain('no catalog entry cat_missing');
  expect(existsSync(join(dataDir, 'wallet.db'))).toBe(false);
});
