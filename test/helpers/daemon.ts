/** A real daemon in a child process (port 0, temp data dir, simnet on a free port) and a CLI runner. */
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { markClaimed } from '../../src/db/wallets.ts';
import { DEVNET_USDC, type NetworkName } from '../../src/solana/networks.ts';
import { tempDir } from './services.ts';
import { prepareDataDir } from './ledger.ts';
import { loadConfig } from '../../src/config.ts';
import { openLedger, type Ledger } from '../../src/db/ledger.ts';

const ROOT = join(import.meta.dir, '..', '..');
/**
 * The entry every agent-wallet process of a test runs: under `npm test`, the bundle of src/main.ts
 * scripts/test.ts built for this run (it loads in half the time, over some 300 processes a run);
 * src/main.ts itself when a test file runs alone.
 */
export const MAIN = process.env.AW_TEST_MAIN ?? join(ROOT, 'src', 'main.ts');

export interface DaemonProcess {
  url: string;
  /** The daemon's start log line (api_url, rpc_url, fee_payer, …). */
  started: Record<string, string>;
  rpcUrl: string;
  dataDir: string;
  pid: number;
  /** Everything the daemon printed on stdout so far. */
  logs(): string;
  /** SIGTERM and wait; resolves to the exit code. */
  stop(): Promise<number>;
  /** SIGKILL (crash) and wait. */
  kill(): Promise<void>;
}

/** Starts `agent-wallet serve` and resolves once it logged its API URL. */
export async function startDaemonProcess(opts: { dataDir?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<DaemonProcess> {
  const dataDir = opts.dataDir ?? join(tempDir('aw-daemon-'), 'data');
  await prepareDataDir(dataDir, opts.env?.AGENT_WALLET_SOLANA_NETWORK ?? 'simnet');
  const proc = Bun.spawn([process.execPath, MAIN, 'serve', '--data-dir', dataDir, '--port', '0'], {
    env: { ...process.env, AGENT_WALLET_SIMNET_RPC_PORT: '0', AGENT_WALLET_LOG_LEVEL: 'info', ...opts.env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let out = '';
  let err = '';
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of proc.stderr) err += decoder.decode(chunk);
  })();
  let started: { api_url: string; rpc_url: string } | null = null;
  const reader = (async () => {
    for await (const chunk of proc.stdout) {
      out += decoder.decode(chunk);
      if (!started) {
        for (const line of out.split('\n')) {
          if (!line.includes('"api_url"')) continue;
          try {
            started = JSON.parse(line);
          } catch {
            // A partial line; the next chunk completes it.
          }
        }
      }
    }
  })();
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  while (!started) {
    if (proc.exitCode !== null) throw new Error(`daemon exited with ${proc.exitCode}:\n${out}\n${err}`);
    if (Date.now() > deadline) {
      proc.kill();
      throw new Error(`daemon did not start in time:\n${out}\n${err}`);
    }
    await Bun.sleep(20);
  }
  const s = started as { api_url: string; rpc_url: string };
  return {
    started: s as unknown as Record<string, string>,
    url: s.api_url,
    rpcUrl: s.rpc_url,
    dataDir,
    pid: proc.pid,
    logs: () => out + err,
    stop: async () => {
      proc.kill('SIGTERM');
      const code = await proc.exited;
      await reader;
      return code;
    },
    kill: async () => {
      proc.kill('SIGKILL');
      await proc.exited;
    },
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (with --json). */
  json: any;
}

/** Runs `agent-wallet ARGS` as a user would. */
export async function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  let json: unknown = null;
  try {
    json = JSON.parse(stdout);
  } catch {
    // Not JSON output.
  }
  return { code, stdout, stderr, json };
}

/** The environment of a daemon on network "custom" in front of the chain at `rpcUrl` (a simnet standing in for a cluster). */
export function customChainEnv(rpcUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return { AGENT_WALLET_SOLANA_NETWORK: 'custom', AGENT_WALLET_SOLANA_RPC_URL: rpcUrl, AGENT_WALLET_SOLANA_USDC_MINT: DEVNET_USDC, ...extra };
}

/** The ledger a data dir's daemon runs on (its config.toml: SQLite's wallet.db, or PostgreSQL), opened for a test's reads and writes. */
export async function openDataDirLedger(dataDir: string, network: NetworkName = 'custom'): Promise<Ledger> {
  return openLedger({ ...loadConfig({ dataDir }, {}), solana: { network } });
}

/** Stands in for the claim flow (owner-browser.test.ts drives the real one): the wallets become owner@example.com's, in the data dir's ledger. */
export async function claimInLedger(dataDir: string, walletIds: string[], network: NetworkName = 'custom'): Promise<void> {
  const ledger = await openDataDirLedger(dataDir, network);
  const db = ledger.store;
  try {
    await db.transaction(async () => {
      await db.run("INSERT OR IGNORE INTO owners (owner_id, email, created_at) VALUES ('own_test', 'owner@example.com', 1)");
      for (const id of walletIds) await markClaimed(db, id, 'own_test', Date.now());
    });
  } finally {
    await ledger.close();
  }
}

/** What an operator does before the first payment: SOL for the fee payer, and the treasury's USDC token account. */
export async function fundOperator(chain: { airdrop(address: Address, lamports: bigint): Promise<string>; faucet(owner: Address, usdc: bigint): Promise<string> }, daemon: DaemonProcess): Promise<void> {
  await chain.airdrop(daemon.started.fee_payer as Address, 10_000_000_000n);
  await chain.faucet(daemon.started.fee_payer as Address, 0n);
}
