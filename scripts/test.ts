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
 *
 * One PostgreSQL cluster for the run (when PostgreSQL is installed and the run names no server of
 * its own): the files that need a server (pgServerForFile in test/helpers/pg.ts) each make their
 * own databases on it, instead of each paying initdb and a start (2-4 s of CPU) for a cluster of
 * their own. It is passed as AW_TEST_PG_SERVER, which puts no ledger on PostgreSQL (AW_TEST_PG_URL
 * does), and stopped when the run ends, also on SIGINT or SIGTERM, before the check for processes
 * left behind.
 */
import type { Subprocess } from 'bun';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pgInstalled, RUN_PG_SERVER_ENV, startPgCluster, stopPgCluster, type PgCluster } from '../test/helpers/pg.ts';

// Not AGENT_WALLET_…: test/preload.ts clears those.
const MARKER = 'AW_TEST_RUN';
const run = randomUUID();
const args = process.argv.slice(2);
const started = performance.now();

// Every temp dir of the run (the tests' data dirs, the daemons', the bundle) under one dir,
// removed when the run ends: thousands of them a run otherwise stay behind.
const runTmp = mkdtempSync(join(tmpdir(), 'aw-test-run-'));

// The run's PostgreSQL cluster, while it runs.
let cluster: PgCluster | null = null;

/** Stops the run's cluster, its processes gone when this returns, and removes its dir. */
async function stopCluster(): Promise<void> {
  const c = cluster;
  cluster = null;
  if (!c) return;
  // Immediate: no shutdown checkpoint, for a cluster thrown away. A server already gone (killed
  // with the tests' process group) fails pg_ctl; its dir goes all the same.
  await stopPgCluster(c.dir, { immediate: true }).catch((err: unknown) => console.error(`suite: stopping the run's PostgreSQL: ${(err as Error).message}`));
  rmSync(c.dir, { recursive: true, force: true });
}

// SIGINT (Ctrl-C) or SIGTERM: passed on to what runs (the bundler, then bun test); once it has
// ended, the run ends as usual below (its cluster stopped, the check for processes left behind,
// the temp dir removed) and exits 128 + the signal's number. A second signal, or bun test still
// running 15 s on, kills it outright.
let child: Subprocess | null = null;
let interrupted = 0;
for (const [signal, number] of [['SIGINT', 2], ['SIGTERM', 15]] as const) {
  process.on(signal, () => {
    if (interrupted) {
      child?.kill('SIGKILL');
      return;
    }
    interrupted = number;
    console.error(`\nsuite: ${signal}: ending the run`);
    child?.kill(signal);
    setTimeout(() => child?.kill('SIGKILL'), 15_000).unref();
  });
}

/** Before bun test ran: stops what was started, removes the temp dir, exits. */
async function abandon(code: number): Promise<never> {
  child?.kill('SIGKILL');
  await child?.exited;
  await stopCluster();
  rmSync(runTmp, { recursive: true, force: true });
  process.exit(code);
}

// One bundle with bytecode for the run's ~300 CLI, daemon and simnet processes: each starts in
// about half the CPU time of transpiling src again, and the tests run what the binary embeds.
// Minified as scripts/build.ts makes the binary: a CLI process then starts in ~185 ms of CPU
// instead of ~235 (less bytecode to load), some 16% less CPU over the end-to-end files.
// Built while the run's cluster starts. A run started by a test of this run (test/scripts/
// test.test.ts: AW_TEST_MAIN is the outer run's bundle, and exists) uses that bundle: building
// another costs some 5 s of CPU that the rest of the suite waits for on two cores.
const outerBundle = process.env.AW_TEST_MAIN && process.env[MARKER] && existsSync(process.env.AW_TEST_MAIN) ? process.env.AW_TEST_MAIN : null;
const bundleDir = mkdtempSync(join(runTmp, 'bundle-'));
const mainJs = outerBundle ?? join(bundleDir, 'main.js');
const build = outerBundle
  ? null
  : Bun.spawn([process.execPath, 'build', '--target=bun', '--bytecode', '--minify', '--sourcemap=linked', 'src/main.ts', '--outdir', bundleDir], { stdout: 'ignore', stderr: 'inherit' });
child = build;

// The cluster carries the marker, as every process the tests start: were it still running at the
// check below, it would be named and killed there.
process.env[MARKER] = run;
if (!process.env.AW_TEST_PG_URL && !process.env[RUN_PG_SERVER_ENV] && pgInstalled()) {
  try {
    cluster = await startPgCluster();
  } catch (err) {
    console.error(`suite: starting the run's PostgreSQL failed: ${(err as Error).message}`);
    await abandon(1);
  }
}
// No PostgreSQL here: nothing is set, and each file skips (locally) or fails (in CI) as it would alone.
if ((build ? await build.exited : 0) !== 0 || interrupted) {
  if (interrupted) await abandon(128 + interrupted);
  console.error('suite: bundling src/main.ts failed (above)');
  await abandon(1);
}

// test/timings.json (per-file durations of a past run, `npm test -- --update-timings` refreshes
// it) makes the workers start the slowest files first, so no long file starts last.
const proc = Bun.spawn([process.execPath, 'test', '--parallel=4', '--no-isolate', '--timings=test/timings.json', '--timeout=30000', ...args], {
  env: {
    ...process.env,
    [MARKER]: run,
    AW_TEST_MAIN: mainJs,
    TMPDIR: runTmp,
    ...(cluster ? { [RUN_PG_SERVER_ENV]: cluster.url } : {}),
  },
  stdout: 'inherit',
  stderr: 'pipe',
  stdin: 'inherit',
});
child = proc;

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
// Before the check below: the cluster's processes are the run's, and must be gone by then.
await stopCluster();

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
process.exit(interrupted ? 128 + interrupted : code);
