/**
 * The durability rule on PostgreSQL, as on SQLite (durability.ts): the daemon's transactions
 * commit without waiting for the WAL to reach the disk (PgStore's commitWithoutFlush), so a commit
 * holds the writer lock for its statements only, never for an fsync, and every external effect —
 * an answer, a broadcast, a webhook, a mail — awaits `durable()` first. It resolves once a flush
 * that began after every commit made so far has returned; effects waiting together share one
 * (group commit). A server crash can then lose only commits whose effects never left; a daemon
 * killed at any point loses nothing (the server holds its commits).
 */
import { noStats, type Durability } from './durability.ts';
import type { PgStore } from './pg-store.ts';

export function pgDurability(store: PgStore): Durability {
  const stats = noStats();
  // The generation: commits this process made; a flush begun at generation g carries them all.
  let synced = store.commits.all;
  let inFlight = false;
  let waiters: { gen: number; resolve: () => void; reject: (err: Error) => void }[] = [];

  const flush = async () => {
    inFlight = true;
    const gen = store.commits.all;
    try {
      await store.flushWal();
      stats.syncs++;
      synced = Math.max(synced, gen);
      const still: typeof waiters = [];
      for (const w of waiters) (w.gen <= synced ? w.resolve() : still.push(w));
      waiters = still;
    } catch (err) {
      // The server is unreachable: whatever waits fails (its request answers an error, logged); the next effect tries again.
      const failed = new Error(`the ledger's commits could not be confirmed on PostgreSQL's disk: ${(err as Error).message}`);
      for (const w of waiters.filter((x) => x.gen <= gen)) w.reject(failed);
      waiters = waiters.filter((x) => x.gen > gen);
    } finally {
      inFlight = false;
      if (waiters.length > 0) void flush();
    }
  };

  return {
    stats,
    durable() {
      const gen = store.commits.all;
      if (gen <= synced) return undefined;
      stats.waits++;
      return new Promise<void>((resolve, reject) => {
        waiters.push({ gen, resolve, reject });
        if (!inFlight) void flush();
      });
    },
    close: () => Promise.resolve(),
  };
}
