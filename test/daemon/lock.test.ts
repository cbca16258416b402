import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataDirBusyError, lockDataDir } from '../../src/daemon/lock.ts';
import { tempDir } from '../helpers/services.ts';

const sleeper = Bun.spawn(['sleep', '60']);
afterAll(() => sleeper.kill());

describe('lockDataDir', () => {
  test('takes the lock (0600, holding our pid) and releases it', () => {
    const dir = tempDir('aw-lock-');
    const release = lockDataDir(dir);
    const path = join(dir, 'daemon.lock');
    expect(readFileSync(path, 'utf8')).toBe(`${process.pid}\n`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    release();
    expect(existsSync(path)).toBe(false);
  });

  test('refuses while a live process holds it, naming the pid, and leaves its lock alone', () => {
    const dir = tempDir('aw-lock-');
    const path = join(dir, 'daemon.lock');
    writeFileSync(path, `${sleeper.pid}\n`);
    expect(() => lockDataDir(dir)).toThrow(DataDirBusyError);
    expect(() => lockDataDir(dir)).toThrow(`in use by another agent-wallet daemon (pid ${sleeper.pid})`);
    expect(readFileSync(path, 'utf8')).toBe(`${sleeper.pid}\n`);
  });

  test('takes over a lock whose process is gone, or that holds no pid', async () => {
    const gone = Bun.spawn(['true']);
    await gone.exited;
    for (const content of [`${gone.pid}\n`, 'not a pid\n', '']) {
      const dir = tempDir('aw-lock-');
      writeFileSync(join(dir, 'daemon.lock'), content);
      const release = lockDataDir(dir);
      expect(readFileSync(join(dir, 'daemon.lock'), 'utf8')).toBe(`${process.pid}\n`);
      release();
    }
  });

  test('a release does not remove a lock another process has taken since', () => {
    const dir = tempDir('aw-lock-');
    const release = lockDataDir(dir);
    writeFileSync(join(dir, 'daemon.lock'), `${sleeper.pid}\n`);
    release();
    expect(readFileSync(join(dir, 'daemon.lock'), 'utf8')).toBe(`${sleeper.pid}\n`);
  });
});
