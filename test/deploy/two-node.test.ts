/**
 * deploy/two-node/: two daemons on one PostgreSQL ledger behind Caddy. caddy itself validates both
 * Caddyfiles; the compose file parses and gives both nodes the same secrets and database, in the
 * names the daemon really reads (through loadConfig); the systemd unit keeps the single-node unit's
 * hardening; and a real caddy with the same balancing settings (test/helpers/caddy.ts) shares
 * requests round robin, drops a node whose /readyz answers 503, and carries on when a node dies.
 * Without caddy the Caddy tests say so and skip, or fail in CI (as the PostgreSQL tests do).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Server } from 'bun';
import { loadConfig } from '../../src/config.ts';
import { balancerConfig, caddyEnv, caddyOrSkip, startCaddyBalancer, type CaddyBalancer } from '../helpers/caddy.ts';
import { until } from '../helpers/poll.ts';
import { tempDir } from '../helpers/services.ts';

const ROOT = resolve(import.meta.dir, '..', '..');
const DIR = join(ROOT, 'deploy', 'two-node');
const read = (...path: string[]) => readFileSync(join(ROOT, ...path), 'utf8');

const caddy = caddyOrSkip('the two-node Caddy tests (caddy validate, the balancer)');
const withCaddy = caddy ? describe : describe.skip;

/** The directive lines (trimmed, comments and blank lines dropped) of the first `name … {` block, nested blocks included. */
function block(caddyfile: string, name: string): string[] {
  const lines = caddyfile.split('\n').map((l) => l.replace(/#.*$/, '').trim()).filter((l) => l.length > 0);
  const start = lines.findIndex((l) => l.startsWith(`${name} `) && l.endsWith('{'));
  if (start < 0) throw new Error(`no "${name} … {" block`);
  const out: string[] = [];
  let depth = 1;
  for (const line of lines.slice(start + 1)) {
    if (line === '}') depth--;
    if (depth === 0) return out;
    if (line.endsWith('{')) depth++;
    out.push(line);
  }
  throw new Error(`the "${name}" block is not closed`);
}

/** The first line of `lines` starting with `directive `, or undefined. */
const directive = (lines: string[], name: string) => lines.find((l) => l.startsWith(`${name} `));

describe('deploy/two-node Caddyfiles', () => {
  const prod = read('deploy', 'two-node', 'Caddyfile');
  const compose = read('deploy', 'two-node', 'Caddyfile.compose');

  test('the production file balances over both nodes round robin, checks /readyz actively and failures passively, and retries on the other node', () => {
    const proxy = block(prod, 'reverse_proxy');
    expect(prod).toMatch(/^\s*reverse_proxy 10\.0\.0\.11:8787 10\.0\.0\.12:8787 \{$/m);
    for (const line of ['lb_policy round_robin', 'health_uri /readyz', 'health_interval 2s', 'health_timeout 2s', 'health_status 200', 'lb_try_duration 5s', 'lb_try_interval 250ms', 'read_timeout 60s']) {
      expect(proxy).toContain(line);
    }
    expect(directive(proxy, 'fail_duration')).toBeDefined();
    expect(directive(proxy, 'max_fails')).toBeDefined();
    // The retry's safety is stated where the retry is configured.
    expect(prod).toMatch(/Idempotency-Key/);
  });

  test('the production file serves wallet.example.com, blocks /metrics and sends the single-node file\'s security headers', () => {
    const single = read('deploy', 'Caddyfile');
    expect(prod).toMatch(/^wallet\.example\.com \{$/m);
    expect(block(prod, 'wallet.example.com')).toEqual(expect.arrayContaining(['@metrics path /metrics', 'respond @metrics 404']));
    expect(block(prod, 'header')).toEqual(block(single, 'header'));
  });

  test('Caddyfile.compose proxies to the two compose nodes on :8080 with the same balancing block as the production file', () => {
    expect(compose).toMatch(/^:8080 \{$/m);
    expect(compose).toMatch(/^\s*reverse_proxy node-a:8787 node-b:8787 \{$/m);
    expect(block(compose, 'reverse_proxy')).toEqual(block(prod, 'reverse_proxy'));
    expect(block(compose, ':8080')).toEqual(expect.arrayContaining(['@metrics path /metrics', 'respond @metrics 404']));
  });

  test("the tests' balancer (helpers/caddy.ts) carries the production file's balancing directives, only checking every 1 s", () => {
    const test = block(balancerConfig(['http://127.0.0.1:1', 'http://127.0.0.1:2'], 3), 'reverse_proxy');
    const prodProxy = block(prod, 'reverse_proxy');
    const withoutInterval = (lines: string[]) => lines.filter((l) => !l.startsWith('health_interval '));
    expect(withoutInterval(test)).toEqual(withoutInterval(prodProxy));
    expect(directive(test, 'health_interval')).toBe('health_interval 1s');
  });

  withCaddy('caddy validate', () => {
    for (const file of ['Caddyfile', 'Caddyfile.compose']) {
      test(`caddy validate accepts deploy/two-node/${file}`, () => {
        const home = tempDir('aw-caddy-validate-');
        const res = Bun.spawnSync([caddy!, 'validate', '--config', join(DIR, file), '--adapter', 'caddyfile'], { cwd: home, env: caddyEnv(home), stdout: 'pipe', stderr: 'pipe' });
        expect(res.exitCode, `caddy validate ${file}:\n${res.stderr.toString()}${res.stdout.toString()}`).toBe(0);
      });
    }
  });
});

describe('deploy/two-node/compose.yaml', () => {
  type Service = {
    image?: string;
    build?: { context: string; dockerfile: string };
    depends_on?: Record<string, { condition: string }> | string[];
    environment?: Record<string, string>;
    secrets?: { source: string; target: string }[];
    volumes?: string[];
    healthcheck?: { test: string[] };
    ports?: string[];
  };
  type Compose = { services: Record<string, Service>; secrets: Record<string, { file: string }>; volumes: Record<string, unknown> };
  const doc = Bun.YAML.parse(read('deploy', 'two-node', 'compose.yaml')) as Compose;
  const { services } = doc;
  const nodes = ['node-a', 'node-b'].map((name) => {
    const s = services[name];
    if (!s) throw new Error(`compose.yaml has no service ${name}`);
    return s;
  });
  /** compose's `${VAR:?message}` / `${VAR}` interpolation, with a value for every variable. */
  const interpolate = (s: string) => s.replace(/\$\{([A-Z_]+)(:?[?-][^}]*)?\}/g, (_m, name: string) => `test-${name.toLowerCase()}`);

  test('holds postgres, two nodes and caddy; PostgreSQL 16 with a named volume and a pg_isready healthcheck', () => {
    expect(Object.keys(services).sort()).toEqual(['caddy', 'node-a', 'node-b', 'postgres']);
    const pg = services.postgres!;
    expect(pg.image).toMatch(/^postgres:16(\b|$)/);
    expect(pg.healthcheck?.test.join(' ')).toContain('pg_isready');
    const [volume] = (pg.volumes ?? [])[0]!.split(':');
    expect(Object.keys(doc.volumes)).toContain(volume!);
  });

  test('both nodes are built from deploy/Dockerfile and wait for a healthy postgres', () => {
    for (const node of nodes) {
      expect(existsSync(join(DIR, node.build!.context, node.build!.dockerfile))).toBe(true);
      expect(resolve(DIR, node.build!.context, node.build!.dockerfile)).toBe(join(ROOT, 'deploy', 'Dockerfile'));
      expect(node.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    }
  });

  test('both nodes get the same secret files and database URL, and the daemon reads them where they are mounted', () => {
    const [a, b] = nodes as [Service, Service];
    expect(a.environment).toEqual(b.environment!);
    expect(a.secrets).toEqual(b.secrets!);
    const files = Object.fromEntries(Object.entries(doc.secrets).map(([name, s]) => [name, s.file]));
    const mounted = Object.fromEntries(a.secrets!.map((s) => [files[s.source], s.target]));
    // The image's data dir (deploy/Dockerfile: serve --data-dir /data): master.key is read only from there.
    expect(read('deploy', 'Dockerfile')).toContain('CMD ["serve", "--data-dir", "/data"]');
    expect(mounted['./secrets/master.key']).toBe('/data/master.key');
    const feePayerTarget = mounted['./secrets/fee-payer.json'];
    expect(feePayerTarget).toBeDefined();

    const env = Object.fromEntries(Object.entries(a.environment!).map(([k, v]) => [k, interpolate(String(v))]));
    const url = new URL(env.AGENT_WALLET_DATABASE_URL!);
    expect(url.hostname).toBe('postgres');
    expect(url.username).toBe(services.postgres!.environment!.POSTGRES_USER!);
    expect(url.password).toBe(interpolate(services.postgres!.environment!.POSTGRES_PASSWORD!));
    expect(url.pathname).toBe(`/${services.postgres!.environment!.POSTGRES_DB}`);

    // Through the daemon's own config loader: the variable names are ones it reads.
    const config = loadConfig({ dataDir: tempDir('aw-compose-') }, env);
    expect(config.database.url).toBe(env.AGENT_WALLET_DATABASE_URL!);
    expect(config.solana.fee_payer_keypair_file).toBe(feePayerTarget!);
    // One chain for both: simnet would run a chain inside each node.
    expect(config.solana.network).not.toBe('simnet');
  });

  test('each node keeps a /data volume of its own', () => {
    const data = nodes.map((n) => n.volumes!.find((v) => v.endsWith(':/data')));
    expect(data[0]).toBeDefined();
    expect(data[1]).toBeDefined();
    expect(data[0]).not.toBe(data[1]!);
  });

  test('caddy serves Caddyfile.compose on :8080 and starts with both nodes', () => {
    const c = services.caddy!;
    expect(c.image).toMatch(/^caddy:2/);
    expect(c.depends_on).toEqual(expect.arrayContaining(['node-a', 'node-b']));
    expect(c.volumes).toContain('./Caddyfile.compose:/etc/caddy/Caddyfile:ro');
    expect(c.ports?.some((p) => p.endsWith(':8080'))).toBe(true);
  });
});

describe('deploy/two-node/agent-wallet-node.service', () => {
  type Unit = Map<string, Map<string, string[]>>;
  /** Sections → keys → values, in order (a key may repeat). */
  function parseUnit(text: string): Unit {
    const unit: Unit = new Map();
    let section: Map<string, string[]> | undefined;
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
      const header = /^\[(.+)\]$/.exec(line);
      if (header) {
        section = new Map();
        unit.set(header[1]!, section);
        continue;
      }
      const eq = line.indexOf('=');
      if (!section || eq < 0) throw new Error(`not a unit file line: ${line}`);
      const key = line.slice(0, eq);
      section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1)]);
    }
    return unit;
  }
  const text = read('deploy', 'two-node', 'agent-wallet-node.service');
  const node = parseUnit(text);
  const get = (section: string, key: string) => node.get(section)?.get(key);

  test('reads AGENT_WALLET_DATABASE_URL from /etc/agent-wallet/node.env (0600) and refuses to start without it', () => {
    expect(get('Service', 'EnvironmentFile')).toEqual(['/etc/agent-wallet/node.env']);
    expect(text).toMatch(/node\.env \(root, mode 0600/);
    expect(text).toMatch(/^#\s+AGENT_WALLET_DATABASE_URL=postgres:\/\//m);
    expect(get('Service', 'ExecStartPre')?.[0]).toContain('$$AGENT_WALLET_DATABASE_URL');
  });

  test('starts after the network is online, restarts always, with the crash-loop brake in [Unit] where systemd reads it', () => {
    expect(get('Unit', 'After')).toEqual(['network-online.target']);
    expect(get('Unit', 'Wants')).toEqual(['network-online.target']);
    expect(get('Service', 'Restart')).toEqual(['always']);
    expect(get('Unit', 'StartLimitIntervalSec')).toBeDefined();
    expect(get('Unit', 'StartLimitBurst')).toBeDefined();
    expect(get('Service', 'StartLimitIntervalSec')).toBeUndefined();
  });

  test('keeps every [Service] setting of the single-node unit (hardening, user, data dir, shutdown), Restart aside', () => {
    const single = parseUnit(read('deploy', 'agent-wallet.service')).get('Service')!;
    const moved = new Set(['Restart', 'StartLimitIntervalSec', 'StartLimitBurst']);
    for (const [key, values] of single) {
      if (moved.has(key)) continue;
      expect(get('Service', key), `[Service] ${key}`).toEqual(values);
    }
  });

  test('says master.key and fee-payer.json must be the same files on every node', () => {
    expect(text).toMatch(/master\.key and fee-payer\.json MUST be the same files on every node/);
  });

  test.skipIf(!Bun.which('systemd-analyze'))('systemd-analyze verify finds nothing to say (with ExecStart pointed at a binary that exists here)', () => {
    const dir = tempDir('aw-unit-');
    const file = join(dir, 'agent-wallet-node.service');
    writeFileSync(file, text.replaceAll('/usr/local/bin/agent-wallet', process.execPath));
    const res = Bun.spawnSync(['systemd-analyze', 'verify', file], { stdout: 'pipe', stderr: 'pipe' });
    const out = `${res.stderr.toString()}${res.stdout.toString()}`;
    expect(out, out).not.toMatch(/Unknown key|Invalid|ignoring/i);
    expect(res.exitCode, out).toBe(0);
  });
});

/** A stand-in node: /readyz answers 200 (or 503 while `ready` is false), /who its name. */
interface FakeNode {
  name: string;
  url: string;
  state: { ready: boolean; readyzHits: number };
  server: Server<undefined>;
}

function fakeNode(name: string): FakeNode {
  const state = { ready: true, readyzHits: 0 };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === '/readyz') {
        state.readyzHits++;
        return state.ready ? new Response('ready') : new Response('not ready', { status: 503, headers: { 'Retry-After': '5' } });
      }
      if (path === '/who') return new Response(name);
      return new Response('not found', { status: 404 });
    },
  });
  return { name, url: `http://127.0.0.1:${server.port}`, state, server };
}

