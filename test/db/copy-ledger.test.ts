/**
 * admin copy-ledger's module on real files: a SQLite ledger at this release's schema with rows in
 * every table (money above 2^53, bytes of every value, 10,000 transactions) copied into new
 * databases on a PostgreSQL server, and the refusals that keep a running daemon's ledger and a
 * non-empty target untouched.
 */
import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import schema from '../../schema.sql' with { type: 'text' };
import { GENESIS_HASH, rowHash } from '../../src/domain/decision-log.ts';
import { type CopyReport, copyLedger, verifyCopy } from '../../src/db/copy-ledger.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { SCHEMA_VERSION } from '../../src/db/open.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile } from '../helpers/pg.ts';

// No PostgreSQL here: skipped, in CI too.
const { url: server, cluster } = await pgServerForFile('the copy-ledger tests', 'skip');
const dir = mkdtempSync(join(tmpdir(), 'aw-copy-ledger-'));

// Stopping a cluster of the file's own checkpoints every database the tests made, with fsync on: longer than a hook's default 5 s.
afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** A new empty database on the server. */
const emptyDatabase = () => emptyPgDatabase(server!);

async function onPg<T>(url: string, f: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL(url, { bigint: true, max: 1 });
  try {
    return await f(sql);
  } finally {
    await sql.close();
  }
}

async function publicTables(url: string): Promise<number> {
  return await onPg(url, async (sql) => Number((await sql`SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'`)[0].n));
}

const BIG = 2n ** 53n;
/** All 256 byte values, rotated by `i`, then `i` itself (unique columns stay unique). */
function bytes(i: number): Uint8Array {
  const out = new Uint8Array(260);
  for (let b = 0; b < 256; b++) out[b] = (b + i) % 256;
  new DataView(out.buffer).setUint32(256, i);
  return out;
}

type Column = { name: string; type: string; notnull: bigint; pk: bigint };
type ForeignKey = { id: bigint; table: string; from: string; to: string | null };

/** A ledger file as a fresh daemon leaves it: schema.sql plus every migration, WAL, its network. */
function newLedger(path: string): Database {
  const db = new Database(path, { create: true, strict: true, safeIntegers: true });
  db.run('PRAGMA journal_mode = WAL');
  db.run(schema);
  for (const migration of MIGRATIONS) db.run(migration);
  db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  db.run('PRAGMA foreign_keys = ON');
  db.query('INSERT INTO meta (key, value) VALUES (?, ?)').run('network', 'solana-localnet');
  return db;
}

/**
 * Rows in every table, parents first: each column's value follows its declared type and CHECK
 * (the first listed value of an IN, rotating), foreign keys point at parent rows, one of an
 * exclusive pair is NULL, nullable columns are NULL every third row. wallet_spend and its windows
 * come from SQLite's own triggers on transactions; decision_log is a valid hash chain.
 */
function fillLedger(db: Database, transactions: number): void {
  const names = db.query<{ name: string; sql: string }, []>(`SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all();
  const filled = new Map<string, Record<string, unknown>[]>();
  const skip = new Set(['meta', 'wallet_spend', 'wallet_spend_windows', 'decision_log']);
  const pending = names.filter((t) => !skip.has(t.name));
  while (pending.length > 0) {
    const index = pending.findIndex((t) => fks(db, t.name).every((f) => f.table === t.name || filled.has(f.table) || skip.has(f.table)));
    const { name, sql } = pending.splice(index, 1)[0]!;
    const rows = Array.from({ length: name === 'transactions' ? transactions : 3 }, (_, i) => rowFor(db, name, sql, i, filled));
    const columns = Object.keys(rows[0]!);
    const insert = db.query(`INSERT INTO ${name} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
    db.transaction(() => {
      for (const row of rows) insert.run(...(columns.map((c) => row[c]) as never[]));
    })();
    filled.set(name, rows);
  }
  const log = db.query('INSERT INTO decision_log (wallet_id, seq, at, kind, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)');
  for (const { wallet_id } of filled.get('wallets')!.slice(0, 2) as { wallet_id: string }[]) {
    let prev: Uint8Array = GENESIS_HASH;
    for (let seq = 1; seq <= 3; seq++) {
      const fields = { wallet_id, seq, at: 1_700_000_000_000 + seq, kind: 'pay', data: JSON.stringify({ amount: String(BIG + BigInt(seq)), note: 'ü ✓' }) };
      const hash = rowHash(prev, fields);
      log.run(wallet_id, seq, fields.at, fields.kind, fields.data, prev, hash);
      prev = hash;
    }
  }
  // An event deleted after the newest: AUTOINCREMENT's counter is past every row, and the copy must keep it.
  db.run('DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)');
}

function fks(db: Database, table: string): ForeignKey[] {
  return db.query<ForeignKey, []>(`PRAGMA foreign_key_list(${table})`).all();
}

