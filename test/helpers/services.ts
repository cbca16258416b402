/** Builders for tests: a fresh config, in-memory ledger and app per test. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { buildServices } from '../../src/daemon/services.ts';
import { createLogger, type Logger } from '../../src/log.ts';
import type { Services } from '../../src/services.ts';
import { loadFeePayer, loadMasterKey } from '../../src/secret-files.ts';
import type { ChainPort } from '../../src/solana/port.ts';
import { testLedger } from './ledger.ts';

export function tempDir(prefix = 'aw-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Services over a temp data dir and a fresh ledger (SQLite in memory, or PostgreSQL: helpers/ledger.ts); `env` overrides config keys. */
export function testServices(opts: { env?: Record<string, string>; log?: Logger; now?: () => Date; chain?: ChainPort; rpcUrl?: string; pgWriterLock?: boolean } = {}): Services {
  const dataDir = tempDir();
  const config = loadConfig({ dataDir }, { AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '1000000', AGENT_WALLET_RATE_LIMITS_PER_KEY_PER_MINUTE: '1000000', ...opts.env });
  const db = testLedger(config.solana.network, { writerLock: opts.pgWriterLock });
  // Without a chain given, an RPC URL nothing listens on: chain calls fail as SERVICE_UNAVAILABLE.
  config.rpcUrl = opts.rpcUrl ?? 'http://127.0.0.1:9';
  return buildServices({
    config,
    db,
    // Errors always reach stderr, so a failing test shows the server's side of the story.
    log: opts.log ?? createLogger({ level: 'error', write: (l) => process.stderr.write(l) }),
    masterKey: loadMasterKey(dataDir),
    feePayer: loadFeePayer(dataDir, 'fee-payer.json'),
    chain: opts.chain,
    listenUrl: () => 'http://127.0.0.1:8787',
    now: opts.now,
  });
}

/** A logger that keeps every line, for tests that inspect logs. */
export function memoryLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger({ level: 'debug', write: (l) => lines.push(l) }), lines };
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
}

/** Sends one request through `app.handle` and parses the JSON answer. */
export async function call(
  app: { handle(r: Request): Promise<Response> | Response },
  path: string,
  body?: unknown,
  init: { method?: string; headers?: Record<string, string>; raw?: string } = {},
): Promise<CallResult> {
  const method = init.method ?? (body === undefined && init.raw === undefined ? 'GET' : 'POST');
  const res = await app.handle(
    new Request(`http://localhost${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...init.headers },
      body: method === 'GET' ? undefined : (init.raw ?? JSON.stringify(body)),
    }),
  );
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Non-JSON answers (metrics) stay text.
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** Serves `createApp(services)` on a free loopback port, for tests that need real HTTP in process. */
export async function startTestServer(services: Services): Promise<{ url: string; stop: () => Promise<void> }> {
  const { createApp } = await import('../../src/api/app.ts');
  const { SERVER_BODY_CAP } = await import('../../src/api/body.ts');
  const app = createApp(services);
  // The daemon's cap (src/daemon/serve.ts), so tests see every oversized body answered as it would.
  app.listen({ hostname: '127.0.0.1', port: 0, maxRequestBodySize: SERVER_BODY_CAP });
  const url = `http://127.0.0.1:${app.server!.port}/v1`;
  return { url, stop: async () => void (await app.stop()) };
}
