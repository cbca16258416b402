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
import type { Database } from 'bun:sqlite';
import { nextTurn } from '../loop-turns.ts';

/** How long one batch may run before the rest waits for the next turn. */
export const BATCH_MS = 1;

interface Unit {
  fn: () => unknown;
  resolve: (value: never) => void;
  reject: (err: unknown) => void;
}

const queues = new WeakMap<Database, Unit[]>();

/**
 * Runs `fn` (synchronous, a transaction body) on a later turn, in one transaction with the other
 * writes due then. Resolves with its result once that transaction committed; rejects with what
 * `fn` threw (its writes rolled back, the others' kept) or with the error that kept the batch
 * from committing (nothing of it kept).
 */
export function batchedWrite<T>(db: Database, fn: () => T): Promise<T> {
  let queue = queues.get(db);
  if (!queue) queues.set(db, (queue = []));
  const q = queue;
  return new Promise<T>((resolve, reject) => {
    q.push({ fn, resolve: resolve as (value: never) => void, reject });
    if (q.length === 1) void nextTurn('start').then(() => runBatch(db, q));
  });
}

function runBatch(db: Database, queue: Unit[]): void {
  const ran: { unit: Unit; ok: boolean; value: unknown }[] = [];
  let failed: { err: unknown } | null = null;
  let aborted: { err: unknown } | null = null;
  try {
    db.transaction(() => {
      const started = performance.now();
      do {
        const unit = queue.shift()!;
        try {
          ran.push({ unit, ok: true, value: db.transaction(unit.fn)() });
        } catch (err) {
          ran.push({ unit, ok: false, value: err });
          // SQLite rolls the whole transaction back on some errors (a full disk, an I/O error):
          // then nothing of this batch is in the ledger, whatever ran before.
          if (!db.inTransaction) {
            aborted = { err };
            throw err;
          }
        }
      } while (queue.length > 0 && performance.now() - started < BATCH_MS);
    }).immediate();
  } catch (err) {
    // The error that undid the batch, not the one the failed ROLLBACK after it may have raised.
    failed = aborted ?? { err };
    // The transaction did not even begin (the write lock stayed busy): the first in line fails,
    // as its own transaction would have; the others try again on the next turn.
    if (ran.length === 0) ran.push({ unit: queue.shift()!, ok: false, value: err });
  }
  if (queue.length > 0) void nextTurn().then(() => runBatch(db, queue));
  for (const r of ran) {
    if (!r.ok) r.unit.reject(r.value);
    else if (failed) r.unit.reject(failed.err);
    else r.unit.resolve(r.value as never);
  }
}
