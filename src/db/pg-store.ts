/**
 * The PostgreSQL backend (DESIGN §10.1) on Bun's built-in client: a pool of connections, each
 * outermost transaction on a connection of its own behind the writer lock (below), and run again,
 * whole, on a serialization failure or deadlock. As in SqliteStore, the statement's async context
 * (AsyncLocalStorage) says which transaction it belongs to, so the functions a body calls need no
 * handle; a transaction begun inside one is a savepoint. Statements arrive in SQLite's spelling and
 * are translated by toPostgres; rows come back as SQLite's (safeIntegers) would: every integer a
 * bigint, a boolean 1n/0n, and a NUMERIC refused rather than handed over as a string.
 */
import { SQL, type TransactionSQL } from 'bun';
import { AsyncLocalStorage } from 'node:async_hooks';
import { toPostgres } from './dialect.ts';
import { currentFence, FENCE_CHECK, FenceLostError } from './fence.ts';
import { DatabaseOpenError, SCHEMA_VERSION } from './open.ts';
import { mayServe, oldestServing, PG_MIGRATIONS } from './migrations/postgres.ts';
import schema from './pg/schema.sql' with { type: 'text' };
import { countCommit, hooked, newScope, type RunResult, type SqlParams, type SqlValue, type Store, type TxHook, type TxOptions, type TxScope } from './store.ts';

export type Isolation = 'serializable' | 'read committed';

export interface PgStoreOptions {
  /** Connections in the pool (Bun's `max`); default 10. */
  poolSize?: number;
  tls?: boolean;
  /** Isolation of every outermost transaction; default 'read committed' behind the writer lock. */
  isolation?: Isolation;
  /** The writer lock (below); on by default. Off only in tests: of SERIALIZABLE's own retries, and of the races it prevents. */
  writerLock?: boolean;
  /**
   * Transactions commit without waiting for the WAL to reach the disk (synchronous_commit off);
   * the daemon's effects then wait for `flushWal` instead (pg-durability.ts), as on SQLite.
   */
  commitWithoutFlush?: boolean;
}

/** The shape src/db/pg/schema.sql creates: a new PostgreSQL database starts at this version. */
export const PG_SCHEMA_VERSION = 18;

/** Attempts of one transaction, the first included, before a serialization failure is final. */
export const MAX_TX_ATTEMPTS = 8;

/**
 * Taken first by every transaction, held to its commit: the ledger's transactions run one at a
 * time across every connection and every node, as SQLite's one writer does, and under READ
 * COMMITTED each statement after the lock sees every commit before it — the same serial order
 * SQLite gives, so every read-check-write of money (a budget reserved, a setup fee held, a paylink
 * paid, a nonce consumed) holds as it does there. SERIALIZABLE alone let 16 agents' concurrent
 * payments abort each other past any retry budget (its predicate locks are index pages, which
 * unrelated wallets share); SERIALIZABLE behind the lock took its snapshot with the lock's own
 * statement, before the wait, so nearly every waiter failed at its first write.
 */
const WRITER_LOCK = 'pg_advisory_xact_lock(4172010)';
/**
 * A transaction that names its keys (TxOptions.locks) holds the writer lock shared, so it runs
 * beside others with other keys but never beside one that holds it alone, and each key's lock
 * exclusively, taken in sorted order (two transactions never wait on each other in a cycle).
 */
const KEYED_LOCKS = 'pg_advisory_xact_lock_shared(4172010), (SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) FROM (SELECT DISTINCT jsonb_array_elements_text(CAST(CAST($1 AS TEXT) AS JSONB)) AS k ORDER BY k) AS keys)';
/** synchronous_commit off for this transaction only (SET LOCAL), in the same round trip as the lock. */
const NO_FLUSH = "set_config('synchronous_commit', 'off', true)";

/** The transaction kept failing with serialization failures or deadlocks; `cause` is the last. */
export class TransactionConflictError extends Error {
  constructor(
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`transaction gave up after ${attempts} attempts: it kept conflicting with concurrent transactions (${(cause as Error).message})`, { cause });
    this.name = 'TransactionConflictError';
  }
}

