/**
 * A throwaway PostgreSQL cluster for tests and CI.
 * initdb, pg_ctl and postgres refuse to run as root, so as root the data directory belongs to
 * `postgres` and every command runs through `runuser -u postgres --`.
 */
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  dir: string;
  stop(): Promise<void>;
}

const MIN_VERSION = 15;

/** Not the run's TMPDIR: the suite makes that 0700 for root, and the cluster runs as `postgres`, which must reach its dir. */
const PG_TMP = '/tmp';

/** No PostgreSQL ≥ 15 here: the one failure a test may answer by skipping. */
export class PgNotInstalledError extends Error {
  constructor() {
    super(`no PostgreSQL ≥ ${MIN_VERSION} binaries (initdb, pg_ctl) in /usr/lib/postgresql/*/bin or on PATH; install Debian's \`postgresql\` package (apt-get install postgresql)`);
    this.name = 'PgNotInstalledError';
  }
}

const asRoot = process.getuid?.() === 0;

/** The directory holding initdb and pg_ctl: Debian's newest /usr/lib/postgresql/N/bin (N ≥ 15), else PATH. */
function pgBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root).map(Number).filter((v) => v >= MIN_VERSION && existsSync(join(root, String(v), 'bin', 'pg_ctl'))).sort((a, b) => b - a)
    : [];
  if (versions.length > 0) return join(root, String(versions[0]), 'bin');
  const onPath = Bun.which('pg_ctl');
  if (onPath && Bun.which('initdb')) {
    const version = Number(/(\d+)/.exec(run([onPath, '--version']))?.[1] ?? 0);
    if (version >= MIN_VERSION) return join(onPath, '..');
  }
  throw new PgNotInstalledError();
}

function run(cmd: string[]): string {
  const full = asRoot ? ['runuser', '-u', 'postgres', '--', ...cmd] : cmd;
  // process.env as it is now (Bun's default is the environment the process started with): the
  // server then carries what the caller added, such as the suite's marker (scripts/test.ts).
  const res = Bun.spawnSync(full, { stdout: 'pipe', stderr: 'pipe', env: process.env });
  if (res.exitCode !== 0) throw new Error(`${cmd.join(' ')} failed (exit ${res.exitCode}): ${res.stderr.toString()}${res.stdout.toString()}`);
  return res.stdout.toString();
}

/** A port that was free a moment ago: the kernel's pick for port 0, released before the server (postgres, caddy) binds it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port from the kernel'))));
    });
  });
}

function ownerIds(): { uid: number; gid: number } {
  const id = (flag: string) => Number(Bun.spawnSync(['id', flag, 'postgres']).stdout.toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Creates a cluster in a new temp dir and starts it on 127.0.0.1 (and a socket in the dir).
 * fsync stays on: crash tests need real durability; only initdb skips its syncs. Encoding and
 * locale are fixed (UTF8, C) so text compares byte by byte, as in SQLite, whatever the host's locale.
 */
