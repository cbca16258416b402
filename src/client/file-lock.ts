/**
 * A lock file beside a file that several processes rewrite (a profile: the CLI beside a
 * long-running MCP server). It appears with its owner's pid already in it (written to a temporary
 * file, then hard-linked into place, which fails when the lock exists), so a reader never sees an
 * empty lock; a lock whose process is gone (killed mid-write) is taken over, so a crash never
 * blocks the profile. Synchronous, as the profile writes are.
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/** How long a writer waits for another before giving up with an error naming the holder. */
const WAIT_MS = 10_000;

export class LockTimeoutError extends Error {
  override readonly name = 'LockTimeoutError';
}

function holderAlive(lockPath: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(lockPath, 'utf8').trim());
  } catch {
    return true; // released meanwhile: try again
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `fn` holding `<path>.lock`. */
export function withFileLock<T>(path: string, fn: () => T): T {
  const lockPath = `${path}.lock`;
  const mine = `${lockPath}.${process.pid}`;
  writeFileSync(mine, String(process.pid), { mode: 0o600 });
  const deadline = Date.now() + WAIT_MS;
  try {
    for (;;) {
      try {
        linkSync(mine, lockPath);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        if (!holderAlive(lockPath)) {
          rmSync(lockPath, { force: true });
          continue;
        }
        if (Date.now() > deadline) throw new LockTimeoutError(`${path} is being written by another process (lock ${lockPath}); try again`);
        Bun.sleepSync(2);
        continue;
      }
      try {
        return fn();
      } finally {
        rmSync(lockPath, { force: true });
      }
    }
  } finally {
    rmSync(mine, { force: true });
  }
}
