/** The daemon as an operator runs it: zero-config simnet, state across restarts, graceful stop. */
import { expect, test } from 'bun:test';
import { createSolanaRpc, generateKeyPairSigner } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS, findAssociatedTokenPda } from '@solana-program/token';
import { join } from 'node:path';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { DEVNET_USDC } from '../../src/solana/networks.ts';
import { MAIN, runCli, startDaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

test('ping reports simnet with its RPC URL; faucet USDC survives a restart; SIGTERM exits 0', async () => {
  const dataDir = join(tempDir('aw-restart-'), 'data');
  const first = await startDaemonProcess({ dataDir });
  const ping = await (await fetch(`${first.url}/bot`, { method: 'POST', body: '{"action":"ping"}' })).json();
  expect(ping.data).toMatchObject({ status: 'ok', network: 'simnet', usdc_mint: DEVNET_USDC, rpc_url: first.rpcUrl });
  const owner = (await generateKeyPairSigner()).address;
  const faucet = await runCli(['admin', 'faucet', owner, '7.5', '--sol', '0.5', '--data-dir', dataDir, '--json']);
  expect(faucet.code).toBe(0);
  expect(typeof faucet.json.signature).toBe('string');
  expect(await createRpcChainPort(first.rpcUrl).getSolBalance(owner)).toBe(500_000_000n);
  const genesis = await createSolanaRpc(first.rpcUrl).getGenesisHash().send();
  expect(await first.stop()).toBe(0);

  const second = await startDaemonProcess({ dataDir });
  // Read back with kit's own RPC client, not the daemon's port.
  const [ata] = await findAssociatedTokenPda({ owner, mint: DEVNET_USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const balance = await createSolanaRpc(second.rpcUrl).getTokenAccountBalance(ata).send();
  expect(String(balance.value.amount)).toBe('7500000');
  expect(await createSolanaRpc(second.rpcUrl).getGenesisHash().send()).toBe(genesis);
  expect(await second.stop()).toBe(0);
  const stopped = await runCli(['admin', 'faucet', owner, '1', '--data-dir', dataDir]);
  expect(stopped.code).toBe(1);
  expect(stopped.stderr).toContain('no running daemon');
});

test('agent-wallet --version and an unknown command (exit 2)', async () => {
  const v = await runCli(['--version']);
  expect(v.code).toBe(0);
  expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  const bad = await runCli(['frobnicate']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('unknown command');
});

test('a 0644 master key refuses start with how to fix it', async () => {
  const dataDir = join(tempDir('aw-perm-'), 'data');
  const d = await startDaemonProcess({ dataDir });
  expect(await d.stop()).toBe(0);
  const { chmodSync } = await import('node:fs');
  chmodSync(join(dataDir, 'master.key'), 0o644);
  const res = await runCli(['serve', '--data-dir', dataDir, '--port', '0'], { AGENT_WALLET_SIMNET_RPC_PORT: '0' });
  expect(res.code).toBe(1);
  expect(res.stderr).toContain('chmod 600');
});

test('a start with another master.key than the ledger was created with is refused, naming both fingerprints; the right key starts again', async () => {
  const dataDir = join(tempDir('aw-pin-'), 'data');
  const d = await startDaemonProcess({ dataDir });
  expect(await d.stop()).toBe(0);
  const { readFileSync, writeFileSync } = await import('node:fs');
  const keyFile = join(dataDir, 'master.key');
  const original = readFileSync(keyFile, 'utf8');
  writeFileSync(keyFile, `${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}\n`, { mode: 0o600 });
  const res = await runCli(['serve', '--data-dir', dataDir, '--port', '0'], { AGENT_WALLET_SIMNET_RPC_PORT: '0' });
  expect(res.code).toBe(1);
  expect(res.stderr).toContain('was created with another master.key');
  expect(res.stderr).toContain('copy master.key from the data dir of the node that created the ledger');
  writeFileSync(keyFile, original, { mode: 0o600 });
  const again = await startDaemonProcess({ dataDir });
  expect(await again.stop()).toBe(0);
});

test('a second daemon on the same data directory is refused, naming the first; after a kill -9 the next start takes over', async () => {
  const dataDir = join(tempDir('aw-lock-'), 'data');
  const first = await startDaemonProcess({ dataDir });
  const second = await runCli(['serve', '--data-dir', dataDir, '--port', '0'], { AGENT_WALLET_SIMNET_RPC_PORT: '0' });
  expect(second.code).toBe(1);
  expect(second.stderr).toContain(`in use by another agent-wallet daemon (pid ${first.pid})`);
  // The first daemon is unaffected.
  expect((await (await fetch(`${first.url}/bot`, { method: 'POST', body: '{"action":"ping"}' })).json()).success).toBe(true);
  await first.kill();
  const third = await startDaemonProcess({ dataDir });
  expect(await third.stop()).toBe(0);
  expect((await import('node:fs')).existsSync(join(dataDir, 'daemon.lock'))).toBe(false);
});

test('with tls_cert_file and tls_key_file the daemon serves HTTPS', async () => {
  const fixtures = join(import.meta.dir, '..', 'net', 'fixtures');
  const d = await startDaemonProcess({
    env: { AGENT_WALLET_SERVER_TLS_CERT_FILE: join(fixtures, 'self-signed-test-only.cert.pem'), AGENT_WALLET_SERVER_TLS_KEY_FILE: join(fixtures, 'self-signed-test-only.key.pem') },
  });
  expect(d.url.startsWith('https://')).toBe(true);
  const res = await fetch(`${d.url}/bot`, { method: 'POST', body: '{"action":"ping"}', tls: { rejectUnauthorized: false } } as RequestInit);
  expect(((await res.json()) as any).data.status).toBe('ok');
  expect(d.logs()).not.toContain('without TLS');
  expect(await d.stop()).toBe(0);
});

test('listening on a non-loopback address without TLS logs a warning', async () => {
  const d = await startDaemonProcess({ env: { AGENT_WALLET_SERVER_HOST: '0.0.0.0' } });
  expect(d.logs()).toContain('non-loopback address without TLS');
  expect(await d.stop()).toBe(0);
});

test('agent-wallet simnet runs the chain alone: kit clients see a devnet-like cluster with USDC', async () => {
  const dataDir = join(tempDir('aw-simnet-'), 'data');
  const proc = Bun.spawn([process.execPath, MAIN, 'simnet', '--port', '0', '--data-dir', dataDir], { stdout: 'pipe', stderr: 'pipe' });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!out.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`simnet exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  const started = JSON.parse(out.split('\n')[0]!) as { rpc_url: string; usdc_mint: string };
  expect(started.usdc_mint).toBe(DEVNET_USDC);
  const rpc = createSolanaRpc(started.rpc_url);
  expect(await rpc.getHealth().send()).toBe('ok');
  const mint = await rpc.getAccountInfo(DEVNET_USDC, { encoding: 'jsonParsed' }).send();
  expect((mint.value?.data as any).parsed.type).toBe('mint');
  proc.kill('SIGTERM');
  expect(await proc.exited).toBe(0);
});
