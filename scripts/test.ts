/**
 * `npm test`: bundles src/main.ts for the agent-wallet processes the tests start, runs `bun test`
 * (arguments pass through), then prints how many tests ran in how long, and fails when the run
 * left a process behind. Every process the run starts, however deep (daemons, simnets,
 * litestream, chromium), inherits a marker in its environment; a process that still carries it
 * after `bun test` exited was orphaned by a test, is named, and is killed.
 *
 * Four workers on two cores: most test time is spent waiting on daemons, chains and deadlines,
 * not computing. One global per worker (--no-isolate): loading src again for every file was a
 * fifth of the suite's CPU; test files share no mutable module state.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

// Not AGENT_WALLET_…: test/preload.ts clears those.
const MARKER = 'AW_TEST_RUN';
const run = randomUUID();
const args = process.argv.slice(2);
const started = performance.now();

// Every temp dir of the run (the tests' data dirs, the daemons', the bundle) under one dir,
// removed when the run ends: thousands of them a run otherwise stay behind.
const runTmp = mkdtempSync(join(tmpdir(), 'aw-test-run-'));

// One bundle with bytecode for the run's ~300 CLI, daemon and simnet processes: each starts in
// about half the CPU time of transpiling src again, and the tests run what the binary embeds.
const bundleDir = mkdtempSync(join(runTmp, 'bundle-'));
const build = Bun.spawnSync([process.execPath, 'build', '--target=bun', '--bytecode', '--sourcemap=linked', 'src/main.ts', '--outdir', bundleDir], { stdout: 'ignore', stderr: 'inherit' });
if (build.exitCode !== 0) {
  console.error('suite: bundling src/main.ts failed (above)');
  process.exit(1);
}

// test/timings.json (per-file durations of a past run, `npm test -- --update-timings` refreshes
// it) makes the workers start the slowest files first, so no long file starts last.
const proc = Bun.spawn([process.execPath, 'test', '--parallel=4', '--no-isolate', '--timings=test/timings.json', '--timeout=30000', ...args], {
  env: { ...process.env, [MARKER]: run, AW_TEST_MAIN: join(bundleDir, 'main.js'), TMPDIR: runTmp },
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
// The summary is among the last bytes written; on a loaded machine they may be read a while
// after the exit. A process left behind holding the pipe keeps `reading` open, so bounded.
for (const deadline = performance.now() + 5000; !summary && performance.now() < deadline; ) {
  await Promise.race([reading, Bun.sleep(50)]);
}
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
}
// After the processes are gone: none of them writes there any more.
rmSync(runTmp, { recursive: true, force: true });
if (orphans.length) process.exit(code || 1);
if (process.platform === 'linux') console.error('suite: no process left behind');
process.exit(code);
