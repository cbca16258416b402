/**
 * `npm run bench:rpc`: what the chain client costs an RPC provider, measured on the real daemon
 * (network "custom") in front of a standalone `agent-wallet simnet` that counts every call and plays
 * the provider's faults. Agents use the real CLI.
 *
 *   idle calls a minute, 10 / 100 / 1,000 wallets   goal ≤ 20 + 0.2 × wallets (a per-wallet
 *                                                   signature poll every 3 s costs 20 × wallets)
 *   calls per payment, deposit detection p50/p99    goal p50 ≤ 5 s, every one ≤ 15 s
 *   congestion (floor 10,000 µlamports/CU)          goal 10 of 10 land, ≤ 5 calls per payment
 *   provider limit 5 req/s, rpc_max_rps 4           goal 5 concurrent payments complete, ≤ 2% answered 429
 *
 * BENCH_IDLE_SECONDS (default 20) sets the idle window per size.
 */
import { join } from 'node:path';
import { ApiClient } from '../src/client/api.ts';
import { openDatabase } from '../src/db/open.ts';
import { insertBulkWallets } from '../test/helpers/bulk-wallets.ts';
import { claimInLedger, customChainEnv, runCli, startDaemonProcess, type DaemonProcess } from '../test/helpers/daemon.ts';
import { tempDir } from '../test/helpers/services.ts';
import { watchIntervalMs } from '../src/jobs/deposits.ts';

const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 20);
const MAIN = join(import.meta.dir, '..', 'src', 'main.ts');

interface Stats {
  calls: Record<string, number>;
  total: number;
  rateLimited: number;
  dropped: number;
}

