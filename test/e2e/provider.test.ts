/**
 * The daemon as an operator runs it against a hosted provider: network "custom" in front of a
 * simnet that counts every call, limits the rate (429) and drops unpriced transactions. Idle with
 * 52 wallets it stays under 60 calls a minute; an outside deposit shows in the history within
 * seconds; under a 5 req/s limit with solana.rpc_max_rps = 4, concurrent payments from the CLI all
 * complete and almost nothing is answered 429.
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
  test('under a 5 req/s limit with solana.rpc_max_rps = 4, five concurrent CLI payments complete and at most 2% of calls are answered 429', async () => {
    await daemon.stop();
    const chain = createRpcChainPort(simnet.url);
    const before = await chain.getTokenBalance(agents[1]!.address, DEVNET_USDC);
    simnet.setRateLimit({ rps: 5, retryAfter: true });
    try {
      daemon = await startDaemonProcess({ dataDir, env: env({ AGENT_WALLET_SOLANA_RPC_MAX_RPS: '4' }) });
      simnet.resetStats();
      const [a, b] = agents as [Agent, Agent];
      const results = await Promise.all(
        Array.from({ length: 5 }, () => runCli(['pay', b.username, '1', '--server', daemon.url, '--home', a.home, '--json'])),
      );
      for (const r of results) expect(r.json?.status ?? r.stdout + r.stderr).toBe('completed');
      const stats = simnet.stats();
      const answered = stats.total + stats.rateLimited;
      expect(stats.rateLimited / answered).toBeLessThanOrEqual(0.02);
    } finally {
      simnet.setRateLimit(null);
    }
    // The chain, not our ledger, says what moved: five payments of 1 USDC reached B.
    expect((await chain.getTokenBalance(agents[1]!.address, DEVNET_USDC)) - before).toBe(5_000_000n);
  });
});
