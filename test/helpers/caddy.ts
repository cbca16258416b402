/**
 * Caddy as the load balancer of deploy/two-node/, for tests: the same load balancing and health
 * settings as deploy/two-node/Caddyfile, on loopback over plain HTTP, in a temp dir of its own
 * (its config, data and HOME: it writes nothing outside), with no admin endpoint so any number run side by side.
 */
import { freePort } from './pg.ts';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './poll.ts';

/** The `caddy` binary on PATH, or null. */
export function caddyPath(): string | null {
  return Bun.which('caddy');
}

/** No caddy here: the one failure a test may answer by skipping. */
export class CaddyNotInstalledError extends Error {
  constructor() {
    super('no `caddy` on PATH; install Debian\'s `caddy` package (apt-get install caddy)');
    this.name = 'CaddyNotInstalledError';
  }
}

/**
 * The caddy binary for a test file, or null (with a warning) when this machine has none: the
 * file's Caddy tests are then reported skipped. In CI (CI set) a missing caddy throws instead, so
 * the suite never passes with its balancer tests quietly left out (as startPgClusterOrSkip).
 */
export function caddyOrSkip(what: string): string | null {
  const path = caddyPath();
  if (path) return path;
  const err = new CaddyNotInstalledError();
  if (process.env.CI) throw err;
  console.warn(`skipping ${what}: ${err.message}`);
  return null;
}

/**
 * The environment caddy runs with: HOME and the XDG dirs inside `dir`, so its autosave, storage
 * and ~/.step stay in the temp dir. PATH is kept; so is the test run's marker (scripts/test.ts finds a caddy left behind).
 */
export function caddyEnv(dir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return { ...env, HOME: join(dir, 'home'), XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') };
}

/**
 * The Caddyfile of a test balancer on 127.0.0.1:`port` in front of `upstreams` (http://127.0.0.1:PORT).
 * The reverse_proxy block carries deploy/two-node/Caddyfile's directives (the deploy test compares
 * them), except that active checks run every 1 s instead of 2 s so tests wait less.
 */
export function balancerConfig(upstreams: string[], port: number): string {
  return `{
	admin off
	auto_https off
	# Idle keep-alive connections close at once on SIGTERM; this bounds the rest.
	grace_period 1s
}

:${port} {
	bind 127.0.0.1

	reverse_proxy ${upstreams.join(' ')} {
		lb_policy round_robin

		health_uri /readyz
		health_interval 1s
		health_timeout 2s
		health_status 200

		fail_duration 10s
		max_fails 1

		lb_try_duration 5s
		lb_try_interval 250ms

		transport http {
			read_timeout 60s
		}
	}
}
`;
}

/** Whether something answers HTTP on `url` (any status: a 502 before the upstreams do is still caddy). */
async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

/** A running test balancer: `url` is http://127.0.0.1:PORT; `stop` ends caddy and removes its temp dir. */
export interface CaddyBalancer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts caddy in front of `upstreams` and resolves once its port answers (deadline 15 s). A port
 * taken between the pick and caddy's bind is picked again, a few times. Throws CaddyNotInstalledError
 * without caddy, and an error carrying caddy's log when it does not come up.
 */
export async function startCaddyBalancer(upstreams: string[]): Promise<CaddyBalancer> {
  const bin = caddyPath();
  if (!bin) throw new CaddyNotInstalledError();
  const dir = mkdtempSync(join(tmpdir(), 'aw-caddy-'));
  const log = join(dir, 'caddy.log');
  const config = join(dir, 'Caddyfile');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    writeFileSync(config, balancerConfig(upstreams, port));
    // One descriptor for both streams: its log, read back when caddy does not come up.
    const fd = openSync(log, 'w');
    const proc = Bun.spawn([bin, 'run', '--config', config, '--adapter', 'caddyfile'], { cwd: dir, env: caddyEnv(dir), stdin: 'ignore', stdout: fd, stderr: fd });
    closeSync(fd);
    const url = `http://127.0.0.1:${port}`;
    let exited = false;
    void proc.exited.then(() => (exited = true));
    const stop = async () => {
      if (!exited) {
        proc.kill('SIGTERM');
        if (!(await exitsWithin(proc, 5_000))) {
          proc.kill('SIGKILL');
          await proc.exited;
        }
      }
      rmSync(dir, { recursive: true, force: true });
    };
    try {
      await until(`caddy to answer on ${url}`, async () => exited || (await answers(url)), 15_000);
    } catch (err) {
      const text = readLog(log);
      await stop();
      throw new Error(`${(err as Error).message}; caddy's log:\n${text}`);
    }
    if (!exited) return { url, stop };
    // Exited before it answered: a port taken meanwhile is picked again; anything else is reported.
    const text = readLog(log);
    if (attempt < 3 && /address already in use/.test(text)) continue;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`caddy exited with code ${proc.exitCode} before it answered on ${url}; its log:\n${text}`);
  }
}

/** Whether `proc` exits within `ms` (the timer is cleared as soon as it does). */
async function exitsWithin(proc: Bun.Subprocess, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([proc.exited.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function readLog(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '(no log)';
  }
}
