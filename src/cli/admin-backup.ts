/**
 * `agent-wallet admin backup DIR`, `admin restore DIR --data-dir NEW` and
 * `admin mark-restored --backup-time ISO --data-dir D` (a ledger that came back through Litestream).
 * `--encrypt` seals the backup under AGENT_WALLET_BACKUP_PASSPHRASE; restore reads the same variable.
 */
import { resolve } from 'node:path';
import { loadConfig } from '../config.ts';
import { BackupError, createBackup, markLedgerRestored, restoreBackup } from '../ops/backup.ts';
import { dataDirEnv } from './admin-network.ts';
import { redactedUrl } from '../db/ledger.ts';
import { commandFlags, type CommandInput } from './context.ts';
import { userPath } from './paths.ts';
import { UsageError } from './usage.ts';

interface Io {
  out: (text: string) => void;
  env: Record<string, string | undefined>;
}

function passphrase(env: Io['env']): string {
  const value = env.AGENT_WALLET_BACKUP_PASSPHRASE;
  if (!value || value.length < 12) throw new BackupError('--encrypt needs AGENT_WALLET_BACKUP_PASSPHRASE set to a passphrase of at least 12 characters');
  return value;
}

export function backupCommand(input: CommandInput, io: Io): number {
  const { flags, positional } = commandFlags(input, { 'data-dir': 'string', encrypt: 'boolean', json: 'boolean' });
  const dataDir = resolve(flags['data-dir'] ?? io.env.AGENT_WALLET_DATA_DIR ?? './data');
  const config = loadConfig({ dataDir }, dataDirEnv(dataDir, io.env));
  const out = userPath(positional[0]!);
  const manifest = createBackup(config, out, { passphrase: flags.encrypt ? passphrase(io.env) : undefined });
  if (flags.json) io.out(`${JSON.stringify(manifest, null, 2)}\n`);
  else {
    io.out(`Backup of ${dataDir} (schema ${manifest.schema_version}, ${manifest.network}) in ${out}${manifest.encryption ? ', encrypted' : ''}:\n`);
    for (const f of manifest.files) io.out(`  ${f.path}  ${f.bytes} bytes  sha256 ${f.sha256}\n`);
    io.out('It holds master.key and the fee payer key: keep it as safe as the data directory.\n');
    if (config.database.url) {
      io.out(`The ledger is not in it: it lives in PostgreSQL (${redactedUrl(config.database.url)}), whose own backups apply (pg_basebackup with WAL archiving, or the provider's point-in-time recovery). After restoring the database, run agent-wallet admin mark-restored --backup-time TIME before the daemon starts.\n`);
    }
  }
  return 0;
}

export function restoreCommand(input: CommandInput, io: Io): number {
  const { flags, positional } = commandFlags(input, { 'data-dir': 'string', json: 'boolean' });
  const manifest = restoreBackup(userPath(positional[0]!), flags['data-dir']!, { passphrase: io.env.AGENT_WALLET_BACKUP_PASSPHRASE });
  const target = resolve(flags['data-dir']!);
  if (flags.json) io.out(`${JSON.stringify({ data_dir: target, backup_created_at: manifest.created_at, schema_version: manifest.schema_version, network: manifest.network, files: manifest.files.map((f) => f.path) }, null, 2)}\n`);
  else {
    io.out(`Restored the backup of ${manifest.created_at} into ${target}.\n`);
    if (manifest.files.some((f) => f.path === 'wallet.db')) io.out(`On its first start the daemon closes every signing session from the backup and records the transfers that landed since (start it with --data-dir ${target}).\n`);
    else io.out(`This backup holds no ledger: its daemon ran on PostgreSQL. Restore the database with its own tools, then run agent-wallet admin mark-restored --backup-time TIME --data-dir ${target} before starting the daemon.\n`);
  }
  return 0;
}

export async function markRestoredCommand(input: CommandInput, io: Io): Promise<number> {
  const { flags } = commandFlags(input, { 'data-dir': 'string', 'backup-time': 'string' });
  const time = flags['backup-time']!;
  if (Number.isNaN(Date.parse(time))) throw new UsageError(`--backup-time must be an ISO time such as 2026-01-31T12:00:00Z, got "${time}"`);
  const dataDir = resolve(flags['data-dir'] ?? io.env.AGENT_WALLET_DATA_DIR ?? './data');
  const config = loadConfig({ dataDir }, dataDirEnv(dataDir, io.env));
  await markLedgerRestored(dataDir, new Date(time).toISOString(), new Date(), config);
  const what = config.database.url ? `the PostgreSQL ledger at ${redactedUrl(config.database.url)}` : `${dataDir}/wallet.db`;
  io.out(`Marked ${what} as restored from ${new Date(time).toISOString()}; the daemon closes every signing session from before and reconciles with the chain on its next start.\n`);
  return 0;
}
