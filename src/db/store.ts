/**
 * The ledger's one port (DESIGN §10.1): every read and write of the ledger goes through a Store,
 * async on both backends — the embedded SQLite (sqlite-store.ts) and PostgreSQL (pg-store.ts).
 * SQL is written once in SQLite's spelling with `?` parameters; the PostgreSQL store translates
 * what the dialects spell differently (dialect.ts) and a statement that differs in meaning is
 * written per dialect (`store.dialect`).
 *
 * A transaction is a callback: what it runs through the store (directly or deep in the functions it
 * calls, which take the same store) runs inside it — the store follows the callback's async context
 * — and a transaction begun inside one is a savepoint. Isolation per backend: SQLite has one writer
 * (`BEGIN IMMEDIATE`, one transaction of the process at a time); PostgreSQL runs each transaction
 * SERIALIZABLE and runs it again on a serialization failure, so the body must not have effects
 * outside the database (await the RPC or the crypto first, then write).
 */

export type Dialect = 'sqlite' | 'postgres';

/** A bound parameter: integers as number or bigint (money is bigint), blobs as Uint8Array. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/** Positional values for `?` (or `?N`), or one object of named values for `$name`. */
export type SqlParams = SqlValue[] | [Record<string, SqlValue>];

export interface RunResult {
  /** Rows the statement inserted, updated or deleted. */
  changes: number;
}

export interface TxOptions {
  /** Commits are counted under this origin too (the bench tells a payment's own commits from the outcomes' commits). */
  origin?: string;
  /**
   * On PostgreSQL: the keys (`wallet:ID`, `address:…`) every read-check-write of this transaction
   * is about. It then runs beside transactions about other keys instead of alone. Whatever else it
   * writes must be guarded by a unique constraint or a conditional UPDATE. SQLite has one writer
   * and ignores them.
   */
  locks?: string[];
}

/** What hooks keep for one outermost transaction (the decision log's heads to sign before it commits). */
export interface TxScope {
  readonly locals: Map<symbol, unknown>;
  /** Run once the outermost transaction committed (never when it rolled back): what only a committed change may tell the world. */
  readonly afterCommit: (() => void)[];
}

/** A fresh scope for an outermost transaction. */
export const newScope = (): TxScope => ({ locals: new Map(), afterCommit: [] });

/** Wraps every transaction body (`nested` for a savepoint); runs inside it, so it may write too. */
export type TxHook = <T>(body: () => Promise<T>, scope: TxScope, nested: boolean) => Promise<T>;

export interface Store {
  readonly dialect: Dialect;
  get<T = Record<string, unknown>>(sql: string, ...params: SqlParams): Promise<T | null>;
  all<T = Record<string, unknown>>(sql: string, ...params: SqlParams): Promise<T[]>;
  run(sql: string, ...params: SqlParams): Promise<RunResult>;
  /** Runs a script of statements without parameters (schema changes). */
  exec(sql: string): Promise<void>;
  /** Runs `fn` in one transaction (a savepoint when called inside one) and commits it; rolls back what it wrote when it throws. */
  transaction<T>(fn: () => Promise<T>, opts?: TxOptions): Promise<T>;
  /** True when the caller runs inside one of this store's transactions. */
  readonly inTransaction: boolean;
  /** The outermost transaction the caller runs in, or null. */
  scope(): TxScope | null;
  addTxHook(hook: TxHook): void;
  /** Transactions committed by this process, in all and per origin. */
  readonly commits: { all: number; byOrigin: Map<string, number> };
  close(): Promise<void>;
}

/** Composes `hooks` around `body`, the first added outermost. */
export function hooked<T>(hooks: readonly TxHook[], body: () => Promise<T>, scope: TxScope, nested: boolean): Promise<T> {
  let run = body;
  for (let i = hooks.length - 1; i >= 0; i--) {
    const hook = hooks[i]!;
    const inner = run;
    run = () => hook(inner, scope, nested);
  }
  return run();
}

/** Counts one commit under `origin` too. */
export function countCommit(commits: Store['commits'], origin: string | undefined): void {
  commits.all++;
  if (origin !== undefined) commits.byOrigin.set(origin, (commits.byOrigin.get(origin) ?? 0) + 1);
}