withCaddy('a real caddy with the two-node balancing settings', () => {
  let a: FakeNode;
  let b: FakeNode;
  let lb: CaddyBalancer;

  beforeEach(async () => {
    a = fakeNode('a');
    b = fakeNode('b');
    lb = await startCaddyBalancer([a.url, b.url]);
  });

  afterEach(async () => {
    await lb?.stop();
    await a?.server.stop(true);
    await b?.server.stop(true);
  });

  /** `n` requests one after another; each answer's node name, or the status when it failed. */
  async function who(n: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${lb.url}/who`);
      const body = await res.text();
      out.push(res.status === 200 ? body : `HTTP ${res.status}`);
    }
    return out;
  }

  test('requests alternate between the two nodes (round robin)', async () => {
    const names = await who(8);
    expect(new Set(names)).toEqual(new Set(['a', 'b']));
    for (let i = 1; i < names.length; i++) expect(names[i], names.join(' ')).not.toBe(names[i - 1]!);
  }, 20_000);

  test('a node whose /readyz answers 503 gets no requests once the active check sees it, and gets them back when ready', async () => {
    b.state.ready = false;
    await until('every request to go to node a', async () => (await who(6)).every((n) => n === 'a'), 10_000);
    expect(await who(10)).toEqual(Array(10).fill('a'));
    expect(b.state.readyzHits).toBeGreaterThan(0);

    b.state.ready = true;
    await until('node b to take requests again', async () => (await who(4)).includes('b'), 10_000);
  }, 30_000);

  test('with a node stopped outright every request still succeeds through the other (lb_try retries, passive checks)', async () => {
    expect(new Set(await who(4))).toEqual(new Set(['a', 'b']));
    await a.server.stop(true);
    // No wait for an active check: a request that finds node a's port closed is tried on node b.
    expect(await who(10)).toEqual(Array(10).fill('b'));
  }, 20_000);
});
