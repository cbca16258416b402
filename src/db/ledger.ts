/**
 * Opens the ledger the configuration names: the embedded SQLite file in the data directory by
 * default, or PostgreSQL when `[database] url` (AGENT_WALLET_DATABASE_URL) is set (DESIGN §10.1).
 * Either way the daemon's commits do not wait for the disk and its effects wait for a sync that
 * covers them: SQLite's on worker threads (durability.ts), PostgreSQL's a flushing commit
 * (pg-durability.ts).
 */
import { join } from 'node:path';
import { IMMEDIATE, startDurability, type Durability } from './durability.ts';
import { localNodeLocks, pgNodeLocks, type NodeLocks } from './node-locks.ts';
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
  /** What this node holds against the other nodes of a shared ledger (the daemon's; one-shot commands hold everything). */
  nodes: NodeLocks;
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
 * and is told when the disk fails; without it commits sync on return (one-shot commands). On
 * PostgreSQL the daemon also gets its node locks, and `onNodeLockError` hears when their
 * connection stops answering (the node then acts on none of them until it answers again).
 */
export async function openLedger(config: LedgerConfig, onDiskFailure?: (message: string) => void, onNodeLockError?: (message: string) => void): Promise<Ledger> {
  const network = config.solana.network;
  if (config.database.url) {
    // The daemon's commits skip the flush and its effects wait for one (pg-durability.ts); one-shot commands flush each commit.
    const store = await openPgStore(config.database.url, { network, poolSize: config.database.pool_size, tls: config.database.tls, commitWithoutFlush: onDiskFailure !== undefined });
    const nodes = onDiskFailure
      ? await pgNodeLocks(config.database.url, { tls: config.database.tls, onError: (err) => onNodeLockError?.(err.message) }).catch(async (err: unknown) => {
          await store.close();
          throw err;
        })
      : localNodeLocks();
    const durability = onDiskFailure ? pgDurability(store, nodes) : IMMEDIATE;
    return {
      store,
      durability,
      nodes,
      where: redactedUrl(config.database.url),
      close: async () => {
        await nodes.close();
        await store.close();
      },
    };
  }
  const path = ledgerPath(config.dataDir);
  const store = openDatabase(path, { network });
  const durability = onDiskFailure ? startDurability(store, path, onDiskFailure) : IMMEDIATE;
  return {
    store,
    durability,
    nodes: localNodeLocks(),
    where: path,
    close: async () => {
      await durability.close();
      await store.close();
    },
  };
}
