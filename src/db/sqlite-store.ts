/**
 * The embedded backend: one bun:sqlite connection, one writer. A transaction holds the
 * connection from `BEGIN IMMEDIATE` to its commit; a statement from outside it waits for the
 * commit (on one connection it would otherwise run inside that transaction, or read what may yet
 * roll back). Which transaction a statement belongs to is the async context it runs in
 * (AsyncLocalStorage), so the functions a body calls need no transaction handle.
 */
import type { Database } from 'bun:sqlite';
import { AsyncLocalStorage } from 'node:async_hooks';
import { countCommit, hooked, newScope, type RunResult, type SqlParams, type SqlValue, type Store, type TxHook, type TxOptions, type TxScope } from './store.ts';

interface Frame {
  scope: TxScope;
  /** False once the transaction ended: a callback it left behind runs outside it. */
  open: boolean;
}

export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  readonly commits = { all: 0, byOrigin: new Map<string, number>() };
  private readonly context = new AsyncLocalStorage<Frame>();
  private readonly hooks: TxHook[] = [];
  private locked = false;
  private readonly waiting: (() => void)[] = [];
  private savepoints = 0;

  /** `db` is the connection; only src/db (durability, backup) uses it directly. */
  constructor(readonly db: Database) {}

  private frame(): Frame | undefined {
    const f = this.context.getStore();
    return f?.open ? f : undefined;
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

  private acquire(): Promise<void> | undefined {
    if (!this.locked) {
      this.locked = true;
      return undefined;
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the connection to the next in line (it stays locked), or frees it. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.locked = false;
  }

  /** Runs one statement: at once inside the caller's transaction or when the connection is free, else after the open transaction. */
  private async statement<T>(fn: () => T): Promise<T> {
    if (!this.locked || this.frame()) return fn();
    await this.acquire();
    try {
      return fn();
    } finally {
      this.release();
    }
  }

  get<T = Record<string, unknown>>(sql: string, ...params: SqlParams): Promise<T | null> {
    return this.statement(() => this.db.query<T, SqlValue[]>(sql).get(...(params as SqlValue[])));
  }

  all<T = Record<string, unknown>>(sql: string, ...params: SqlParams): Promise<T[]> {
    return this.statement(() => this.db.query<T, SqlValue[]>(sql).all(...(params as SqlValue[])));
  }

  run(sql: string, ...params: SqlParams): Promise<RunResult> {
    return this.statement(() => ({ changes: this.db.query<unknown, SqlValue[]>(sql).run(...(params as SqlValue[])).changes }));
  }

  exec(sql: string): Promise<void> {
    return this.statement(() => void this.db.run(sql));
  }

  async transaction<T>(fn: () => Promise<T>, opts?: TxOptions): Promise<T> {
    const outer = this.frame();
    if (outer) return this.savepoint(outer, fn);
    await this.acquire();
    const frame: Frame = { scope: newScope(), open: true };
    try {
      this.db.run('BEGIN IMMEDIATE');
      let result: T;
      try {
        result = await this.context.run(frame, () => hooked(this.hooks, fn, frame.scope, false));
        this.db.run('COMMIT');
      } catch (err) {
        if (this.db.inTransaction) this.db.run('ROLLBACK');
        throw err;
      }
      countCommit(this.commits, opts?.origin);
      for (const fn of frame.scope.afterCommit) fn();
      return result;
    } finally {
      frame.open = false;
      this.release();
    }
  }

  private async savepoint<T>(frame: Frame, fn: () => Promise<T>): Promise<T> {
    const name = `sp${++this.savepoints}`;
    this.db.run(`SAVEPOINT ${name}`);
    try {
      const result = await hooked(this.hooks, fn, frame.scope, true);
      this.db.run(`RELEASE ${name}`);
      return result;
    } catch (err) {
      // SQLite may have rolled the whole transaction back (a full disk): nothing left to undo here.
      if (this.db.inTransaction) {
        this.db.run(`ROLLBACK TO ${name}`);
        this.db.run(`RELEASE ${name}`);
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
