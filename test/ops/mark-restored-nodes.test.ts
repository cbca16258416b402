/**
 * `admin mark-restored` on a PostgreSQL ledger several nodes share: refused while any node runs on
 * it (a node serving the restored ledger could complete a signing round from before the restore),
 * and done once every node has stopped.
 */
import { afterAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { restoredMarker } from '../../src/db/backup.ts';
import { openLedger } from '../../src/db/ledger.ts';
import { pgNodeLocks } from '../../src/db/node-locks.ts';
import { markLedgerRestored } from '../../src/ops/backup.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile } from '../helpers/pg.ts';
import { tempDir } from '../helpers/services.ts';

const { url: server, cluster } = await pgServerForFile('the mark-restored test on PostgreSQL');
afterAll(async () => await cluster?.stop(), 30_000);

test.skipIf(!server)('mark-restored refuses while a node runs on the ledger, naming how many and what to do, and marks it once all are stopped', async () => {
  const url = await emptyPgDatabase(server!);
  const dataDir = join(tempDir('aw-mark-'), 'data');
  const config = loadConfig({ dataDir }, { AGENT_WALLET_DATABASE_URL: url });
  // Create the ledger, then a running node: its lock connection, as every daemon holds one.
  await (await openLedger(config)).close();
  const node = await pgNodeLocks(url);
  await expect(markLedgerRestored(dataDir, '2026-11-01T00:00:00Z', new Date(), config)).rejects.toThrow('1 agent-wallet daemon is running on this ledger; stop every node');
  const ledger = await openLedger(config);
  expect(await restoredMarker(ledger.store)).toBeNull();
  await ledger.close();
  await node.close();
  await markLedgerRestored(dataDir, '2026-11-01T00:00:00Z', new Date(), config);
  const after = await openLedger(config);
  expect(await restoredMarker(after.store)).toMatchObject({ backup_created_at: '2026-11-01T00:00:00Z' });
  await after.close();
}, 30_000);
