/**
 * `agent-wallet admin copy-ledger --data-dir DIR --to postgres://…`: moves a stopped daemon's
 * SQLite ledger into an empty PostgreSQL database and verifies it (src/db/copy-ledger.ts) before
 * it says done. Progress goes to stderr, one line a table (and every 10,000 rows of a large one).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { copyLedger, CopyLedgerError } from '../db/copy-ledger.ts';
import { ledgerPath, redactedUrl } from '../db/ledger.ts';
import { isPostgresUrl } from '../db/pg-store.ts';
import { DataDirBusyError, lockDataDir } from '../daemon/lock.ts';
import { commandFlags, type CommandInput } from './context.ts';
import { UsageError } from './usage.ts';
import type { AdminIo } from './admin-program.ts';

export async function copyLedgerCommand(input: CommandInput, io: AdminIo): Promise<number> {
  const { flags } = commandFlags(input, { 'data-dir': 'string', to: 'string', json: 'boolean' });
  const to = flags.to ?? io.env.AGENT_WALLET_DATABASE_URL;
  if (!to) throw new UsageError('--to postgres://USER@HOST:PORT/DB is required (the empty PostgreSQL database to copy into)');
  if (!isPostgresUrl(to)) throw new UsageError(`--to must be a postgres:// URL, not "${redactedUrl(to)}"`);
  const dataDir = resolve(flags['data-dir'] ?? io.env.AGENT_WALLET_DATA_DIR ?? './data');
  const sqlitePath = ledgerPath(dataDir);
  if (!existsSync(sqlitePath)) throw new CopyLedgerError(`no ledger at ${sqlitePath}; pass the --data-dir the daemon ran with (default ./data)`);
  // The daemon's own lock, held for the copy: no daemon starts on the ledger while it is read.
  let release: () => void;
  try {
    release = lockDataDir(dataDir);
  } catch (err) {
    throw err instanceof DataDirBusyError ? new CopyLedgerError(`${err.message}; then run copy-ledger again`) : err;
  }
  const started = performance.now();
  let shown = '';
  const report = await copyLedger({
    sqlitePath,
    pgUrl: to,
    onProgress: ({ table, copied, total }) => {
      if (copied !== total && copied % 10_000 !== 0) return;
      const line = `${table}: ${copied}/${total} rows`;
      if (line !== shown) io.err(`copy-ledger: ${line}\n`);
      shown = line;
    },
  }).finally(release);
  const seconds = (performance.now() - started) / 1000;
  const rows = report.tables.reduce((n, t) => n + t.rows, 0);
  const data = { ok: true, from: sqlitePath, to: redactedUrl(to), seconds: Number(seconds.toFixed(1)), rows, ...report, sequences: report.sequences.map((s) => ({ ...s, last: s.last.toString() })) };
  if (flags.json) {
    io.out(`${JSON.stringify(data, null, 2)}\n`);
    return 0;
  }
  io.out(`Copied and verified ${rows} rows in ${report.tables.length} tables into ${redactedUrl(to)} (${seconds.toFixed(1)} s).\n`);
  io.out(`Every table's rows and values are equal, ${report.wallets} wallets' spend counters match, ${report.decisionLog.wallets} decision-log chains (${report.decisionLog.rows} rows) check.\n`);
  io.out(`Next: set [database] url in ${resolve(dataDir, 'config.toml')} (or AGENT_WALLET_DATABASE_URL) to that database and start the daemon; keep ${sqlitePath} as the backup of the move. master.key and fee-payer.json stay in the data dir.\n`);
  return 0;
}
