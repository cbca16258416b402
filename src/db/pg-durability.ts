/**
 * The durability rule on PostgreSQL, as on SQLite (durability.ts): the daemon's transactions
 * commit without waiting for the WAL to reach the disk (PgStore's commitWithoutFlush), so a commit
 * holds the writer lock for its statements only, never for an fsync, and every external effect —
 * an answer, a broadcast, a webhook, a mail — awaits `durable()` first. It resolves once a flush
 * that began after every commit made so far has returned; effects waiting together share one
 * (group commit). A server crash can then lose only commits whose effects never left; a daemon
 * killed at any point loses nothing (the server holds its commits).
 *
 * With other nodes on the ledger an answer may also rest on their commits, which this node did
 * not make and cannot count. So while it has peers, an effect with no commit of its own to wait
 * for asks the server whether its WAL is flushed as far as it is written, and flushes if not:
 * a commit is written to the WAL before anyone can see it, so that flush carries every commit the
 * effect could have read.
 */
import { noStats, type Durability } from './durability.ts';
import type { NodeLocks } from './node-locks.ts';
import type { PgStore } from './pg-store.ts';

export function pgDurability(store: PgStore, nodes?: NodeLocks): Durability {
  const stats = noStats();
  // The generation: commits this process made; a flush begun at generation g carries them all.
  let synced = store.commits.all;
  let inFlight = false;
  let waiters: { gen: number; resolve: () => void; reject: (err: Error) => void }[] = [];

  /** Waiters that need the server's WAL flushed as far as it is written now (other nodes' commits). */
  let foreign: { resolve: () => void; reject: (err: Error) => void }[] = [];

  const flush = async () => {
    inFlight = true;
    const gen = store.commits.all;
    const others = foreign;
    foreign = [];
    try {
      // Own commits to carry: flush. Only others': ask first, flush only if the WAL is behind.
      if (waiters.length > 0 || (await store.walBehind())) await store.flushWal();
      for (const w of others) w.resolve();
      stats.syncs++;
      synced = Math.max(synced, gen);
      const still: typeof waiters = [];
      for (const w of waiters) (w.gen <= synced ? w.resolve() : still.push(w));
      waiters = still;
    } catch (err) {
      // The server is unreachable: whatever waits fails (its request answers an error, logged); the next effect tries again.
      const failed = new Error(`the ledger's commits could not be confirmed on PostgreSQL's disk: ${(err as Error).message}`);
      for (const w of others) w.reject(failed);
      for (const w of waiters.filter((x) => x.gen <= gen)) w.reject(failed);
      waiters = waiters.filter((x) => x.gen > gen);
    } finally {
      inFlight = false;
      if (waiters.length > 0 || foreign.length > 0) void flush();
    }
  };

  return {
    stats,
    durable() {
      const gen = store.commits.all;
      if (gen <= synced) {
        if ((nodes?.liveNodes() ?? 1) <= 1) return undefined;
        stats.waits++;
        return new Promise<void>((resolve, reject) => {
          foreign.push({ resolve, reject });
          if (!inFlight) void flush();
        });
      }
      stats.waits++;
      return new Promise<void>((resolve, reject) => {
        waiters.push({ gen, resolve, reject });
        if (!inFlight) void flush();
      });
    },
    close: () => Promise.resolve(),
  };
}
