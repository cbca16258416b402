/**
 * Starting the daemon as an operator would, in real processes: a second daemon on a port already
 * in use exits with one line naming the port and the flag (it does not share the port and take half
 * the first one's requests); daemon.json is written once the server listens, so a daemon whose chain
 * is unreachable at start is still found by the admin commands and the doctor (with its network, which
 * the operator's shell does not repeat); a taken simnet RPC port is one line naming --simnet-port.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { MAIN, customChainEnv, runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

let simnet: Simnet;
let first: DaemonProcess;

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 200 });
  first = await startDaemonProcess({ env: customChainEnv(simnet.url) });
});
afterAll(async () => {
  await first?.stop();
  await simnet?.stop();
});

test('a second daemon on a taken port exits with one line naming the port and --port; the first answers every request', async () => {
  const port = new URL(first.url).port;
  const { profile } = await registerWallet(new ApiClient(first.url), { name: 'Port Owner' });
  const second = Bun.spawn([process.execPath, MAIN, 'serve', '--data-dir', join(tempDir('aw-second-'), 'data'), '--port', port], {
    env: { ...process.env, ...customChainEnv(simnet.url), AGENT_WALLET_SIMNET_RPC_PORT: '0' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  // Under the old behaviour the second daemon starts and never exits: it is killed after 20 s.
  const timer = setTimeout(() => second.kill('SIGKILL'), 20_000);
  const [code, stderr] = await Promise.all([second.exited, new Response(second.stderr).text()]);
  clearTimeout(timer);
  expect(code).toBe(1);
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`port ${port}`);
  expect(lines[0]).toContain('--port');
  // Every request reaches the first daemon: the wallet registered there is found each time.
  const api = new ApiClient(first.url, profile.api_key);
  const answers = await Promise.all(Array.from({ length: 50 }, () => api.call<{ wallet_id: string }>('bot', 'info').then((i) => i.wallet_id)));
  expect(new Set(answers)).toEqual(new Set([profile.wallet_id]));
});

test('daemon.json is written when the server listens: with the chain hanging at start, the doctor finds the running daemon', async () => {
  const chain = await startSimnet({ port: 0, slotMs: 200 });
  const dataDir = join(tempDir('aw-hanging-'), 'data');
  chain.setFault('hang');
  const proc = Bun.spawn([process.execPath, MAIN, 'serve', '--data-dir', dataDir, '--port', '0'], {
    env: { ...process.env, ...customChainEnv(chain.url), AGENT_WALLET_SIMNET_RPC_PORT: '0' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  try {
    const state = join(dataDir, 'daemon.json');
    // Well before a chain call could time out (10 s): the file must not wait for the chain.
    const deadline = Date.now() + 8_000;
    while (!existsSync(state) && Date.now() < deadline) await Bun.sleep(50);
    const recorded = JSON.parse(readFileSync(state, 'utf8')) as { pid: number; api_url: string; network: string };
    expect({ pid: recorded.pid, network: recorded.network }).toEqual({ pid: proc.pid, network: 'custom' });
    expect((await fetch(new URL('/healthz', recorded.api_url))).ok).toBe(true);
    expect(proc.exitCode).toBeNull();
    // The operator's shell does not repeat the daemon's network settings: the admin commands take them from daemon.json.
    const doctor = await runCli(['admin', 'doctor', '--data-dir', dataDir, '--json']);
    const checks = doctor.json.checks as { name: string; ok: boolean; detail: string }[];
    expect(checks.find((c) => c.name === 'daemon')).toMatchObject({ ok: true });
    expect(checks.find((c) => c.name === 'ledger')).toMatchObject({ ok: true, detail: expect.stringContaining('network custom') });
  } finally {
    chain.setFault(null);
    proc.kill('SIGTERM');
    await proc.exited;
    await chain.stop();
  }
}, 60_000);

test("a taken simnet RPC port (solana-test-validator's 8899, say) is one line naming --simnet-port, exit 1", async () => {
  const holder = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  try {
    const proc = Bun.spawn([process.execPath, MAIN, 'serve', '--data-dir', join(tempDir('aw-simport-'), 'data'), '--port', '0', '--simnet-port', String(holder.port)], { stdout: 'pipe', stderr: 'pipe' });
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    clearTimeout(timer);
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`port ${holder.port}`);
    expect(lines[0]).toContain('--simnet-port');
  } finally {
    holder.stop(true);
  }
}, 30_000);
