/**
 * `npm test`: runs `bun test` (arguments pass through), then prints how many tests ran in how
 * long, and fails when the run left a process behind. Every process the run starts, however deep
 * (daemons, simnets, litestream, chromium), inherits a marker in its environment; a process that
 * still carries it after `bun test` exited was orphaned by a test, is named, and is killed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';

// Not AGENT_WALLET_…: test/preload.ts clears those.
const MARKER = 'AW_TEST_RUN';
const run = randomUUID();
const args = process.argv.slice(2);
const started = performance.now();
const proc = Bun.spawn([process.execPath, 'test', '--parallel=2', '--timeout=30000', ...args], {
  env: { ...process.env, [MARKER]: run },
  stdout: 'inherit',
  stderr: 'pipe',
  stdin: 'inherit',
});

// bun test reports on stderr; pass it through and keep the summary line. Not read to its end:
// a process left behind may hold the pipe open.
let summary = '';
const decoder = new TextDecoder();
let tail = '';
const reading = (async () => {
  for await (const chunk of proc.stderr) {
    process.stderr.write(chunk);
    tail = (tail + decoder.decode(chunk, { stream: true })).slice(-4096);
    const m = tail.match(/Ran (\d+) tests? across (\d+) files?/);
    if (m) summary = `${m[1]} tests in ${m[2]} files`;
  }
})();
const code = await proc.exited;
await Promise.race([reading, Bun.sleep(500)]);
const seconds = ((performance.now() - started) / 1000).toFixed(1);

/** Processes other than this one whose environment carries this run's marker. */
function leftBehind(): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`${MARKER}=${run}`)) continue;
      found.push({ pid, cmd: readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim() });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

// Exiting processes may take a moment to be reaped: look again before naming them.
let orphans = process.platform === 'linux' ? leftBehind() : [];
for (let i = 0; orphans.length && i < 20; i++) {
  await Bun.sleep(100);
  orphans = leftBehind();
}
console.error(`\nsuite: ${summary || 'no summary'} in ${seconds} s on ${availableParallelism()} cores; exit ${code}`);
if (orphans.length) {
  console.error(`suite: ${orphans.length} process(es) left behind by the tests, killed now:`);
  for (const o of orphans) {
    console.error(`  pid ${o.pid}: ${o.cmd}`);
    try {
      process.kill(o.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  process.exit(code || 1);
}
if (process.platform === 'linux') console.error('suite: no process left behind');
process.exit(code);
