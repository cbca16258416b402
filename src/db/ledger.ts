/**
 * Opens the ledger the configuration names: the embedded SQLite file in the data directory by
 * default, or PostgreSQL when `[database] url` (AGENT_WALLET_DATABASE_URL) is set (DESIGN §10.1).
 * Either way the daemon's commits do not wait for the disk and its effects wait for a sync that
 * covers them: SQLite's on worker threads (durability.ts), PostgreSQL's a flushing commit
 * (pg-durability.ts).
 */
import { join } from 'node:path';
import { IMMEDIATE, startDurability, type Durability } from './durability.ts';
import { openDatabase } from './open.ts';
import { pgDurability } from './pg-durability.ts';
import { openPgStore } from './pg-store.ts';
import type { Store } from './store.ts';

/** What of the configuration chooses the ledger (config.ts's `[database]`, the network, the data dir). */
export interface LedgerConfig {
  dataDir: string;
  database: { url: string; pool_size: number; tls: boolean };
  solana: { network: string };
}

export interface Ledger {
  store: Store;
  durability: Durability;
  /** Where the ledger lives, for logs and errors (never the password). */
  where: string;
  close(): Promise<void>;
}

/** The SQLite ledger's file in `dataDir`. */
export const ledgerPath = (dataDir: string) => join(dataDir, 'wallet.db');

/** The database URL without its password. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable url)';
  }
}

/**
 * Opens the configured ledger. `onDiskFailure` (the daemon) starts the SQLite durability workers
 * and is told when the disk fails; without it commits sync on return (one-shot commands).
 */
export async function openLedger(config: LedgerConfig, onDiskFailure?: (message: string) => void): Promise<Ledger> {
  const network = config.solana.network;
  if (config.database.url) {
    // The daemon's commits skip the flush and its effects wait for one (pg-durability.ts); one-shot commands flush each commit.
    const store = await openPgStore(config.database.url, { network, poolSize: config.database.pool_size, tls: config.database.tls, commitWithoutFlush: onDiskFailure !== undefined });
    const durability = onDiskFailure ? pgDurability(store) : IMMEDIATE;
    return { store, durability, where: redactedUrl(config.database.url), close: () => store.close() };
  }
  const path = ledgerPath(config.dataDir);
  const store = openDatabase(path, { network });
  const durability = onDiskFailure ? startDurability(store, path, onDiskFailure) : IMMEDIATE;
  return {
    store,
    durability,
    where: path,
    close: async () => {
      await durability.close();
      await store.close();
    },
  };
}