export async function startPgCluster(opts: { port?: number } = {}): Promise<PgCluster> {
  const bin = pgBinDir();
  const dir = mkdtempSync(join(PG_TMP, 'aw-pg-'));
  try {
    if (asRoot) {
      const { uid, gid } = ownerIds();
      chownSync(dir, uid, gid);
    }
    run([join(bin, 'initdb'), '-D', dir, '-A', 'trust', '-U', 'postgres', '--no-sync', '--encoding=UTF8', '--locale=C']);
    // A port picked free can be taken before postgres binds it: pick again, a few times.
    for (let attempt = 1; ; attempt++) {
      const port = opts.port ?? (await freePort());
      try {
        run([join(bin, 'pg_ctl'), '-D', dir, '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, '-l', join(dir, 'log'), 'start', '-w']);
        return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, dir, stop: () => stopPgCluster(dir) };
      } catch (err) {
        if (opts.port !== undefined || attempt === 3) throw err;
      }
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Stops the cluster in `dir` and removes the dir. Fast shutdown by default: open sessions are
 * ended, and a checkpoint writes what is dirty. `immediate` skips that checkpoint (the server is
 * ended as by a crash): for a cluster thrown away with its dir, whose data nobody reads again.
 */
export async function stopPgCluster(dir: string, opts: { immediate?: boolean } = {}): Promise<void> {
  run([join(pgBinDir(), 'pg_ctl'), '-D', dir, 'stop', '-m', opts.immediate ? 'immediate' : 'fast', '-w']);
  rmSync(dir, { recursive: true, force: true });
}

/** Whether this machine has PostgreSQL ≥ 15 binaries (startPgCluster would find them). */
export function pgInstalled(): boolean {
  try {
    pgBinDir();
    return true;
  } catch (err) {
    if (err instanceof PgNotInstalledError) return false;
    throw err;
  }
}

/**
 * A cluster for a test file, or null (with a warning) when this machine has no PostgreSQL binaries:
 * the file's tests are then reported skipped. In CI (CI set) a missing PostgreSQL fails instead, so
 * the suite never passes with its PostgreSQL tests quietly left out.
 */
export async function startPgClusterOrSkip(what: string): Promise<PgCluster | null> {
  try {
    return await startPgCluster();
  } catch (err) {
    if (!(err instanceof PgNotInstalledError) || process.env.CI) throw err;
    console.warn(`skipping ${what}: ${err.message}`);
    return null;
  }
}

/**
 * The environment variable naming the cluster `npm test` (scripts/test.ts) starts once for the run,
 * on which the test files that need a PostgreSQL server of their own make their databases. Unlike
 * AW_TEST_PG_URL it puts no ledger on PostgreSQL. Not AGENT_WALLET_…: test/preload.ts clears those.
 */
export const RUN_PG_SERVER_ENV = 'AW_TEST_PG_SERVER';

/**
 * What a file does on a machine without PostgreSQL: `skip-locally` (startPgClusterOrSkip's rule:
 * skipped, but in CI an error), `skip` (skipped, in CI too), `fail` (an error).
 */
export type IfPgMissing = 'skip-locally' | 'skip' | 'fail';

/**
 * The PostgreSQL server for a test file that needs one: AW_TEST_PG_URL's when the whole run is on
 * PostgreSQL, else the run's shared cluster (AW_TEST_PG_SERVER, started by `npm test`), else — the
 * file run alone with `bun test` — a throwaway cluster of its own, returned as `cluster` for the
 * file to stop in its afterAll (null on a server the file does not own). The server is shared with
 * the run's other files: a file makes a fresh database of its own on it (emptyPgDatabase) and
 * works there, never in the server's `postgres` database, and stops or restarts nothing.
 *
 * `url` is null when the file is skipped: no PostgreSQL here, and `ifMissing` allows the skip
 * (then `what` is named in the warning).
 */
export async function pgServerForFile(what: string, ifMissing: 'fail'): Promise<{ url: string; cluster: PgCluster | null }>;
export async function pgServerForFile(what: string, ifMissing?: IfPgMissing): Promise<{ url: string | null; cluster: PgCluster | null }>;
export async function pgServerForFile(what: string, ifMissing: IfPgMissing = 'skip-locally'): Promise<{ url: string | null; cluster: PgCluster | null }> {
  const shared = process.env.AW_TEST_PG_URL || process.env[RUN_PG_SERVER_ENV];
  if (shared) return { url: shared, cluster: null };
  try {
    const cluster = await startPgCluster();
    return { url: cluster.url, cluster };
  } catch (err) {
    if (!(err instanceof PgNotInstalledError) || ifMissing === 'fail' || (ifMissing === 'skip-locally' && process.env.CI)) throw err;
    console.warn(`skipping ${what}: ${err.message}`);
    return { url: null, cluster: null };
  }
}