function rowFor(db: Database, table: string, sql: string, i: number, filled: Map<string, Record<string, unknown>[]>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  const refs = fks(db, table);
  const pair = /\((\w+) IS NULL\) (?:<>|!=) \((\w+) IS NULL\)/.exec(sql);
  for (const c of db.query<Column, []>(`PRAGMA table_info(${table})`).all()) {
    const ref = refs.find((f) => f.from === c.name);
    const options = new RegExp(`CHECK \\(${c.name} IN \\(([^)]*)\\)\\)`).exec(sql)?.[1]?.split(',').map((v) => v.trim());
    if (pair && (c.name === pair[1] || c.name === pair[2])) {
      row[c.name] = (c.name === pair[1]) === (i % 2 === 0) ? parentKey(db, ref!, i, filled) : null;
    } else if (ref) {
      row[c.name] = parentKey(db, ref, i, filled);
    } else if (options) {
      const v = options[i % options.length]!;
      row[c.name] = v.startsWith("'") ? v.slice(1, -1) : BigInt(v);
    } else if (c.notnull === 0n && c.pk === 0n && i % 3 === 2) {
      row[c.name] = null;
    } else if (c.type === 'INTEGER') {
      row[c.name] = c.pk > 0n ? BigInt(i + 1) : i < 5 ? BIG + BigInt(i * 1000 + 1) : BigInt(1_000_000 + i);
    } else if (c.type === 'BLOB') {
      row[c.name] = bytes(i);
    } else {
      row[c.name] = i % 5 === 1 ? `${c.name} ünïcode ✓ 🚀 '"\\ ${i}` : `${table}.${c.name}.${i}`;
    }
  }
  return row;
}

function parentKey(db: Database, ref: ForeignKey, i: number, filled: Map<string, Record<string, unknown>[]>): unknown {
  const parents = filled.get(ref.table)!;
  const to = ref.to ?? db.query<Column, []>(`PRAGMA table_info(${ref.table})`).all().find((c) => c.pk === 1n)!.name;
  return parents[i % parents.length]![to];
}

function tableNames(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.query<{ name: string }, []>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all().map((t) => t.name);
  } finally {
    db.close();
  }
}

/** A stopped daemon's data dir with a ledger of `transactions` transactions. */
function stoppedLedger(name: string, transactions: number): string {
  const dataDir = join(dir, name);
  const path = join(dataDir, 'wallet.db');
  mkdirSync(dataDir, { recursive: true });
  const db = newLedger(path);
  fillLedger(db, transactions);
  db.close();
  return path;
}

