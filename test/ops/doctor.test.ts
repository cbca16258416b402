/** admin doctor against a real daemon process on a standalone chain: green when healthy, the right check red when not. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { loadFeePayer } from '../../src/secret-files.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { runCli, customChainEnv, fundOperator, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

let simnet: Simnet;
let daemon: DaemonProcess;
const dataDir = join(tempDir('aw-doctor-'), 'data');
const env = () => customChainEnv(simnet.url);

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 200 });
  daemon = await startDaemonProcess({ dataDir, env: env() });
  await fundOperator(simnet, daemon);
});
afterAll(async () => {
  await daemon.stop();
  await simnet.stop();
});

async function doctor(extraEnv: Record<string, string> = {}) {
  const res = await runCli(['admin', 'doctor', '--data-dir', dataDir, '--json'], { ...env(), ...extraEnv });
  const checks = res.json.checks as { name: string; ok: boolean; detail: string; how_to_fix: string | null }[];
  return { code: res.code, checks, failed: checks.filter((c) => !c.ok).map((c) => c.name) };
}

test('a healthy instance: every check green (at least 5), exit 0, each with name, ok, detail, how_to_fix', async () => {
  const { code, checks, failed } = await doctor();
  expect(failed).toEqual([]);
  expect(code).toBe(0);
  expect(checks.length).toBeGreaterThanOrEqual(5);
  expect(checks.map((c) => c.name)).toEqual(['file_modes', 'config', 'ledger', 'rpc', 'fee_payer_sol', 'treasury_usdc_account', 'clock_skew', 'free_disk', 'daemon', 'backlog']);
  for (const c of checks) expect(Object.keys(c).sort()).toEqual(['detail', 'how_to_fix', 'name', 'ok']);
});

test('master.key readable by others: file_modes fails with the chmod to run, exit 1', async () => {
  const key = join(dataDir, 'master.key');
  chmodSync(key, 0o644);
  try {
    const { code, checks, failed } = await doctor();
    expect(code).toBe(1);
    expect(failed).toEqual(['file_modes']);
    const check = checks.find((c) => c.name === 'file_modes')!;
    expect(check.detail).toContain('master.key is 0644');
    expect(check.how_to_fix).toContain('chmod 600');
  } finally {
    chmodSync(key, 0o600);
  }
});

test('an RPC that does not answer: rpc fails, and the checks that need it say so', async () => {
  const { code, checks, failed } = await doctor({ AGENT_WALLET_SOLANA_RPC_URL: 'http://127.0.0.1:9' });
  expect(code).toBe(1);
  expect(failed).toEqual(['rpc', 'fee_payer_sol', 'treasury_usdc_account', 'clock_skew']);
  expect(checks.find((c) => c.name === 'rpc')!.detail).toContain('does not answer');
});

test('a fee payer without SOL: fee_payer_sol fails naming the address to fund', async () => {
  const dir = tempDir('aw-doctor-fp-');
  const fresh = loadFeePayer(dir, 'empty-fee-payer.json');
  const file = join(dir, 'empty-fee-payer.json');
  const { code, checks, failed } = await doctor({ AGENT_WALLET_SOLANA_FEE_PAYER_KEYPAIR_FILE: file, AGENT_WALLET_SOLANA_TREASURY: daemon.started.fee_payer! });
  expect(code).toBe(1);
  expect(failed).toEqual(['fee_payer_sol']);
  const check = checks.find((c) => c.name === 'fee_payer_sol')!;
  expect(check.detail).toContain(`${fresh.address}: 0.0000 SOL`);
  expect(check.how_to_fix).toContain(fresh.address);
});