/** A row column PostgreSQL typed NUMERIC, which Bun hands over as a string: cast it in the SQL. */
export class NumericResultError extends Error {
  constructor(
    readonly column: string,
    readonly sql: string,
  ) {
    super(`column "${column}" is NUMERIC, which the PostgreSQL client returns as a string; CAST it AS BIGINT (money) or DOUBLE PRECISION in the SQL. SQL: ${sql}`);
    this.name = 'NumericResultError';
  }
}

/** Type OIDs (pg_type) the rows are normalised for. */
const BOOL = 16;
const INT2 = 21;
const INT4 = 23;
const NUMERIC = 1700;

/** SQLSTATEs after which the whole transaction runs again: serialization_failure, deadlock_detected. */
const RETRYABLE = new Set(['40001', '40P01']);

interface Frame {
  scope: TxScope;
  /** The transaction's or savepoint's connection handle. */
  conn: TransactionSQL;
  /** False once the transaction (or savepoint) ended: a callback it left behind runs in `parent`, or on the pool. */
  open: boolean;
  parent: Frame | undefined;
  /** On the outermost frame: a serialization failure a savepoint rolled back, which dooms the attempt even if the body caught it. */
  conflict?: unknown;
}

const retryable = (err: unknown): boolean => RETRYABLE.has((err as { errno?: string } | null)?.errno ?? '');

export class PgStore implements Store {
  readonly dialect = 'postgres' as const;
  readonly commits = { all: 0, byOrigin: new Map<string, number>() };
  /** For /metrics: outermost transactions begun, attempts run again, serialization failures and deadlocks seen. */
  readonly stats = { transactions: 0, retries: 0, serializationFailures: 0 };
  readonly pool: { readonly max: number };
  /** The client; only src/db (schema creation) uses it directly. */
  readonly sql: SQL;
  private readonly context = new AsyncLocalStorage<Frame>();
  private readonly hooks: TxHook[] = [];
  private readonly begin: string;
  private readonly flushKey = `wal_flushed_at:${Math.floor(Math.random() * 16)}`;
  /** What every transaction runs first: the writer lock, and synchronous_commit off when effects wait for flushWal. */
  private readonly prologue: string | null;
  /** The same for a transaction that names its keys (null without the writer lock). */
  private readonly keyedPrologue: string | null;

  constructor(url: string, opts: PgStoreOptions = {}) {
    this.pool = { max: opts.poolSize ?? 10 };
    this.sql = new SQL(url, { max: this.pool.max, bigint: true, ...(opts.tls ? { tls: true } : {}) });
    this.begin = `isolation level ${opts.isolation ?? 'read committed'}`;
    const first = [opts.writerLock ?? true ? WRITER_LOCK : null, opts.commitWithoutFlush ? NO_FLUSH : null].filter((s) => s !== null);
    this.prologue = first.length > 0 ? `SELECT ${first.join(', ')}` : null;
    this.keyedPrologue = opts.writerLock ?? true ? `SELECT ${[KEYED_LOCKS, opts.commitWithoutFlush ? NO_FLUSH : null].filter((s) => s !== null).join(', ')}` : null;
  }

  private frame(): Frame | undefined {
    let f = this.context.getStore();
    while (f && !f.open) f = f.parent;
    return f;
  }

  get inTransaction(): boolean {
    return this.frame() !== undefined;
  }

  scope(): TxScope | null {
    return this.frame()?.scope ?? null;
  }

  addTxHook(hook: TxHook): void {
    this.hooks.push(hook);
  }

  /** Runs one statement on the caller's transaction, or on the pool outside one. */
  private query(sql: string, params: SqlParams): Promise<Record<string, unknown>[] & { count: number | null; columns?: { name: string; type: number }[] }> {
    const { text, values } = positional(sql, params);
    return (this.frame()?.conn ?? this.sql).unsafe(toPostgres(text), values);
  }

