/**
 * SQLite busy: another process holds the write lock. Within busy_timeout (5 s) requests wait and
 * succeed late; beyond it they answer 503 with Retry-After and nothing is half-written.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { loadConfig } from '../../src/config.ts';
import { buildServices } from '../../src/daemon/services.ts';
import { openDatabase } from '../../src/db/open.ts';
import { silentLogger } from '../../src/log.ts';
import { loadFeePayer, loadMasterKey } from '../../src/secret-files.ts';
import type { Services } from '../../src/services.ts';
import { startTestServer, tempDir } from '../helpers/services.ts';

const dataDir = tempDir('aw-busy-');
const dbPath = join(dataDir, 'wallet.db');
let services: Services;
let server: { url: string; stop: () => Promise<void> };
let apiKey: string;

beforeAll(async () => {
  const config = loadConfig({ dataDir }, { AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '100000' });
  config.rpcUrl = 'http://127.0.0.1:9';
  services = buildServices({ config, db: openDatabase(dbPath, { network: 'simnet' }), log: silentLogger, masterKey: loadMasterKey(dataDir), feePayer: loadFeePayer(dataDir, 'fee-payer.json'), listenUrl: () => 'http://127.0.0.1:1' });
  server = await startTestServer(services);
  apiKey = (await registerWallet(new ApiClient(server.url), { name: 'Busy' })).profile.api_key;
});
afterAll(() => server.stop());

/** Another process takes the write lock and keeps it for `ms`; resolves once it holds it. */
async function holdWriteLock(ms: number): Promise<{ released: Promise<number> }> {
  const script = `
    const { Database } = require('bun:sqlite');
    const db = new Database(${JSON.stringify(dbPath)});
    db.run('PRAGMA busy_timeout = 5000');
    db.run('BEGIN IMMEDIATE');
    console.log('LOCKED');
    setTimeout(() => { db.run('COMMIT'); db.close(); process.exit(0); }, ${ms});`;
  const proc = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'inherit' });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!out.includes('LOCKED')) {
    const { value, done } = await reader.read();
    if (done) throw new Error('lock holder exited early');
    out += new TextDecoder().decode(value);
  }
  // Wrapped: an async function returning a promise would wait for it.
  return { released: proc.exited };
}

async function rename(name: string) {
  const res = await fetch(`${server.url}/bot`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: JSON.stringify({ action: 'update_name', name }) });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
}

const currentName = async () => ((await services.db.get('SELECT name FROM wallets')) as { name: string }).name;

test('a 2 s lock held by another process: the request succeeds late', async () => {
  const { released } = await holdWriteLock(2000);
  const started = performance.now();
  const res = await rename('After Wait');
  expect(res.status).toBe(200);
  expect(performance.now() - started).toBeGreaterThan(1000);
  expect(await currentName()).toBe('After Wait');
  await released;
});

test('a 10 s lock: 503 SERVICE_UNAVAILABLE with Retry-After, and no partial write', async () => {
  const { released } = await holdWriteLock(10_000);
  const res = await rename('Never Written');
  expect(res.status).toBe(503);
  expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
  expect(Number(res.retryAfter)).toBeGreaterThan(0);
  await released;
  expect(await currentName()).toBe('After Wait');
}, 20_000);