describe.skipIf(!server)('copyLedger', () => {
  let big: string;
  let bigUrl: string;
  let report: CopyReport;

  test('copies every table of a stopped ledger into an empty database, then every row and column verifies equal', async () => {
    big = stoppedLedger('big', 10_000);
    bigUrl = await emptyDatabase();
    const progress: { table: string; copied: number; total: number }[] = [];
    const started = performance.now();
    report = await copyLedger({ sqlitePath: big, pgUrl: bigUrl, onProgress: (p) => progress.push(p) });
    console.log(`copy-ledger: ${report.tables.reduce((n, t) => n + t.rows, 0)} rows in ${report.tables.length} tables (10,000 transactions) copied and verified in ${Math.round(performance.now() - started)} ms`);

    expect(report.tables.map((t) => t.table).sort()).toEqual(tableNames(big));
    for (const t of report.tables) expect(t.rows).toBeGreaterThan(0);
    expect(report.tables.find((t) => t.table === 'transactions')!.rows).toBe(10_000);
    expect(progress.filter((p) => p.table === 'transactions').map((p) => p.copied)).toEqual(Array.from({ length: 20 }, (_, i) => (i + 1) * 500));
    expect(report.wallets).toBe(3);
    expect(report.decisionLog).toEqual({ wallets: 2, rows: 6, firstBreak: null });
    expect(report).toMatchObject({ network: 'solana-localnet', schemaVersion: SCHEMA_VERSION });

    const lite = new Database(big, { readonly: true, safeIntegers: true });
    const lastEvent = lite.query<{ seq: bigint }, []>(`SELECT seq FROM sqlite_sequence WHERE name = 'events'`).get()!.seq;
    const maxEvent = lite.query<{ m: bigint }, []>('SELECT max(seq) AS m FROM events').get()!.m;
    lite.close();
    expect(lastEvent).toBeGreaterThan(maxEvent);
    expect(report.sequences.find((s) => s.table === 'events')!.last).toBe(lastEvent);

    await onPg(bigUrl, async (sql) => {
      const [tx] = await sql`SELECT amount, message FROM transactions WHERE transaction_id = 'transactions.transaction_id.0'`;
      expect(tx.amount).toBe(BIG + 1n);
      expect(Buffer.from(tx.message).equals(Buffer.from(bytes(0)))).toBe(true);
      expect((await sql`SELECT value FROM meta WHERE key = 'schema_version'`)[0].value).toBe(String(SCHEMA_VERSION));
      // Live after the copy, in a transaction rolled back: the insert trigger counts again, the
      // append-only triggers refuse, and a new event takes a key past SQLite's.
      const rollback = new Error('rollback');
      const seen = await sql
        .begin(async (t) => {
          const before = (await t`SELECT total FROM wallet_spend WHERE wallet_id = 'wallets.wallet_id.0'`)[0].total;
          await t`INSERT INTO transactions (transaction_id, wallet_id, type, direction, status, amount, created_at, updated_at)
                  VALUES ('tx_new', 'wallets.wallet_id.0', 'payment', 'out', 'pending', 7, 1, 1)`;
          const after = (await t`SELECT total FROM wallet_spend WHERE wallet_id = 'wallets.wallet_id.0'`)[0].total;
          const seq = (await t`INSERT INTO events (event_id, type, data, created_at) VALUES ('ev_new', 't', '{}', 1) RETURNING seq`)[0].seq;
          const refused = await t.savepoint(async (sp) => await sp`UPDATE audit_log SET kind = 'x'`).catch((err: Error) => err.message);
          throw Object.assign(rollback, { seen: { added: after - before, seq, refused } });
        })
        .catch((err: { seen?: unknown }) => err.seen);
      expect(seen).toEqual({ added: 7n, seq: lastEvent + 1n, refused: expect.stringContaining('append-only') });
    });
  }, 120_000);

  test('refuses a second copy into the now non-empty database and changes nothing there', async () => {
    await expect(copyLedger({ sqlitePath: big, pgUrl: bigUrl })).rejects.toThrow(/is not empty .*create a new one/);
    const again = await verifyCopy(big, bigUrl);
    expect(again.tables).toEqual(report.tables);
  }, 60_000);

  test('detects a target changed after the copy: a row gone and a value altered', async () => {
    const url = await emptyDatabase();
    const path = stoppedLedger('corrupt', 20);
    await copyLedger({ sqlitePath: path, pgUrl: url });
    await onPg(url, async (sql) => {
      await sql`DELETE FROM events WHERE seq = (SELECT min(seq) FROM events)`;
      await sql`UPDATE transactions SET note = 'edited' WHERE transaction_id = 'transactions.transaction_id.0'`;
    });
    const err = await verifyCopy(path, url).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('events: 2 row(s) in SQLite, 1 in PostgreSQL');
    expect((err as Error).message).toContain('transactions: the same 20 row count but different contents');
  }, 60_000);

  test('refuses a ledger another connection is writing to (a running daemon) and leaves the target empty', async () => {
    const url = await emptyDatabase();
    const path = stoppedLedger('busy', 3);
    const daemon = new Database(path);
    daemon.run('BEGIN IMMEDIATE');
    daemon.run(`INSERT INTO meta (key, value) VALUES ('k', 'v')`);
    try {
      await expect(copyLedger({ sqlitePath: path, pgUrl: url })).rejects.toThrow(/is in use by another process.*stop the daemon/);
    } finally {
      daemon.run('ROLLBACK');
      daemon.close();
    }
    expect(await publicTables(url)).toBe(0);
  }, 60_000);

  test("refuses while the data dir's daemon.lock names a live process, not once it is gone", async () => {
    const url = await emptyDatabase();
    const path = stoppedLedger('locked', 3);
    const holder = Bun.spawn(['sleep', '60']);
    writeFileSync(join(dir, 'locked', 'daemon.lock'), `${holder.pid}\n`);
    try {
      await expect(copyLedger({ sqlitePath: path, pgUrl: url })).rejects.toThrow(`a daemon (pid ${holder.pid}) is running`);
    } finally {
      holder.kill();
      await holder.exited;
    }
    expect(await publicTables(url)).toBe(0);
    expect((await copyLedger({ sqlitePath: path, pgUrl: url })).tables.length).toBeGreaterThan(40);
  }, 60_000);

  test('refuses a missing file and a ledger at another schema version, saying what to do', async () => {
    const url = await emptyDatabase();
    await expect(copyLedger({ sqlitePath: join(dir, 'nowhere', 'wallet.db'), pgUrl: url })).rejects.toThrow(/no SQLite ledger at .*--data-dir/);
    const path = stoppedLedger('old', 3);
    const db = new Database(path);
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION - 1}`);
    db.close();
    await expect(copyLedger({ sqlitePath: path, pgUrl: url })).rejects.toThrow(`start this release's daemon on it once to migrate it, stop the daemon`);
    expect(await publicTables(url)).toBe(0);
  }, 60_000);

  test('a row PostgreSQL refuses part-way leaves the target empty', async () => {
    const url = await emptyDatabase();
    const path = stoppedLedger('bad-row', 600);
    const db = new Database(path);
    // PostgreSQL's text cannot hold NUL; SQLite's can.
    db.run(`UPDATE transactions SET note = 'a' || char(0) || 'b' WHERE transaction_id = 'transactions.transaction_id.599'`);
    db.close();
    await expect(copyLedger({ sqlitePath: path, pgUrl: url })).rejects.toThrow(/copying transactions rows 501-600 failed: .*0x00/);
    expect(await publicTables(url)).toBe(0);
  }, 60_000);
});
