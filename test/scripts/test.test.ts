import { expect, test } from 'bun:test';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');

test('npm test names and kills a process a test left behind, and fails the run; it prints the count of tests and the time', async () => {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'scripts', 'test.ts'), './test/fixtures/leaves-a-process.ts'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  expect(stderr).toMatch(/suite: 1 tests in 1 files in [0-9.]+ s on \d+ cores; exit 0/);
  expect(stderr).toContain('1 process(es) left behind by the tests, killed now');
  const pid = Number(stderr.match(/pid (\d+): sleep 300/)?.[1]);
  expect(pid).toBeGreaterThan(0);
  expect(code).toBe(1);
  // SIGKILL is delivered asynchronously: on a loaded machine the process may take a moment to die.
  const dead = async () => {
    const state = await Bun.file(`/proc/${pid}/stat`).text().catch(() => 'gone');
    return state === 'gone' || state.split(' ')[2] === 'Z';
  };
  const deadline = Date.now() + 5000;
  while (!(await dead()) && Date.now() < deadline) await Bun.sleep(20);
  expect(await dead()).toBe(true);
});
