/**
 * `agent-wallet admin copy-ledger` (DESIGN §10.1): copies a stopped daemon's SQLite ledger into an
 * empty PostgreSQL database holding src/db/pg/schema.sql, and verifies the copy before it says
 * done. Everything on PostgreSQL — schema, rows, sequences, verification — is one transaction, so
 * any failure (a verification mismatch included) leaves the target as empty as it was found.
 *
 * "Verified equal" means every row and every column: per table the row count and a SHA-256 over a
 * canonical encoding of every value, read in primary-key order on both sides; then each wallet's
 * spend counters (the money the ledger keeps per wallet) stored and recomputed from its outgoing
 * transactions, each decision-log hash chain, the identity sequences, and meta's network and
 * schema version.
 */
import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GENESIS_HASH, rowHash } from '../domain/decision-log.ts';
import { SCHEMA_VERSION } from './open.ts';
import pgSchema from './pg/schema.sql' with { type: 'text' };
import { pgSchemaThrough } from './migrations/postgres.ts';
import { PG_SCHEMA_VERSION } from './pg-store.ts';

/** Thrown when the copy is refused or does not verify; the message says what to do. */
export class CopyLedgerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CopyLedgerError';
  }
}

export interface TableDigest {
  table: string;
  rows: number;
  /** SHA-256 (hex) of the table's rows in primary-key order, equal on both sides. */
  digest: string;
}

export interface VerifyReport {
  /** In foreign-key order. meta's row `schema_version`, which only PostgreSQL keeps, is left out of its count and digest. */
  tables: TableDigest[];
  /** Wallets whose spend counters (wallet_spend, and the same sums recomputed from transactions) matched. */
  wallets: number;
  decisionLog: { wallets: number; rows: number; firstBreak: string | null };
  /** Identity columns and the last value their sequence gave out: the next insert takes a higher one. */
  sequences: { table: string; column: string; last: bigint }[];
  network: string;
  schemaVersion: number;
}

export type CopyReport = VerifyReport;

export interface CopyOptions {
  sqlitePath: string;
  pgUrl: string;
  onProgress?: (p: { table: string; copied: number; total: number }) => void;
  batchRows?: number;
}

/** Each statement's bound values stay under PostgreSQL's limit of 65,535 parameters. */
const MAX_PARAMS = 65_535;
const FETCH_ROWS = 1_000;
/** The one meta row the copy writes: SQLite keeps the version in PRAGMA user_version. */
const VERSION_KEY = 'schema_version';

type Value = bigint | number | string | Uint8Array | null;
type Row = Record<string, Value>;
/** A PostgreSQL connection or a transaction on one. */
type Pg = Pick<SQL, 'unsafe'>;

