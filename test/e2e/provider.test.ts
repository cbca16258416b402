/**
 * The daemon as an operator runs it against a hosted provider: network "custom" in front of a
 * simnet that counts every call, limits the rate (429) and drops unpriced transactions. Idle with
 * 52 wallets it stays under 60 calls a minute; an outside deposit shows in the history within
 * seconds; under a 5 req/s limit with solana.rpc_max_rps = 4, concurrent payments from the CLI all
 * complete and every call the daemon makes keeps to that budget.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { openDatabase } from '../../src/db/open.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { DEVNET_USDC } from '../../src/solana/networks.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { insertBulkWallets } from '../helpers/bulk-wallets.ts';
import { claimInLedger, customChainEnv, runCli, fundOperator, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

let simnet: Simnet;
let daemon: DaemonProcess;
const dataDir = join(tempDir('aw-provider-'), 'data');
const env = (extra: Record<string, string> = {}) => customChainEnv(simnet.url, extra);

interface Agent {
  home: string;
  walletId: string;
  address: Address;
  username: string;
  api: ApiClient;
}
const agents: Agent[] = [];

async function registerAgent(name: string): Promise<Agent> {
  const home = join(tempDir('aw-provider-agent-'), 'home');
  const reg = await runCli(['register', '--name', name, '--server', daemon.url, '--home', home, '--json']);
  expect(reg.code).toBe(0);
  await claimInLedger(dataDir, [reg.json.wallet_id]);
  const profile = JSON.parse(await Bun.file(join(home, 'default.json')).text());
  return { home, walletId: reg.json.wallet_id, address: reg.json.address, username: reg.json.username, api: new ApiClient(daemon.url, profile.api_key) };
}

async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 400 });
  daemon = await startDaemonProcess({ dataDir, env: env() });
  await fundOperator(simnet, daemon);
  agents.push(await registerAgent('Provider A'), await registerAgent('Provider B'));
  await simnet.faucet(agents[0]!.address, 100_000_000n);
  await simnet.faucet(agents[1]!.address, 0n);
  const db = openDatabase(join(dataDir, 'wallet.db'), { network: 'custom' });
  try {
    await insertBulkWallets(db, 50);
  } finally {
    db.close();
  }
});
afterAll(async () => {
  await daemon?.stop();
  await simnet?.stop();
});

describe('against a provider that bills every call', () => {
  test('idle with 52 wallets, the daemon makes at most 60 RPC calls a minute, all batched account reads', async () => {
    // Let the watch take in the new wallets and the deposits above (a loaded machine may need a few
    // passes), then count a quiet stretch.
    const lookups = () => Object.keys(simnet.stats().calls).filter((m) => m !== 'getMultipleAccounts' && m !== 'getBalance');
    for (let settled = false, tries = 0; !settled && tries < 10; tries++) {
      simnet.resetStats();
      await Bun.sleep(3_500);
      // Settled: a window in which the watch ran a pass and had nothing to look up.
      settled = lookups().length === 0 && (simnet.stats().calls.getMultipleAccounts ?? 0) >= 1;
    }
    simnet.resetStats();
    const seconds = 9;
    await Bun.sleep(seconds * 1000);
    const stats = simnet.stats();
    const perMinute = (stats.total * 60) / seconds;
    expect(perMinute).toBeLessThanOrEqual(60);
    // One getMultipleAccounts per pass (52 accounts < 100); the fee payer's balance once a minute.
    expect(lookups()).toEqual([]);
    expect(stats.calls.getMultipleAccounts ?? 0).toBeGreaterThanOrEqual(2);
  }, 90_000);

  test('an outside deposit appears in the history within 15 s (median of three within 5 s)', async () => {
    const a = agents[0]!;
    const latencies: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const signature = await simnet.faucet(a.address, BigInt(i) * 1_000_000n);
      const landed = Date.now();
      await until('the deposit in the history', 15_000, async () => {
        const list = await a.api.call<{ items: { signature: string }[] }>('bot', 'transactions', { type: 'deposit', limit: 10 });
        return list.items.some((t) => t.signature === signature) ? true : undefined;
      });
      latencies.push(Date.now() - landed);
    }
    latencies.sort((x, y) => x - y);
    expect(latencies[2]!).toBeLessThanOrEqual(15_000);
    expect(latencies[1]!).toBeLessThanOrEqual(5_000);
  });
});

describe('against a provider that limits the rate', () => {
  // A provider refuses by when calls *arrive*. The budget sends at most 4 calls in any 1,050 ms
  // (rpc_max_rps = 4 and 50 ms of slack for delivery), so 6 calls arrive within the provider's
  // 1,000 ms only when delivery bunched them by more than 50 ms: one of the two processes (the
  // daemon between taking the budget and writing the request, this one — the provider's event
  // loop — between the arrival and the count) stalled. On a quiet machine that never happens and
  // the provider must refuse nothing (the old "at most 2%" was stricter than need be there, and
  // failed under the suite's load, where a stall bunches calls). So the 429s are counted against
  // what the stalls both processes measured can explain: a stall of L ms can put the calls of
  // 1,000 + L ms in one provider window, at most 4 × ⌈(1,000 + L) / 1,050⌉, of which 5 are
  // admitted. The same timing with the clock driven by the test: test/solana/rpc-budget.test.ts.
  // And, whatever the load: every call the daemon makes goes through the budget (the provider got
  // what the daemon counted), and no more of them than the budget allows for the time it ran.
  test('under a 5 req/s limit with solana.rpc_max_rps = 4, five concurrent CLI payments complete; 429s only as many as measured stalls explain', async () => {
    await daemon.stop();
    const chain = createRpcChainPort(simnet.url);
    const before = await chain.getTokenBalance(agents[1]!.address, DEVNET_USDC);
    simnet.setRateLimit({ rps: 5, retryAfter: true });
    // This process's stalls (the provider's): how late a 20 ms timer runs, as the daemon measures its own.
    const stalls: number[] = [];
    let due = performance.now() + 20;
    const lag = setInterval(() => {
      const now = performance.now();
      if (now - due > 50) stalls.push(now - due);
      due = now + 20;
    }, 20);
    try {
      // Counted from before the daemon starts: the provider and the daemon's /metrics see the same
      // calls, the daemon's whole life.
      simnet.resetStats();
      const started = performance.now();
      daemon = await startDaemonProcess({ dataDir, env: env({ AGENT_WALLET_SOLANA_RPC_MAX_RPS: '4' }) });
      // The daemon's stalls while it starts (loading, compiling) are not the payments'.
      const startStalls = (await scrape()).stalls;
      stalls.length = 0;
      const [a, b] = agents as [Agent, Agent];
      const results = await Promise.all(
        Array.from({ length: 5 }, () => runCli(['pay', b.username, '1', '--server', daemon.url, '--home', a.home, '--json'])),
      );
      for (const r of results) expect(r.json?.status ?? r.stdout + r.stderr).toBe('completed');
      // The daemon counts an attempt once answered, so it counts no call the provider has not got
      // yet; the provider may have got a few whose answers are on their way (the daemon is idle
      // again but for its watch: at most one budget window's worth, 4).
      const counted = await scrape();
      const stats = simnet.stats();
      const elapsed = performance.now() - started;
      // Calls the provider got, answered or refused (the test makes none meanwhile).
      const received = stats.total + stats.rateLimited;
      expect(received - counted.sent).toBeGreaterThanOrEqual(0);
      expect(received - counted.sent).toBeLessThanOrEqual(4);
      expect(stats.rateLimited - counted.rateLimited).toBeGreaterThanOrEqual(0);
      expect(stats.rateLimited - counted.rateLimited).toBeLessThanOrEqual(4);
      // 4 calls per 1,050 ms when they go out, for the daemon's whole life, however long it was.
      expect(received).toBeLessThanOrEqual(4 * Math.ceil(elapsed / 1_050));
      expect(counted.sent).toBeGreaterThan(0);
      // The 429s, against what the stalls of both processes explain.
      const explained = (ms: number) => Math.max(0, 4 * Math.ceil((1_000 + ms) / 1_050) - 5);
      const daemonStalls = counted.stalls.slice();
      for (const ms of startStalls) daemonStalls.splice(daemonStalls.indexOf(ms), 1);
      const allowance = [...stalls, ...daemonStalls].reduce((sum, ms) => sum + explained(ms), 0);
      expect(stats.rateLimited).toBeLessThanOrEqual(allowance);
    } finally {
      clearInterval(lag);
      simnet.setRateLimit(null);
    }
    // The chain, not our ledger, says what moved: five payments of 1 USDC reached B.
    expect((await chain.getTokenBalance(agents[1]!.address, DEVNET_USDC)) - before).toBe(5_000_000n);
  });
});

/**
 * From the daemon's /metrics: its RPC attempts so far (those that went out, those answered 429)
 * and its event loop's stalls over 50 ms, each at its histogram bucket's upper bound (a stall past
 * the last bound, 1 s, explains anything).
 */
