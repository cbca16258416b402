/**
 * `npm run bench`: speed goals as ratios against a baseline measured in the same run (never
 * timed assertions in tests). Each server runs in its own child process; this process only
 * generates load, so both sides of a ratio see the same machine.
 *
 *   ping: full app (dispatcher, auth lookup, rate limit, metrics, logs) vs a bare Bun.serve
 *         answering the same JSON. Goal ≥ 0.8.
 */
import { tmpdir } from 'node:os';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';

const mode = process.argv[2];

if (mode === '--serve-bare') {
  const body = JSON.stringify({ success: true, data: { status: 'ok', version: '0.1.0', network: 'simnet', usdc_mint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' } });
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(body, { headers: { 'Content-Type': 'application/json; charset=utf-8' } }) });
  console.log(`READY ${server.port}`);
} else if (mode === '--serve-app') {
  const { loadConfig } = await import('../src/config.ts');
  const { openDatabase } = await import('../src/db/open.ts');
  const { buildServices } = await import('../src/daemon/services.ts');
  const { createApp } = await import('../src/api/app.ts');
  const { createLogger } = await import('../src/log.ts');
  const dataDir = mkdtempSync(join(tmpdir(), 'aw-bench-'));
  const config = loadConfig({ dataDir }, { AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '100000000' });
  const db = openDatabase(join(dataDir, 'wallet.db'), { network: 'simnet' });
  // Real logging cost, written to /dev/null rather than the terminal.
  const sink = Bun.file('/dev/null').writer();
  const { loadFeePayer, loadMasterKey } = await import('../src/secret-files.ts');
  const services = buildServices({
    config,
    db,
    log: createLogger({ write: (l) => sink.write(l) }),
    masterKey: loadMasterKey(dataDir),
    feePayer: loadFeePayer(dataDir, 'fee-payer.json'),
    listenUrl: () => 'http://127.0.0.1',
  });
  const app = createApp(services);
  app.listen({ port: 0, hostname: '127.0.0.1' });
  console.log(`READY ${app.server?.port}`);
} else {
  await main();
}

async function startChild(flag: string): Promise<{ port: number; kill: () => void }> {
  const child = Bun.spawn([process.execPath, import.meta.path, flag], { stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${flag} exited before it was ready`);
    text += new TextDecoder().decode(value);
  }
  const m = /READY (\d+)/.exec(text);
  if (!m) throw new Error(`${flag}: unexpected output ${text}`);
  return { port: Number(m[1]), kill: () => child.kill() };
}

/** Closed-loop load: `connections` workers each sending the next request when the last answers. */
async function load(url: string, body: string, seconds: number, connections: number): Promise<{ rps: number; p50: number; p99: number }> {
  const deadline = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  const worker = async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      latencies.push(performance.now() - t);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  return { rps: latencies.length / elapsed, p50: q(0.5), p99: q(0.99) };
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const body = JSON.stringify({ action: 'ping' });
  const bare = await startChild('--serve-bare');
  const app = await startChild('--serve-app');
  try {
    // Warm both up, then measure alternately so drift affects both.
    await load(`http://127.0.0.1:${bare.port}/v1/bot`, body, 1, 16);
    await load(`http://127.0.0.1:${app.port}/v1/bot`, body, 1, 16);
    const b = await load(`http://127.0.0.1:${bare.port}/v1/bot`, body, seconds, 16);
    const a = await load(`http://127.0.0.1:${app.port}/v1/bot`, body, seconds, 16);
    const ratio = a.rps / b.rps;
    console.log('benchmark                 value        baseline     ratio   goal');
    console.log(
      `ping req/s (app/bare)     ${a.rps.toFixed(0).padStart(8)}     ${b.rps.toFixed(0).padStart(8)}     ${ratio.toFixed(2)}    ≥ 0.80 ${ratio >= 0.8 ? 'met' : 'NOT MET'}`,
    );
    console.log(`ping latency app          p50 ${a.p50.toFixed(2)} ms, p99 ${a.p99.toFixed(2)} ms (bare p50 ${b.p50.toFixed(2)}, p99 ${b.p99.toFixed(2)})`);
  } finally {
    bare.kill();
    app.kill();
  }
}