  async get<T = Record<string, unknown>>(sql: string, ...params: SqlParams): Promise<T | null> {
    return ((await this.all<T>(sql, ...params))[0] ?? null) as T | null;
  }

  async all<T = Record<string, unknown>>(sql: string, ...params: SqlParams): Promise<T[]> {
    const result = await this.query(sql, params);
    const columns = result.columns ?? [];
    const numeric = columns.find((c) => c.type === NUMERIC);
    if (numeric) throw new NumericResultError(numeric.name, sql);
    const ints = columns.filter((c) => c.type === INT2 || c.type === INT4).map((c) => c.name);
    const bools = columns.filter((c) => c.type === BOOL).map((c) => c.name);
    // SQLite (safeIntegers) returns every integer as bigint and has no booleans: callers compare with 1n.
    if (ints.length + bools.length > 0) {
      for (const row of result) {
        for (const name of ints) if (typeof row[name] === 'number') row[name] = BigInt(row[name]);
        for (const name of bools) if (typeof row[name] === 'boolean') row[name] = row[name] ? 1n : 0n;
      }
    }
    return [...result] as T[];
  }

  async run(sql: string, ...params: SqlParams): Promise<RunResult> {
    return { changes: (await this.query(sql, params)).count ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    // Without parameters Bun sends the simple protocol, which takes several statements.
    await (this.frame()?.conn ?? this.sql).unsafe(toPostgres(sql));
  }

  async transaction<T>(fn: () => Promise<T>, opts?: TxOptions): Promise<T> {
    const outer = this.frame();
    if (outer) return this.savepoint(outer, fn);
    this.stats.transactions++;
    for (let attempt = 1; ; attempt++) {
      try {
        let committed: TxScope | null = null;
        // Wrapped: Bun awaits an array the callback returns as a list of queries.
        const { value } = await this.sql.begin(this.begin, async (tx) => {
          const frame: Frame = { scope: newScope(), conn: tx, open: true, parent: undefined };
          const keys = opts?.locks ?? [];
          if (keys.length > 0 && this.keyedPrologue) await tx.unsafe(this.keyedPrologue, [JSON.stringify(keys)]);
          else if (this.prologue) await tx.unsafe(this.prologue);
          const fence = currentFence();
          if (fence) {
            const [row] = await tx.unsafe(FENCE_CHECK, [fence.pid, fence.key]);
            if (row.held !== true) throw new FenceLostError(fence.key);
          }
          try {
            const value = await this.context.run(frame, () => hooked(this.hooks, fn, frame.scope, false));
            if (frame.conflict !== undefined) throw frame.conflict;
            committed = frame.scope;
            return { value };
          } finally {
            frame.open = false;
          }
        });
        countCommit(this.commits, opts?.origin);
        for (const fn of (committed as TxScope | null)?.afterCommit ?? []) fn();
        return value;
      } catch (err) {
        if (!retryable(err)) throw err;
        this.stats.serializationFailures++;
        if (attempt === MAX_TX_ATTEMPTS) throw new TransactionConflictError(attempt, err);
        this.stats.retries++;
        // Jittered and growing, so the transactions that collided do not collide again in step.
        await Bun.sleep(1 + Math.random() * Math.min(100, 2 ** attempt * 2));
      }
    }
  }

  private async savepoint<T>(parent: Frame, fn: () => Promise<T>): Promise<T> {
    const { value } = await parent.conn
      .savepoint(async (sp) => {
        const frame: Frame = { scope: parent.scope, conn: sp, open: true, parent };
        try {
          return { value: await this.context.run(frame, () => hooked(this.hooks, fn, frame.scope, true)) };
        } finally {
          frame.open = false;
        }
      })
      .catch((err: unknown) => {
        // PostgreSQL wants the whole transaction run again, not the savepoint: remember it for the outermost.
        if (retryable(err)) {
          let root = parent;
          while (root.parent) root = root.parent;
          root.conflict ??= err;
        }
        throw err;
      });
    return value;
  }

  /**
   * Returns once everything committed before the call is on the disk: one commit that waits for
   * its flush (synchronous_commit on, this connection's default), and PostgreSQL writes its WAL in
   * order, so that flush carries every commit before it. It must write a row (a transaction that
   * wrote nothing commits without a flush); each store writes one of 16 rows, chosen at random,
   * so the flushes of several nodes seldom wait on one row lock.
   */
  async flushWal(): Promise<void> {
    await this.sql.unsafe("INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [this.flushKey, new Date().toISOString()]);
  }

  /** Whether the server's WAL holds commits not yet on its disk (any node's). */
  async walBehind(): Promise<boolean> {
    const [row] = await this.sql.unsafe('SELECT pg_current_wal_insert_lsn() > pg_current_wal_flush_lsn() AS behind');
    return row.behind === true;
  }

  async close(): Promise<void> {
    await this.sql.close();
  }
}

const NAMED = /('(?:[^']|'')*'?)|("(?:[^"]|"")*"?)|(--[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|([A-Za-z_][A-Za-z0-9_$]*)|\$([A-Za-z_]\w*)|(\?)|[\s\S]/y;

/** Each named statement's text with `?` and its names in order: the same few statements run again and again. */
const namedShapes = new Map<string, { text: string; names: string[] }>();

/** SQL with `$name` parameters → `?` in order of appearance, and the values to bind (a name used twice is bound twice). */
function positional(sql: string, params: SqlParams): { text: string; values: SqlValue[] } {
  const only = params[0];
  if (params.length !== 1 || only === null || typeof only !== 'object' || only instanceof Uint8Array) return { text: sql, values: params as SqlValue[] };
  const named = only as Record<string, SqlValue>;
  let shape = namedShapes.get(sql);
  if (!shape) namedShapes.set(sql, (shape = namedShape(sql)));
  const values = shape.names.map((name) => {
    if (!(name in named)) throw new Error(`no value for $${name} in SQL: ${sql}`);
    return named[name]!;
  });
  return { text: shape.text, values };
}

function namedShape(sql: string): { text: string; names: string[] } {
  const names: string[] = [];
  let text = '';
  NAMED.lastIndex = 0;
  for (let m = NAMED.exec(sql); m; m = NAMED.exec(sql)) {
    const name = m[5];
    if (m[6]) throw new Error(`SQL binds named values but also has a positional ?: ${sql}`);
    if (name === undefined) {
      text += m[0];
      continue;
    }
    names.push(name);
    text += '?';
  }
  return { text, names };
}

/** A postgres:// (or postgresql://) URL naming a host: what `[database] url` and `copy-ledger --to` accept. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\/[^/]+/.test(url);
}

/** The url without its password, for messages. */
function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return 'the configured PostgreSQL url';
  }
}