async function scrape(): Promise<{ sent: number; rateLimited: number; stalls: number[] }> {
  const text = await (await fetch(new URL('/metrics', daemon.url))).text();
  let sent = 0;
  let rateLimited = 0;
  const buckets = new Map<string, number>();
  for (const line of text.split('\n')) {
    const n = Number(line.slice(line.lastIndexOf(' ') + 1));
    const le = /^agent_wallet_event_loop_lag_seconds_bucket\{le="([^"]+)"\}/.exec(line)?.[1];
    if (le) buckets.set(le, n);
    if (!line.startsWith('agent_wallet_rpc_calls_total{')) continue;
    // budget_exhausted: never sent (no room before the deadline).
    if (line.includes('outcome="budget_exhausted"')) continue;
    sent += n;
    if (line.includes('outcome="rate_limited"')) rateLimited += n;
  }
  const stalls: number[] = [];
  const bounds = [['0.05', '0.1', 100], ['0.1', '0.25', 250], ['0.25', '1', 1_000], ['1', '+Inf', Infinity]] as const;
  for (const [from, to, ms] of bounds) for (let i = (buckets.get(to) ?? 0) - (buckets.get(from) ?? 0); i > 0; i--) stalls.push(ms);
  return { sent, rateLimited, stalls };
}