async function startChain(): Promise<{ url: string; stop: () => Promise<void> }> {
  const proc = Bun.spawn([process.execPath, MAIN, 'simnet', '--port', '0', '--data-dir', join(tempDir('aw-bench-rpc-'), 'chain'), '--slot-ms', '400'], { stdout: 'pipe', stderr: 'inherit' });
  const reader = proc.stdout.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`simnet exited: ${text}`);
    text += new TextDecoder().decode(value);
  }
  const url = (JSON.parse(text.split('\n')[0]!) as { rpc_url: string }).rpc_url;
  return {
    url,
    stop: async () => {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

let chainUrl = '';
async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(chainUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
const stats = () => rpc<Stats>('simnet_stats');
const resetStats = () => rpc('simnet_resetStats');
const setFaults = (faults: Record<string, unknown>) => rpc('simnet_setFaults', [faults]);
const faucet = (owner: string, usdc: bigint, lamports?: bigint) => rpc<string>('simnet_faucet', lamports === undefined ? [owner, Number(usdc)] : [owner, Number(usdc), Number(lamports)]);

const chainEnv = (extra: Record<string, string> = {}) => customChainEnv(chainUrl, extra);

async function withLedger<T>(dataDir: string, fn: (db: ReturnType<typeof openDatabase>) => Promise<T> | T): Promise<T> {
  const db = openDatabase(join(dataDir, 'wallet.db'), { network: 'custom' });
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

const rows: string[] = [];
function report(line: string): void {
  rows.push(line);
  console.log(line);
}

function quantile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

async function benchIdle(size: number, maxRps?: number): Promise<void> {
  const dataDir = join(tempDir('aw-bench-rpc-'), 'data');
  const env = chainEnv(maxRps === undefined ? {} : { AGENT_WALLET_SOLANA_RPC_MAX_RPS: String(maxRps) });
  let daemon = await startDaemonProcess({ dataDir, env });
  await daemon.stop();
  await withLedger(dataDir, (db) => insertBulkWallets(db, size));
  daemon = await startDaemonProcess({ dataDir, env });
  try {
    await Bun.sleep(4_000);
    await resetStats();
    await Bun.sleep(IDLE_SECONDS * 1000);
    const s = await stats();
    const perMinute = (s.total * 60) / IDLE_SECONDS;
    const methods = Object.entries(s.calls).map(([m, n]) => `${m} ${n}`).join(', ');
    if (maxRps === undefined) {
      const goal = 20 + 0.2 * size;
      report(
        `idle, ${String(size).padStart(5)} wallets   ${perMinute.toFixed(0).padStart(5)} calls/min   goal ≤ ${goal}  ${perMinute <= goal ? 'MET' : 'NOT MET'}   (per-wallet poll: ${20 * size}/min; ${methods})`,
      );
    } else {
      // The stated stretch: a pass every watchIntervalMs, using at most half of the budget.
      const stated = (60_000 / watchIntervalMs(size, maxRps)) * Math.ceil(size / 100);
      report(`idle, ${String(size).padStart(5)} wallets, rpc_max_rps ${maxRps}   ${perMinute.toFixed(0).padStart(5)} calls/min   stretched: a pass every ${watchIntervalMs(size, maxRps) / 1000} s = ${stated.toFixed(0)} calls/min, half the budget   (${methods})`);
    }
  } finally {
    await daemon.stop();
  }
}

interface Agent {
  home: string;
  username: string;
  address: string;
  api: ApiClient;
}

async function agentOn(daemon: DaemonProcess, name: string): Promise<Agent> {
  const home = join(tempDir('aw-bench-rpc-agent-'), 'home');
  const reg = await runCli(['register', '--name', name, '--server', daemon.url, '--home', home, '--json']);
  if (reg.code !== 0) throw new Error(`register failed: ${reg.stderr}`);
  await claimInLedger(daemon.dataDir, [reg.json.wallet_id]);
  const profile = JSON.parse(await Bun.file(join(home, 'default.json')).text());
  return { home, username: reg.json.username, address: reg.json.address, api: new ApiClient(daemon.url, profile.api_key) };
}

/** Pays `count` payments of 1 USDC from `from` to `to` at once with the CLI; returns each one's outcome and wall time. */
async function payAtOnce(daemon: DaemonProcess, from: Agent, to: Agent, count: number): Promise<{ ok: boolean; ms: number }[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const started = performance.now();
      const r = await runCli(['pay', to.username, '1', '--server', daemon.url, '--home', from.home, '--json']);
      return { ok: r.json?.status === 'completed', ms: performance.now() - started };
    }),
  );
}

/** Calls during `run`, less what the idle watch made over the same time (measured just before). */
async function callsDuring(run: () => Promise<void>): Promise<{ calls: number; seconds: number; stats: Stats }> {
  await resetStats();
  await Bun.sleep(6_000);
  const idlePerSecond = (await stats()).total / 6;
  await resetStats();
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  const s = await stats();
  return { calls: Math.max(0, s.total - idlePerSecond * seconds), seconds, stats: s };
}

async function benchPayments(): Promise<void> {
  const dataDir = join(tempDir('aw-bench-rpc-'), 'data');
  let daemon = await startDaemonProcess({ dataDir, env: chainEnv() });
  try {
    await faucet(daemon.started.fee_payer!, 0n, 50_000_000_000n);
    const a = await agentOn(daemon, 'Bench A');
    const b = await agentOn(daemon, 'Bench B');
    await faucet(a.address, 1_000_000_000n);
    await faucet(b.address, 0n);
    await Bun.sleep(4_000);

    const sequential = await callsDuring(async () => {
      for (let i = 0; i < 10; i++) if (!(await payAtOnce(daemon, a, b, 1))[0]!.ok) throw new Error('payment failed');
    });
    report(`calls per payment (10 one after another)   ${(sequential.calls / 10).toFixed(1)}   (${Object.entries(sequential.stats.calls).map(([m, n]) => `${m} ${n}`).join(', ')})`);
    // What a provider plan allows: the daemon spends its call budget, so payments/s ≤ rps / calls per payment.
    const callsEach = sequential.calls / 10;
    report(`payments/s ceiling = rpc_max_rps / calls per payment   ${[10, 25, 50, 100].map((rps) => `${rps} rps → ${(rps / callsEach).toFixed(1)}/s`).join(', ')}`);

    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      const signature = await faucet(a.address, 1_000_000n);
      const landed = performance.now();
      for (;;) {
        const list = await a.api.call<{ items: { signature: string }[] }>('bot', 'transactions', { type: 'deposit', limit: 20 });
        if (list.items.some((t) => t.signature === signature)) break;
        if (performance.now() - landed > 30_000) throw new Error('deposit not seen in 30 s');
        await Bun.sleep(100);
      }
      latencies.push(performance.now() - landed);
    }
    latencies.sort((x, y) => x - y);
    const p50 = quantile(latencies, 0.5);
    const p99 = quantile(latencies, 0.99);
    report(`deposit detection (10 outside deposits)   p50 ${(p50 / 1000).toFixed(2)} s, p99 ${(p99 / 1000).toFixed(2)} s   goal p50 ≤ 5 s, all ≤ 15 s  ${p50 <= 5_000 && p99 <= 15_000 ? 'MET' : 'NOT MET'}`);

    await setFaults({ congestion_floor: 10_000 });
    let congested: { ok: boolean; ms: number }[] = [];
    const c = await callsDuring(async () => {
      congested = await payAtOnce(daemon, a, b, 10);
    });
    await setFaults({ congestion_floor: null });
    const landed = congested.filter((r) => r.ok).length;
    const times = congested.map((r) => r.ms).sort((x, y) => x - y);
    const perPayment = c.calls / 10;
    report(
      `congestion (floor 10,000 µlamports/CU)   ${landed} of 10 landed, CLI time p50 ${(quantile(times, 0.5) / 1000).toFixed(2)} s p99 ${(quantile(times, 0.99) / 1000).toFixed(2)} s, ${perPayment.toFixed(1)} calls per payment, ${c.stats.dropped} dropped   goal 10/10, ≤ 5  ${landed === 10 && perPayment <= 5 ? 'MET' : 'NOT MET'}`,
    );

    await daemon.stop();
    await setFaults({ rate_limit_rps: 5, rate_limit_retry_after: true });
    daemon = await startDaemonProcess({ dataDir, env: chainEnv({ AGENT_WALLET_SOLANA_RPC_MAX_RPS: '4' }) });
    await Bun.sleep(2_000);
    await resetStats();
    const limited = await payAtOnce(daemon, a, b, 5);
    const s = await stats();
    const share = s.rateLimited / Math.max(1, s.total + s.rateLimited);
    const done = limited.filter((r) => r.ok).length;
    report(
      `provider limit 5 req/s, rpc_max_rps 4   ${done} of 5 concurrent payments completed, ${s.rateLimited} of ${s.total + s.rateLimited} calls answered 429 (${(share * 100).toFixed(1)} %)   goal 5/5, ≤ 2 %  ${done === 5 && share <= 0.02 ? 'MET' : 'NOT MET'}`,
    );
    await setFaults({ rate_limit_rps: null });
  } finally {
    await daemon.stop();
  }
}

const chain = await startChain();
chainUrl = chain.url;
try {
  console.log(`bench:rpc — daemon on network custom in front of a standalone simnet (${chainUrl}); idle window ${IDLE_SECONDS} s`);
  for (const size of [10, 100, 1_000]) await benchIdle(size);
  await benchIdle(1_000, 2);
  await benchPayments();
} finally {
  await chain.stop();
}