const HOW = 'set [database] url (or AGENT_WALLET_DATABASE_URL)';

/** A connection or login failure, as a message that says what to change. */
function openError(url: string, err: unknown): Error {
  const e = err as { code?: string; errno?: string; message?: string };
  const at = where(url);
  if (e.errno === '28P01' || e.errno === '28000') return new DatabaseOpenError(`PostgreSQL at ${at} refused the login (${e.message}); check the user and password in ${HOW}`);
  if (e.errno === '3D000') return new DatabaseOpenError(`PostgreSQL at ${at}: ${e.message}; create it (createdb) or ${HOW} to an existing database`);
  if (e.code?.startsWith('ERR_POSTGRES_CONNECTION') || e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || e.code === 'ERR_POSTGRES_TLS_NOT_AVAILABLE') {
    return new DatabaseOpenError(`cannot reach PostgreSQL at ${at} (${e.code}: ${e.message}); start the server or ${HOW} to one that runs`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** Any fixed key: holders of this transaction-scoped advisory lock create or check the schema one at a time. */
const SCHEMA_LOCK = 0x41_57_18;

/**
 * Connects to the PostgreSQL database at `url` and makes sure it holds this ledger: an empty
 * database gets src/db/pg/schema.sql and its meta rows in one transaction (nodes starting together
 * take turns on an advisory lock); a database that has them is checked for its schema version and
 * network. Refuses, with how to fix it, a server it cannot reach or log in to, a database that holds
 * other tables, and a ledger that is newer than this binary or belongs to another network.
 */
export async function openPgStore(
  url: string,
  opts: { network: string; poolSize?: number; tls?: boolean; commitWithoutFlush?: boolean },
  // This binary's version and migration bodies; a test moves a ledger with bodies of its own.
  migrations: { target: number; bodies: Readonly<Record<number, string>>; compatible?: ReadonlySet<number> } = { target: SCHEMA_VERSION, bodies: PG_MIGRATIONS },
): Promise<PgStore> {
  if (!isPostgresUrl(url)) throw new DatabaseOpenError(`${where(url)} is not a PostgreSQL url (postgres://user:password@host:port/database); ${HOW}`);
  const store = new PgStore(url, { poolSize: opts.poolSize, tls: opts.tls, commitWithoutFlush: opts.commitWithoutFlush });
  const at = where(url);
  try {
    await store.sql.begin(async (tx) => {
      await tx.unsafe(`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK})`);
      const [{ present }] = await tx.unsafe(`SELECT to_regclass('meta') IS NOT NULL AS present`);
      if (!present) {
        const tables: { table_name: string }[] = await tx.unsafe(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name LIMIT 3`,
        );
        if (tables.length > 0) {
          throw new DatabaseOpenError(
            `database ${at} is not empty (tables ${tables.map((t) => `"${t.table_name}"`).join(', ')}${tables.length === 3 ? ', …' : ''}) but holds no agent-wallet ledger; ${HOW} to an empty database`,
          );
        }
        await tx.unsafe(schema);
        await tx.unsafe(`INSERT INTO meta (key, value) VALUES ('schema_version', $1), ('network', $2)`, [String(PG_SCHEMA_VERSION), opts.network]);
      }
      const rows: { key: string; value: string }[] = await tx.unsafe(`SELECT key, value FROM meta WHERE key IN ('schema_version', 'network', 'oldest_serving')`);
      const meta = new Map(rows.map((r) => [r.key, r.value]));
      const version = Number(meta.get('schema_version'));
      if (!Number.isInteger(version)) throw new DatabaseOpenError(`database ${at} has a meta table without a schema_version: it was not created by agent-wallet; ${HOW} to an empty database`);
      // One version ahead is served while the release that moved it says its migration only added (a rolling upgrade).
      const oldest = Number(meta.get('oldest_serving') ?? version);
      if (version > migrations.target && !mayServe(migrations.target, version, oldest)) {
        throw new DatabaseOpenError(`database ${at} has schema version ${version}, newer than this binary's ${migrations.target}; run the newer agent-wallet release that wrote it`);
      }
      // Each step in this one transaction, under the schema lock: a node that starts meanwhile waits and finds the new version.
      for (let next = version + 1; next <= migrations.target; next++) {
        const body = migrations.bodies[next];
        if (body === undefined) {
          throw new DatabaseOpenError(`database ${at} has schema version ${version}; this binary (${migrations.target}) has no PostgreSQL body for migration ${next}, so nothing was changed; run a release that has one`);
        }
        await tx.unsafe(body);
        await tx.unsafe(`UPDATE meta SET value = $1 WHERE key = 'schema_version'`, [String(next)]);
        await tx.unsafe(`INSERT INTO meta (key, value) VALUES ('oldest_serving', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [String(oldestServing(next, migrations.compatible))]);
      }
      const network = meta.get('network');
      if (network === undefined) await tx.unsafe(`INSERT INTO meta (key, value) VALUES ('network', $1)`, [opts.network]);
      else if (network !== opts.network) {
        throw new DatabaseOpenError(`database ${at} belongs to network "${network}", not "${opts.network}"; use a separate database per network`);
      }
    });
    return store;
  } catch (err) {
    await store.close();
    throw err instanceof DatabaseOpenError ? err : openError(url, err);
  }
}
