/**
 * Admin commands find the data dir's network themselves: a real daemon runs on network custom
 * (given only in its own environment) in front of a standalone chain; the operator's admin
 * commands pass --data-dir and nothing else (the test preload clears AGENT_WALLET_* from the
 * environment the CLI inherits).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { dataDirEnv } from '../../src/cli/admin-network.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { DEVNET_USDC } from '../../src/solana/networks.ts';
import { runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

let simnet: Simnet;
let daemon: DaemonProcess;
const dataDir = join(tempDir('aw-admin-net-'), 'data');

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 200 });
  daemon = await startDaemonProcess({ dataDir, env: { AGENT_WALLET_SOLANA_NETWORK: 'custom', AGENT_WALLET_SOLANA_RPC_URL: simnet.url, AGENT_WALLET_SOLANA_USDC_MINT: DEVNET_USDC } });
});
afterAll(async () => {
  await daemon.stop();
  await simnet.stop();
});

describe('admin on a daemon whose network came from its environment', () => {
  test('admin mail --data-dir D works with no extra environment (config.toml still says simnet)', async () => {
    const res = await runCli(['admin', 'mail', '--data-dir', dataDir, '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.json).toEqual({ items: [], total: 0 });
  });

  test('admin owner-token writes to the custom ledger', async () => {
    const res = await runCli(['admin', 'owner-token', 'op@example.com', '--json', '--data-dir', dataDir]);
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ email: 'op@example.com', owner_created: true });
    expect(res.json.token).toStartWith('wallet_owner_');
  });

  test('an explicit, different network in the environment is refused, naming both (exit 1)', async () => {
    const res = await runCli(['admin', 'mail', '--data-dir', dataDir], { AGENT_WALLET_SOLANA_NETWORK: 'devnet' });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('runs on network custom, not devnet');
  });

  test("the daemon's record supplies network, RPC URL and mint; the operator's own RPC URL wins", () => {
    expect(dataDirEnv(dataDir, {})).toEqual({ AGENT_WALLET_SOLANA_NETWORK: 'custom', AGENT_WALLET_SOLANA_RPC_URL: simnet.url, AGENT_WALLET_SOLANA_USDC_MINT: DEVNET_USDC });
    expect(dataDirEnv(dataDir, { AGENT_WALLET_SOLANA_RPC_URL: 'http://127.0.0.1:9' }).AGENT_WALLET_SOLANA_RPC_URL).toBe('http://127.0.0.1:9');
    const none = { AGENT_WALLET_X: '1' };
    expect(dataDirEnv(tempDir('aw-admin-none-'), none)).toBe(none);
  });
});
