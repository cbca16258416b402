/**
 * The ledger a test runs on: the embedded SQLite by default; PostgreSQL when AW_TEST_PG_URL names
 * a server (CI starts a throwaway cluster and runs the store, money, race, crash and end-to-end
 * suites again with it). Each ledger is a fresh database, cloned from a template this process
 * made once with the schema, so a test never sees another's rows.
 */
import { SQL } from 'bun';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/open.ts';
import { openPgStore, PgStore } from '../../src/db/pg-store.ts';
import type { Store, TxHook } from '../../src/db/store.ts';

/** The PostgreSQL server the suite runs on, or null for SQLite. Not AGENT_WALLET_…: test/preload.ts clears those. */
export const PG_SERVER = process.env.AW_TEST_PG_URL || null;

let template: Promise<string> | null = null;

async function onServer(statement: string, server = PG_SERVER!): Promise<void> {
  const sql = new SQL(server, { bigint: true, max: 1 });
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.close();
  }
}

const randomName = (prefix: string) => `${prefix}_${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex')}`;

function urlOf(name: string, server = PG_SERVER!): string {
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A new, empty database on `server` (the suite's, or a cluster a file started); its URL. */
export async function emptyPgDatabase(server: string): Promise<string> {
  const name = randomName('aw_empty');
  await onServer(`CREATE DATABASE ${name}`, server);
  return urlOf(name, server);
}

/** The template database of this process: the schema created once, on simnet, then cloned (a clone is far cheaper than the schema). */
function templateDatabase(): Promise<string> {
  template ??= (async () => {
    const name = randomName('aw_tpl');
    await onServer(`CREATE DATABASE ${name}`);
    const store = await openPgStore(urlOf(name), { network: 'simnet', poolSize: 1 });
    await store.close();
    return name;
  })();
  return template;
}

/** A fresh PostgreSQL database with the ledger's schema on `network`; its URL. */
export async function freshPgLedgerUrl(network = 'simnet'): Promise<string> {
  const tpl = await templateDatabase();
  const name = randomName('aw');
  await onServer(`CREATE DATABASE ${name} TEMPLATE ${tpl}`);
  if (network !== 'simnet') {
    const sql = new SQL(urlOf(name), { bigint: true, max: 1 });
    await sql.unsafe("UPDATE meta SET value = $1 WHERE key = 'network'", [network]);
    await sql.close();
  }
  return urlOf(name);
}

/**
 * A daemon's data dir on the suite's ledger: on PostgreSQL its config.toml names a fresh database
 * (written once, so a restart of the same dir finds the same ledger); on SQLite nothing to do.
 */
export async function prepareDataDir(dataDir: string, network = 'simnet'): Promise<void> {
  if (!PG_SERVER) return;
  const file = join(dataDir, 'config.toml');
  if (existsSync(file)) return;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, `[database]\nurl = "${await freshPgLedgerUrl(network)}"\npool_size = 4\n`, { mode: 0o600 });
}

/**
 * A fresh ledger for in-process services: SQLite in memory, or a fresh PostgreSQL database whose
 * pool has 4 connections, so racing requests run on different connections. `writerLock: false`
 * takes PostgreSQL's writer lock away (tests that show the races it prevents).
 */
export function testLedger(network: string, opts: { writerLock?: boolean } = {}): Store {
  if (!PG_SERVER) return openDatabase(':memory:', { network });
  return new PendingStore(freshPgLedgerUrl(network).then((url) => new PgStore(url, { poolSize: 4, writerLock: opts.writerLock })));
}

/**
 * A PostgreSQL store whose database is still being made: the services are built synchronously, and
 * every call waits for the database first. Hooks added meanwhile are added when it is ready.
 */
class PendingStore implements Store {
  readonly dialect = 'postgres' as const;
  private store: Store | null = null;
  private readonly hooks: TxHook[] = [];
  private readonly ready: Promise<Store>;

  constructor(ready: Promise<Store>) {
    this.ready = ready.then((s) => {
      for (const hook of this.hooks) s.addTxHook(hook);
      this.store = s;
      return s;
    });
  }

  get commits() {
    return this.store?.commits ?? { all: 0, byOrigin: new Map<string, number>() };
  }
  get inTransaction() {
    return this.store?.inTransaction ?? false;
  }
  scope() {
    return this.store?.scope() ?? null;
  }
  addTxHook(hook: TxHook) {
    if (this.store) this.store.addTxHook(hook);
    else this.hooks.push(hook);
  }
  get: Store['get'] = async (sql, ...params) => (await this.ready).get(sql, ...params);
  all: Store['all'] = async (sql, ...params) => (await this.ready).all(sql, ...params);
  run: Store['run'] = async (sql, ...params) => (await this.ready).run(sql, ...params);
  exec: Store['exec'] = async (sql) => (await this.ready).exec(sql);
  transaction: Store['transaction'] = async (fn, opts) => (await this.ready).transaction(fn, opts);
  close = async () => (await this.ready).close();
}
