/**
 * Durability off the event loop (DESIGN §5). The daemon's ledger runs in WAL mode with
 * synchronous=NORMAL and no automatic checkpoint: a commit writes its frames to the WAL (the
 * operating system holds them; a crashed process loses nothing) without waiting for the disk, and
 * a worker thread (sync-worker.ts) fdatasyncs the WAL; another (checkpoint-worker.ts) checkpoints
 * it and starts it over (the one write that syncs by itself). So the event loop never waits on the
 * disk, and an effect waits for one fdatasync, never behind a checkpoint.
 *
 * One rule for every external effect — an HTTP answer, a broadcast, a webhook, a mail, a paid
 * request's payment header: `await durable()` first. It resolves once an fdatasync that began
 * after every change made so far has finished; effects waiting together share one sync (group
 * commit). A power loss can then lose only commits whose effects never left.
 *
 * A database opened without it (the admin CLI, tests in memory) keeps synchronous=FULL, where a
 * commit is durable when it returns: `durable()` is immediate there.
 */
import { nextTurn } from '../loop-turns.ts';
import { rewriteApplicationId } from './header-write.ts';
import type { SqliteStore } from './sqlite-store.ts';

export interface Durability {
  /** Undefined when everything committed so far is on the disk; else a promise that resolves when it is. */
  durable(): Promise<void> | undefined;
  /**
   * Syncs finished, waits that needed one, checkpoints tried by the checkpoint thread (those that
   * failed, and those forced after commits never paused for one: the event loop waited for them),
   * the WAL's start-overs (each syncs its header) by that thread and by any other connection (the
   * event loop, another process), and the WAL's length at the last sync.
   */
  readonly stats: { syncs: number; waits: number; checkpoints: number; checkpointErrors: number; forcedCheckpoints: number; restarts: number; foreignRestarts: number; walBytes: number };
  close(): Promise<void>;
}

export const noStats = (): Durability['stats'] => ({ syncs: 0, waits: 0, checkpoints: 0, checkpointErrors: 0, forcedCheckpoints: 0, restarts: 0, foreignRestarts: 0, walBytes: 0 });

/** For a database with synchronous=FULL: every commit is on the disk when it returns. */
export const IMMEDIATE: Durability = {
  durable: () => undefined,
  stats: noStats(),
  close: () => Promise.resolve(),
};

/** Bun's Worker: the DOM type this project also loads lacks ref and unref. */
type BunWorker = Worker & { ref(): void; unref(): void };

/**
 * Switches `db` (opened from `path`) to syncs and checkpoints on worker threads; see the module
 * comment. `checkpointRows` (rows written that make a checkpoint due), `retryMs` (the wait after
 * a checkpoint that did not start the WAL over) and `starvedTries` (such tries before a forced one)
 * are the checkpoint thread's defaults unless a test sets them; `holdMs` (tests only) pauses it
 * between each two steps of a checkpoint.
 */
export function startDurability(store: SqliteStore, path: string, onFailure: (message: string) => void, opts: { checkpointRows?: number; retryMs?: number; starvedTries?: number; holdMs?: number } = {}): Durability {
  const { db } = store;
  // One write while every commit still syncs: the WAL then holds a frame, so no later write of
  // this connection can be the one that writes (and syncs) a fresh WAL's header.
  db.transaction(() => rewriteApplicationId(db)).immediate();
  db.run('PRAGMA synchronous = NORMAL');
  db.run('PRAGMA wal_autocheckpoint = 0');
  // Every row changed through this connection so far, committed or not: its generation. Effects
  // wait outside transactions, where all of it is committed.
  const changes = db.query<{ n: number | bigint }, []>('SELECT total_changes() AS n');
  const generation = () => Number(changes.get()!.n);

  const worker = new Worker(new URL('./sync-worker.ts', import.meta.url).href) as BunWorker;
  worker.unref();
  worker.postMessage({ op: 'open', path });
  const checkpointer = new Worker(new URL('./checkpoint-worker.ts', import.meta.url).href) as BunWorker;
  checkpointer.unref();
  checkpointer.postMessage({ op: 'open', path, gen: generation(), ...opts });

  const stats = noStats();
  let synced = generation();
  let inFlight = false;
  let failed: Error | null = null;
  let waiters: { gen: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  const closing: { worker?: () => void; checkpointer?: () => void } = {};

  const fail = (message: string) => {
    failed = new Error(message);
    onFailure(failed.message);
    for (const w of waiters) w.reject(failed);
    waiters = [];
  };

  const startSync = () => {
    inFlight = true;
    worker.postMessage({ op: 'sync', gen: generation() });
  };

  checkpointer.onmessage = (event: MessageEvent<{ op: string; error?: string; restarted?: boolean; foreignRestart?: boolean; forced?: boolean }>) => {
    const m = event.data;
    if (m.op === 'foreign') stats.foreignRestarts++;
    if (m.op === 'checkpointed') {
      stats.checkpoints++;
      // A failed checkpoint (the disk full, say) is tried again; the syncs, which durability rests on, go on.
      if (m.error !== undefined) stats.checkpointErrors++;
      if (m.forced) stats.forcedCheckpoints++;
      if (m.restarted) stats.restarts++;
      if (m.foreignRestart) stats.foreignRestarts++;
    }
    if (m.op === 'closed') closing.checkpointer?.();
  };

  // A thread that dies: without syncs nothing may claim durability; without checkpoints the WAL only grows (counted, alerted on).
  checkpointer.onerror = () => void stats.checkpointErrors++;
  worker.onerror = (event: ErrorEvent) => fail(`the sync thread stopped: ${event.message}`);

  worker.onmessage = (event: MessageEvent<{ op: string; gen?: number; bytes?: number; error?: string }>) => {
    const m = event.data;
    if (m.op === 'closed') {
      closing.worker?.();
      return;
    }
    inFlight = false;
    if (m.op === 'failed') {
      // The kernel may have dropped the pages it could not write: nothing may claim durability again.
      fail(`the ledger could not be synced to disk: ${m.error}`);
      return;
    }
    stats.syncs++;
    stats.walBytes = m.bytes ?? 0;
    synced = Math.max(synced, m.gen!);
    checkpointer.postMessage({ op: 'written', gen: m.gen });
    const still: typeof waiters = [];
    for (const w of waiters) {
      // Each effect this sync lets out (an answer, a broadcast) on a turn of its own: one sync
      // often frees 6–8 of them, which together held the event loop for a ping's whole wait.
      if (w.gen <= synced) void nextTurn().then(w.resolve);
      else still.push(w);
    }
    waiters = still;
    if (waiters.length) startSync();
  };

  return {
    stats,
    durable() {
      if (failed) return Promise.reject(failed);
      const gen = generation();
      if (gen <= synced) return undefined;
      stats.waits++;
      return new Promise<void>((resolve, reject) => {
        waiters.push({ gen, resolve, reject });
        if (!inFlight) startSync();
      });
    },
    close() {
      // Each thread is held open until it has closed (its connections; or, stuck in a sync or a checkpoint, for 5 s at most).
      const stop = (thread: BunWorker, key: keyof typeof closing) =>
        new Promise<void>((resolve) => {
          thread.ref();
          const timer = setTimeout(() => closing[key]?.(), 5_000);
          closing[key] = () => {
            clearTimeout(timer);
            thread.terminate();
            resolve();
          };
          thread.postMessage({ op: 'close' });
        });
      return Promise.all([stop(worker, 'worker'), stop(checkpointer, 'checkpointer')]).then(() => undefined);
    },
  };
}
