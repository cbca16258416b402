/**
 * One daemon per data directory. Two would run two confirmation jobs over one ledger and two
 * simnets over one state file, and an older binary would keep writing to a file a newer one had
 * migrated. The lock is `daemon.lock`, created exclusively and holding the owner's pid; a lock
 * whose process is gone (kill -9, power loss) is taken over. Taken before the database is opened.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirBusyError';
  }
}

function holderOf(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the data directory's lock for this process; returns its release. Throws DataDirBusyError while another live daemon holds it. */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, 'daemon.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      return () => {
        if (holderOf(path) === process.pid) rmSync(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = holderOf(path);
      if (pid !== null && pid !== process.pid && isAlive(pid)) {
        throw new DataDirBusyError(
          `the data directory ${dataDir} is in use by another agent-wallet daemon (pid ${pid}); stop it first (kill -TERM ${pid}) or use another --data-dir. If no daemon is running, delete ${path}`,
        );
      }
      rmSync(path, { force: true }); // its holder is gone
    }
  }
  throw new DataDirBusyError(`could not take ${path}: another daemon is starting on ${dataDir} at the same moment`);
}
