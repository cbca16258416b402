/**
 * A lock beside a file that several processes rewrite (a profile: the CLI beside a long-running
 * MCP server), held as an exclusive SQLite transaction on `<path>.lock.db`. SQLite locks through
 * the kernel's file locks, which die with their process: a writer killed while holding it blocks
 * no one, and there is no stale lock to judge and take over (a pid file's takeover let two
 * waiters both remove a dead holder's lock and both write). Synchronous, as the profile writes are.
 */
import { Database } from 'bun:sqlite';

/** How long a writer waits for another before giving up with an error. */
const WAIT_MS = 10_000;

export class LockTimeoutError extends Error {
  override readonly name = 'LockTimeoutError';
}

/** Runs `fn` holding `<path>.lock.db`. */
export function withFileLock<T>(path: string, fn: () => T): T {
  const lockPath = `${path}.lock.db`;
  const db = new Database(lockPath, { create: true });
  try {
    db.exec(`PRAGMA busy_timeout = ${WAIT_MS}`);
    try {
      db.exec('BEGIN EXCLUSIVE');
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new LockTimeoutError(`${path} is being written by another process (lock ${lockPath}); try again`);
      throw err;
    }
    try {
      return fn();
    } finally {
      db.exec('COMMIT');
    }
  } finally {
    db.close();
  }
}