interface TableShape {
  name: string;
  columns: string[];
  /** Primary key columns in key order; every column when the table has none (a rowid table). */
  order: string[];
  parents: string[];
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

export async function copyLedger(opts: CopyOptions): Promise<CopyReport> {
  const lite = openStopped(opts.sqlitePath);
  try {
    const tables = sortByForeignKeys(sqliteTables(lite));
    const sql = new SQL(opts.pgUrl, { bigint: true, max: 4 });
    try {
      await refuseNonEmpty(sql, opts.pgUrl);
      return await sql.begin(async (tx) => {
        for (const step of pgSchemaThrough(pgSchema, PG_SCHEMA_VERSION, SCHEMA_VERSION)) await tx.unsafe(step);
        const pgTypes = await checkSameShape(tx, tables);
        const insertTriggers = await insertTriggersOf(tx);
        // The copy carries derived rows (wallet_spend, its windows) as stored: triggers that would
        // count the copied transactions again stay off until the rows are in. audit_log's triggers
        // fire on UPDATE, DELETE and TRUNCATE only, so they are left on and the INSERTs pass them.
        for (const t of insertTriggers) await tx.unsafe(`ALTER TABLE ${quote(t.table)} DISABLE TRIGGER ${quote(t.name)}`);
        for (const table of tables) await copyTable(lite, tx, table, opts);
        for (const t of insertTriggers) await tx.unsafe(`ALTER TABLE ${quote(t.table)} ENABLE TRIGGER ${quote(t.name)}`);
        await tx.unsafe(`INSERT INTO meta (key, value) VALUES ($1, $2)`, [VERSION_KEY, String(SCHEMA_VERSION)]);
        await advanceSequences(lite, tx);
        return await verify(lite, tx, tables, pgTypes);
      });
    } finally {
      await sql.close();
    }
  } finally {
    lite.close(); // also ends the exclusive transaction, which only read
  }
}

/**
 * Verifies an existing copy: the checks copyLedger runs before its commit, read in one snapshot
 * of the PostgreSQL database. Throws CopyLedgerError listing every mismatch.
 */
export async function verifyCopy(sqlitePath: string, pgUrl: string): Promise<VerifyReport> {
  if (!existsSync(sqlitePath)) throw new CopyLedgerError(`no SQLite ledger at ${sqlitePath}`);
  const lite = new Database(sqlitePath, { readonly: true, safeIntegers: true });
  try {
    const tables = sortByForeignKeys(sqliteTables(lite));
    const sql = new SQL(pgUrl, { bigint: true, max: 1 });
    try {
      return await sql.begin('isolation level repeatable read read only', async (tx) => verify(lite, tx, tables, await checkSameShape(tx, tables)));
    } finally {
      await sql.close();
    }
  } finally {
    lite.close();
  }
}

/**
 * Opens the ledger and takes SQLite's write lock, held until it is closed: a daemon must not be
 * running on it, and none started meanwhile can write a row the copy would miss.
 */
function openStopped(path: string): Database {
  if (!existsSync(path)) {
    throw new CopyLedgerError(`no SQLite ledger at ${path}; pass the daemon's --data-dir (the directory that holds wallet.db)`);
  }
  const pid = liveDaemonPid(dirname(path));
  if (pid !== null) {
    throw new CopyLedgerError(`a daemon (pid ${pid}) is running on ${dirname(path)}; stop it (kill -TERM ${pid}), wait for it to exit, then run copy-ledger again`);
  }
  const db = new Database(path, { readwrite: true, create: false, safeIntegers: true });
  try {
    db.run('PRAGMA busy_timeout = 0');
    try {
      db.run('BEGIN EXCLUSIVE');
    } catch (err) {
      throw new CopyLedgerError(`${path} is in use by another process (its write lock is held: ${(err as Error).message}); stop the daemon using it, then run copy-ledger again`);
    }
    const version = Number(db.query<{ user_version: bigint }, []>('PRAGMA user_version').get()?.user_version ?? 0n);
    if (version !== SCHEMA_VERSION) {
      throw new CopyLedgerError(
        `${path} has schema version ${version}, this release copies version ${SCHEMA_VERSION}; ` +
          (version < SCHEMA_VERSION ? `start this release's daemon on it once to migrate it, stop the daemon, then run copy-ledger again` : `run copy-ledger from the newer release that wrote it`),
      );
    }
    if (!networkOf(db)) throw new CopyLedgerError(`${path} has no network in its meta table; start this release's daemon on it once, stop it, then run copy-ledger again`);
    const broken = db.query<{ table: string; parent: string }, []>('PRAGMA foreign_key_check').all();
    if (broken.length > 0) {
      throw new CopyLedgerError(`${path} has ${broken.length} row(s) breaking a foreign key (first: ${broken[0]!.table} → ${broken[0]!.parent}), which PostgreSQL would refuse; restore a consistent backup`);
    }
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * The pid in the data directory's daemon.lock if that process is alive: src/daemon/lock.ts's rule
 * (a lock whose holder is gone is stale; EPERM means alive under another user). db/ may not import
 * daemon/, hence the rule is repeated here.
 */
function liveDaemonPid(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(join(dataDir, 'daemon.lock'), 'utf8').trim(), 10);
  } catch {
    return null;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}

function networkOf(db: Database): string | undefined {
  return db.query<{ value: string }, [string]>('SELECT value FROM meta WHERE key = ?').get('network')?.value;
}

async function refuseNonEmpty(sql: SQL, url: string): Promise<void> {
  const tables = await sql.unsafe(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`);
  if (tables.length > 0) {
    const where = new URL(url);
    throw new CopyLedgerError(
      `the PostgreSQL database ${where.host}${where.pathname} is not empty (${tables.length} table(s) in schema public, e.g. ${tables[0].table_name}); copy-ledger writes only into an empty database: create a new one (CREATE DATABASE …) and pass its URL`,
    );
  }
}

function sqliteTables(db: Database): TableShape[] {
  const names = db.query<{ name: string }, []>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all();
  return names.map(({ name }) => {
    const columns = db.query<{ name: string; pk: bigint }, []>(`PRAGMA table_info(${quote(name)})`).all();
    const pk = columns.filter((c) => c.pk > 0n).sort((a, b) => Number(a.pk - b.pk)).map((c) => c.name);
    const parents = db.query<{ table: string }, []>(`PRAGMA foreign_key_list(${quote(name)})`).all().map((f) => f.table);
    return { name, columns: columns.map((c) => c.name), order: pk.length > 0 ? pk : columns.map((c) => c.name), parents: [...new Set(parents)].filter((p) => p !== name) };
  });
}

/** Parents before children (Kahn's algorithm, ties by name so the order is stable). */
function sortByForeignKeys(tables: TableShape[]): TableShape[] {
  const pending = new Map(tables.map((t) => [t.name, t]));
  const sorted: TableShape[] = [];
  while (pending.size > 0) {
    const ready = [...pending.values()].filter((t) => t.parents.every((p) => !pending.has(p)));
    if (ready.length === 0) throw new CopyLedgerError(`the foreign keys of ${[...pending.keys()].join(', ')} form a cycle; copy-ledger cannot order them`);
    for (const t of ready) {
      sorted.push(t);
      pending.delete(t.name);
    }
  }
  return sorted;
}

/** PostgreSQL's schema must have SQLite's tables and columns, in order; returns each column's PostgreSQL type. */
async function checkSameShape(pg: Pg, tables: TableShape[]): Promise<Map<string, string>> {
  const rows = await pg.unsafe(`SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`);
  const pgColumns = new Map<string, string[]>();
  const types = new Map<string, string>();
  for (const r of rows) {
    pgColumns.set(r.table_name, [...(pgColumns.get(r.table_name) ?? []), r.column_name]);
    types.set(`${r.table_name}.${r.column_name}`, r.data_type);
  }
  const problems: string[] = [];
  for (const t of tables) {
    const cols = pgColumns.get(t.name);
    if (!cols) problems.push(`table ${t.name} is missing`);
    else if (cols.join(',') !== t.columns.join(',')) problems.push(`${t.name} has columns (${cols.join(', ')}), SQLite (${t.columns.join(', ')})`);
  }
  const extra = [...pgColumns.keys()].filter((name) => !tables.some((t) => t.name === name));
  if (extra.length > 0) problems.push(`table(s) ${extra.join(', ')} are not in the SQLite ledger`);
  if (problems.length > 0) throw new CopyLedgerError(`the PostgreSQL schema does not match the SQLite ledger at version ${SCHEMA_VERSION}: ${problems.join('; ')}`);
  return types;
}

async function insertTriggersOf(pg: Pg): Promise<{ table: string; name: string }[]> {
  // tgtype bit 2 (4): fires on INSERT.
  const rows = await pg.unsafe(`
    SELECT c.relname AS table, t.tgname AS name FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND NOT t.tgisinternal AND (t.tgtype & 4) <> 0 ORDER BY 1, 2`);
  return rows.map((r: { table: string; name: string }) => ({ table: r.table, name: r.name }));
}

async function copyTable(lite: Database, pg: Pg, table: TableShape, opts: CopyOptions): Promise<void> {
  const total = Number(lite.query<{ n: bigint }, []>(`SELECT count(*) AS n FROM ${quote(table.name)} ${excluded(table)}`).get()!.n);
  const perBatch = Math.max(1, Math.min(opts.batchRows ?? 500, Math.floor(MAX_PARAMS / table.columns.length)));
  const head = `INSERT INTO ${quote(table.name)} (${table.columns.map(quote).join(', ')}) VALUES `;
  let copied = 0;
  let batch: Value[][] = [];
  const flush = async () => {
    const n = table.columns.length;
    const tuples = batch.map((_, r) => `(${table.columns.map((_, c) => `$${r * n + c + 1}`).join(', ')})`);
    try {
      await pg.unsafe(head + tuples.join(', '), batch.flat());
    } catch (err) {
      throw new CopyLedgerError(`copying ${table.name} rows ${copied + 1}-${copied + batch.length} failed: ${(err as Error).message}; nothing was written to PostgreSQL`);
    }
    copied += batch.length;
    batch = [];
    opts.onProgress?.({ table: table.name, copied, total });
  };
  for (const row of lite.query<Row, []>(`SELECT ${table.columns.map(quote).join(', ')} FROM ${quote(table.name)} ${excluded(table)}`).iterate()) {
    batch.push(table.columns.map((c) => row[c] ?? null));
    if (batch.length === perBatch) await flush();
  }
  if (batch.length > 0) await flush();
  if (total === 0) opts.onProgress?.({ table: table.name, copied, total });
}

/** Identity columns continue after the highest key SQLite gave out: its rows' and sqlite_sequence's (AUTOINCREMENT never reuses a deleted row's). */
async function advanceSequences(lite: Database, pg: Pg): Promise<void> {
  for (const { table, column } of await identityColumns(pg)) {
    const last = lastSqliteKey(lite, table, column);
    if (last > 0n) await pg.unsafe(`SELECT setval(pg_get_serial_sequence($1, $2), $3)`, [quote(table), column, last]);
  }
}

async function identityColumns(pg: Pg): Promise<{ table: string; column: string }[]> {
  const rows = await pg.unsafe(`SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES' ORDER BY table_name`);
  return rows.map((r: { table_name: string; column_name: string }) => ({ table: r.table_name, column: r.column_name }));
}

function lastSqliteKey(lite: Database, table: string, column: string): bigint {
  const max = lite.query<{ m: bigint | null }, []>(`SELECT max(${quote(column)}) AS m FROM ${quote(table)}`).get()?.m ?? 0n;
  const seq = lite.query<{ seq: bigint }, [string]>('SELECT seq FROM sqlite_sequence WHERE name = ?').get(table)?.seq ?? 0n;
  return max > seq ? max : seq;
}

/** Every check; throws CopyLedgerError listing all mismatches. */
async function verify(lite: Database, pg: Pg, tables: TableShape[], pgTypes: Map<string, string>): Promise<VerifyReport> {
  const problems: string[] = [];
  const digests: TableDigest[] = [];
  let chains: { lite: ChainCheck; pg: ChainCheck } | null = null;
  for (const table of tables) {
    const onLite = table.name === 'decision_log' ? new ChainCheck() : null;
    const onPg = table.name === 'decision_log' ? new ChainCheck() : null;
    const a = digestSqlite(lite, table, onLite);
    const b = await digestPg(pg, table, pgTypes, onPg);
    if (a.rows !== b.rows) problems.push(`${table.name}: ${a.rows} row(s) in SQLite, ${b.rows} in PostgreSQL`);
    else if (a.digest !== b.digest) problems.push(`${table.name}: the same ${a.rows} row count but different contents (digest ${a.digest.slice(0, 16)}… in SQLite, ${b.digest.slice(0, 16)}… in PostgreSQL)`);
    digests.push({ table: table.name, ...a });
    if (onLite && onPg) chains = { lite: onLite, pg: onPg };
  }

  const wallets = await compareSpend(lite, pg, problems);

  if (chains && chains.lite.firstBreak !== chains.pg.firstBreak) {
    problems.push(`decision_log chains differ: SQLite ${chains.lite.firstBreak ?? 'intact'}, PostgreSQL ${chains.pg.firstBreak ?? 'intact'}`);
  }

  const sequences: VerifyReport['sequences'] = [];
  for (const { table, column } of await identityColumns(pg)) {
    const [row] = await pg.unsafe(`SELECT pg_sequence_last_value(pg_get_serial_sequence($1, $2)::regclass) AS last`, [quote(table), column]);
    const last: bigint = row.last ?? 0n;
    const want = lastSqliteKey(lite, table, column);
    if (last < want) problems.push(`${table}.${column}: the sequence's last value is ${last}, below SQLite's ${want}; a new row would reuse a key`);
    sequences.push({ table, column, last });
  }

  const network = networkOf(lite) ?? '';
  const meta = new Map<string, string>((await pg.unsafe(`SELECT key, value FROM meta WHERE key IN ('network', $1)`, [VERSION_KEY])).map((r: { key: string; value: string }) => [r.key, r.value]));
  if (meta.get('network') !== network) problems.push(`meta network is ${meta.get('network') ?? 'missing'} in PostgreSQL, ${network} in SQLite`);
  if (meta.get(VERSION_KEY) !== String(SCHEMA_VERSION)) problems.push(`meta ${VERSION_KEY} is ${meta.get(VERSION_KEY) ?? 'missing'} in PostgreSQL, expected ${SCHEMA_VERSION}`);

  if (problems.length > 0) throw new CopyLedgerError(`the PostgreSQL copy does not match the SQLite ledger: ${problems.join('; ')}`);
  return {
    tables: digests,
    wallets,
    decisionLog: { wallets: chains?.pg.wallets ?? 0, rows: chains?.pg.rows ?? 0, firstBreak: chains?.pg.firstBreak ?? null },
    sequences,
    network,
    schemaVersion: SCHEMA_VERSION,
  };
}

/** A value as digest text: the type is part of it, so 1, '1' and NULL differ. */
function encode(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return `i${v}`;
  if (typeof v === 'number') return Number.isInteger(v) ? `i${v}` : `r${v}`;
  if (typeof v === 'string') return `t${v}`;
  if (v instanceof Uint8Array) return `x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
  throw new CopyLedgerError(`a value of unexpected type ${typeof v} (${Object.prototype.toString.call(v)})`);
}

class Digest {
  private hasher = new Bun.CryptoHasher('sha256');
  rows = 0;
  add(values: readonly unknown[]): void {
    this.hasher.update(`${JSON.stringify(values.map(encode))}\n`);
    this.rows++;
  }
  done(): { rows: number; digest: string } {
    return { rows: this.rows, digest: this.hasher.digest('hex') };
  }
}

function excluded(table: TableShape): string {
  return table.name === 'meta' ? `WHERE key <> '${VERSION_KEY}'` : '';
}

function digestSqlite(lite: Database, table: TableShape, chain: ChainCheck | null): { rows: number; digest: string } {
  const d = new Digest();
  // SQLite's BINARY order (bytes, NULL first) is PostgreSQL's COLLATE "C" NULLS FIRST.
  const text = `SELECT ${table.columns.map(quote).join(', ')} FROM ${quote(table.name)} ${excluded(table)} ORDER BY ${table.order.map(quote).join(', ')}`;
  for (const row of lite.query<Row, []>(text).iterate()) {
    d.add(table.columns.map((c) => row[c]));
    chain?.add(row);
  }
  return d.done();
}

/** Reads through a cursor so a large table never sits in memory whole; needs a transaction. */
async function digestPg(pg: Pg, table: TableShape, types: Map<string, string>, chain: ChainCheck | null): Promise<{ rows: number; digest: string }> {
  const d = new Digest();
  const order = table.order.map((c) => `${quote(c)}${types.get(`${table.name}.${c}`) === 'text' ? ' COLLATE "C"' : ''} NULLS FIRST`);
  await pg.unsafe(`DECLARE copy_ledger_digest NO SCROLL CURSOR FOR SELECT ${table.columns.map(quote).join(', ')} FROM ${quote(table.name)} ${excluded(table)} ORDER BY ${order.join(', ')}`);
  for (;;) {
    const rows: unknown[][] = await pg.unsafe(`FETCH FORWARD ${FETCH_ROWS} FROM copy_ledger_digest`).values();
    for (const values of rows) {
      d.add(values);
      chain?.add(Object.fromEntries(table.columns.map((c, i) => [c, values[i] as Value])));
    }
    if (rows.length < FETCH_ROWS) break;
  }
  await pg.unsafe('CLOSE copy_ledger_digest');
  return d.done();
}

/** The decision-log rule of src/domain/decision-log.ts over rows in (wallet_id, seq) order: where the first chain breaks. */
class ChainCheck {
  wallets = 0;
  rows = 0;
  firstBreak: string | null = null;
  private wallet: string | null = null;
  private seq = 0n;
  private hash: Uint8Array = GENESIS_HASH;

  add(r: Row): void {
    this.rows++;
    const wallet = r.wallet_id as string;
    if (wallet !== this.wallet) {
      this.wallets++;
      this.wallet = wallet;
      this.seq = 0n;
      this.hash = GENESIS_HASH;
    }
    if (this.firstBreak !== null) return;
    const seq = BigInt(r.seq as bigint);
    const prev = r.prev_hash as Uint8Array;
    const hash = r.hash as Uint8Array;
    const expected = rowHash(prev, { wallet_id: wallet, seq: Number(seq), at: Number(r.at), kind: r.kind as string, data: r.data as string });
    if (seq !== this.seq + 1n) this.firstBreak = `${wallet} row ${seq} follows row ${this.seq}`;
    else if (!Buffer.from(prev).equals(Buffer.from(this.hash))) this.firstBreak = `${wallet} row ${seq}: prev_hash is not row ${this.seq}'s hash`;
    else if (!Buffer.from(hash).equals(Buffer.from(expected))) this.firstBreak = `${wallet} row ${seq}: hash does not match its contents`;
    this.seq = seq;
    this.hash = hash;
  }
}

const LIVE = `'pre_approved', 'awaiting_approval', 'approved', 'pending'`;
/**
 * What the ledger keeps per wallet in money (wallet_spend, kept by triggers on transactions:
 * transactions.ts reads `outstanding` as the money set aside, usage.ts `total` as lifetime spend),
 * and the same two sums recomputed from the transactions by the triggers' rule. The balance itself
 * is on chain, not in the ledger. One text for both dialects; sums as text so neither side rounds.
 */
const STORED_SPEND = 'SELECT wallet_id, CAST(total AS TEXT) AS total, CAST(outstanding AS TEXT) AS outstanding FROM wallet_spend';
const RECOMPUTED_SPEND = `SELECT wallet_id,
  CAST(SUM(CASE WHEN type <> 'withdrawal' AND status IN (${LIVE}, 'completed') THEN amount + fee + setup_fee ELSE 0 END) AS TEXT) AS total,
  CAST(SUM(CASE WHEN status IN (${LIVE}) THEN amount + fee + setup_fee ELSE 0 END) AS TEXT) AS outstanding
  FROM transactions WHERE direction = 'out' GROUP BY wallet_id`;

type Spend = { wallet_id: string; total: string; outstanding: string };

async function compareSpend(lite: Database, pg: Pg, problems: string[]): Promise<number> {
  const wallets = new Set<string>();
  for (const [what, text] of [['stored', STORED_SPEND], ['recomputed', RECOMPUTED_SPEND]] as const) {
    const a = new Map<string, string>(lite.query<Spend, []>(text).all().map((r) => [r.wallet_id, `${r.total}/${r.outstanding}`]));
    const b = new Map<string, string>((await pg.unsafe(text)).map((r: Spend) => [r.wallet_id, `${r.total}/${r.outstanding}`]));
    for (const id of new Set([...a.keys(), ...b.keys()])) {
      wallets.add(id);
      if (a.get(id) !== b.get(id)) problems.push(`wallet ${id} ${what} spend (total/outstanding) is ${a.get(id) ?? 'none'} in SQLite, ${b.get(id) ?? 'none'} in PostgreSQL`);
    }
  }
  return wallets.size;
}
