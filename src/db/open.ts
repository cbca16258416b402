/**
 * Opens the SQLite ledger with the pragmas of DESIGN §5 and brings it to this binary's schema:
 * schema.sql is the first release's shape (version 1) and every later change is a numbered
 * migration, applied in order to fresh and older files alike, so each change is written once.
 * Refuses a file that is newer than this binary or belongs to another network. SQL lives only
 * under src/db.
 */
import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import schema from '../../schema.sql' with { type: 'text' };
import { MIGRATIONS } from './migrations/index.ts';
import { SqliteStore } from './sqlite-store.ts';

/** The schema version this binary writes: 1 for schema.sql plus one per migration. */
export const SCHEMA_VERSION = 1 + MIGRATIONS.length;

/**
 * Statements `db.query` keeps prepared per database. Bun's default (20, least recently used) is
 * below the ~30 distinct statements one payment runs, so under payments nearly every call
 * prepared its statement again; the daemon's whole set of SQL strings fits in this.
 */
Database.MAX_QUERY_CACHE_SIZE = Math.max(Database.MAX_QUERY_CACHE_SIZE, 1024);

/** Thrown when the database cannot be used as is; the message says how to fix it. */
export class DatabaseOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseOpenError';
  }
}

export interface OpenOptions {
  /** The network this daemon runs on; recorded at creation and checked on every open. */
  network: string;
}

/**
 * Opens (creating if needed) the database at `path` (":memory:" for tests).
 * Pragmas in order: busy_timeout first (the admin CLI opens the same file from another
 * process), WAL, synchronous=FULL (an acknowledged payment survives power loss), foreign keys.
 * The daemon then hands the syncs to a worker thread (durability.ts); one-shot commands keep FULL.
 */
export function openDatabase(path: string, opts: OpenOptions): SqliteStore {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new Database(path, { create: true, strict: true, safeIntegers: true });
  try {
    db.run('PRAGMA busy_timeout = 5000');
    db.run('PRAGMA journal_mode = WAL');
    db.run('PRAGMA synchronous = FULL');
    db.run('PRAGMA foreign_keys = ON');
    const integrity = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').get();
    if (integrity?.integrity_check !== 'ok') {
      throw new DatabaseOpenError(`database ${path} failed its integrity check (${integrity?.integrity_check}); restore it from a backup`);
    }
    migrate(db, path);
    checkNetwork(db, path, opts.network);
    return new SqliteStore(db);
  } catch (err) {
    db.close();
    throw err;
  }
}

function userVersion(db: Database): number {
  return Number(db.query<{ user_version: bigint }, []>('PRAGMA user_version').get()?.user_version ?? 0n);
}

function migrate(db: Database, path: string): void {
  const current = userVersion(db);
  if (current > SCHEMA_VERSION) {
    throw new DatabaseOpenError(
      `database ${path} has schema version ${current}, newer than this binary's ${SCHEMA_VERSION}; run the newer agent-wallet release that wrote it`,
    );
  }
  if (current === 0) {
    db.transaction(() => {
      db.run(schema);
      db.run('PRAGMA user_version = 1');
    }).immediate();
  }
  const from = Math.max(current, 1);
  if (from === SCHEMA_VERSION) return;
  // SQLite's table-rebuild procedure: foreign keys off while a migration runs (it cannot change
  // inside a transaction), every reference checked before its commit, back on afterwards.
  db.run('PRAGMA foreign_keys = OFF');
  try {
    for (let version = from + 1; version <= SCHEMA_VERSION; version++) {
      const sql = MIGRATIONS[version - 2];
      if (sql === undefined) throw new DatabaseOpenError(`no migration to schema version ${version}`);
      db.transaction(() => {
        db.run(sql);
        const broken = db.query<{ table: string; parent: string }, []>('PRAGMA foreign_key_check').all();
        if (broken.length > 0) {
          const first = broken[0]!;
          throw new DatabaseOpenError(
            `database ${path} cannot move to schema version ${version}: ${broken.length} row(s) break a foreign key (first: ${first.table} → ${first.parent}); nothing was changed, restore a consistent backup`,
          );
        }
        db.run(`PRAGMA user_version = ${version}`);
      }).immediate();
    }
  } finally {
    db.run('PRAGMA foreign_keys = ON');
  }
}

function checkNetwork(db: Database, path: string, network: string): void {
  const row = db.query<{ value: string }, [string]>('SELECT value FROM meta WHERE key = ?').get('network');
  if (!row) {
    db.query('INSERT INTO meta (key, value) VALUES (?, ?)').run('network', network);
    return;
  }
  if (row.value !== network) {
    throw new DatabaseOpenError(
      `database ${path} belongs to network "${row.value}", not "${network}"; use a separate --data-dir per network`,
    );
  }
}
