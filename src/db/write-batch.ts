/**
 * Pay intents' write transactions, committed together when several are due (group commit). Each
 * runs in a savepoint of one IMMEDIATE transaction, in the order they were asked for, so each sees
 * the ones before it exactly as if they had committed one by one, and one that throws is rolled
 * back alone. The commit writes each page the batch touched once (the tails of the ledger's
 * tables and indexes, the spend rows, the log's pages), where each transaction alone wrote them
 * again: two `pwrite`s a page, ~40 a pay intent, the largest part of its event-loop time.
 *
 * Scheduling (src/loop-turns.ts): a batch waits behind the calls already admitted (a `start`
 * turn), so the writes of those that get that far join it, and runs for at most BATCH_MS; the rest
 * goes on the next turn, before new calls (`finish`). A ping waits for one short unit, as before.
 * Results are handed out only after the commit: nothing of a batch that did not commit is answered
 * as done, and every effect still waits for that commit's durability (durability.ts).
 */
import { nextTurn } from '../loop-turns.ts';
import { SqliteStore } from './sqlite-store.ts';
import type { Store } from './store.ts';

/** How long one batch may run before the rest waits for the next turn. */
export const BATCH_MS = 1;

interface Unit {
  fn: () => Promise<unknown>;
  resolve: (value: never) => void;
  reject: (err: unknown) => void;
}

const queues = new WeakMap<Store, Unit[]>();

/**
 * Runs `fn` (a transaction body) on a later turn, in one transaction with the other writes due
 * then. Resolves with its result once that transaction committed; rejects with what `fn` threw
 * (its writes rolled back, the others' kept) or with the error that kept the batch from
 * committing (nothing of it kept). On PostgreSQL each write is its own transaction, about the keys
 * `locks` names (TxOptions.locks): transactions about other keys commit side by side there.
 */
export function batchedWrite<T>(db: Store, fn: () => Promise<T>, locks?: string[]): Promise<T> {
  if (db.dialect === 'postgres') return db.transaction(fn, { locks });
  let queue = queues.get(db);
  if (!queue) queues.set(db, (queue = []));
  const q = queue;
  return new Promise<T>((resolve, reject) => {
    q.push({ fn, resolve: resolve as (value: never) => void, reject });
    if (q.length === 1) void nextTurn('start').then(() => runBatch(db, q));
  });
}

async function runBatch(db: Store, queue: Unit[]): Promise<void> {
  const taken: Unit[] = [];
  const { results, failed } = await savepointSlice(db, BATCH_MS, () => {
    const unit = queue.shift();
    if (unit) taken.push(unit);
    return unit?.fn;
  });
  // The transaction did not even begin (the write lock stayed busy): the first in line fails, as
  // its own transaction would have; the others try again on the next turn.
  if (taken.length === 0 && failed) queue.shift()!.reject(failed.err);
  if (queue.length > 0) void nextTurn().then(() => runBatch(db, queue));
  taken.forEach((unit, i) => {
    const r = results[i]!;
    if (!r.ok) unit.reject(r.err);
    else if (failed) unit.reject(failed.err);
    else unit.resolve(r.value as never);
  });
}

/** What `savepointSlice` did: each unit's result in order, and the error that kept the slice from committing, if one did. */
export interface Slice {
  results: ({ ok: true; value: unknown } | { ok: false; err: unknown })[];
  failed: { err: unknown } | null;
}

/**
 * Runs the units `next` hands out in one IMMEDIATE transaction, each in a savepoint of its own (one
 * that throws is rolled back alone), until `budgetMs` has passed (at least one unit) or `next` has
 * none left. `failed` is set when nothing of the slice was kept: the transaction could not begin or
 * commit, or SQLite rolled it back whole (a full disk, an I/O error), whatever ran before. The
 * pays' batches and the recorded outcomes (payments/settle.ts) share it.
 */
export async function savepointSlice(db: Store, budgetMs: number, next: () => (() => Promise<unknown>) | undefined, origin?: string): Promise<Slice> {
  const results: Slice['results'] = [];
  let failed: Slice['failed'] = null;
  // What `next` handed out: PostgreSQL runs the whole transaction again after a serialization
  // failure, and the units of the attempt it rolled back run again in it, in the same order.
  const handed: (() => Promise<unknown>)[] = [];
  try {
    // The decision-log heads of the wallets the batch moved are signed once, before its commit (decision-log.ts).
    await db.transaction(async () => {
      results.length = 0;
      const started = performance.now();
      const take = () => {
        const fn = next();
        if (fn) handed.push(fn);
        return fn;
      };
      for (let i = 0, fn = handed[0] ?? take(); fn; i++, fn = handed[i] ?? (performance.now() - started < budgetMs ? take() : undefined)) {
        try {
          results.push({ ok: true, value: await db.transaction(fn) });
        } catch (err) {
          results.push({ ok: false, err });
          if (!db.inTransaction || whollyRolledBack(db)) {
            // Kept over the error of the ROLLBACK that then fails: the cause, not its echo.
            failed = { err };
            throw err;
          }
        }
      }
    }, origin === undefined ? undefined : { origin });
  } catch (err) {
    failed ??= { err };
  }
  return { results, failed };
}

/** SQLite rolls a whole transaction back on some errors (a full disk, an I/O error); the rest of the slice then has nothing to join. */
function whollyRolledBack(db: Store): boolean {
  return db instanceof SqliteStore && !db.db.inTransaction;
}
