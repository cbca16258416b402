/**
 * Litestream round trip: the daemon's ledger replicated to a file replica while payments run,
 * restored with `litestream restore` into a fresh data dir (with master.key and the fee payer key
 * copied separately), marked restored, and started through the same reconciliation as
 * `admin restore`: a payment the replica missed comes back from the chain. Needs the litestream
 * binary (npm @flydotio/litestream, node_modules/.bin or PATH); skips saying so when it cannot run.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import type { ProfileData } from '../../src/client/profile.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { DEVNET_USDC } from '../../src/solana/networks.ts';
import { runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

/**
 * The litestream binary itself, from the npm package's platform build first: the package's
 * node_modules/.bin wrapper runs it as a child, so killing the wrapper would leave it running.
 */
function findLitestream(): string | null {
  const modules = join(import.meta.dir, '..', '..', 'node_modules');
  const native = join(modules, '@flydotio', `litestream-${process.platform}-${process.arch}`, 'litestream');
  const wrapper = join(modules, '.bin', 'litestream');
  for (const candidate of [existsSync(native) ? native : null, existsSync(wrapper) ? wrapper : null, Bun.which('litestream')]) {
    if (candidate && Bun.spawnSync([candidate, 'version']).exitCode === 0) return candidate;
  }
  return null;
}

const litestream = findLitestream();
if (!litestream) console.warn('litestream.test.ts skipped: no runnable litestream binary in node_modules/.bin or PATH (npm install @flydotio/litestream)');

let simnet: Simnet;
let daemon: DaemonProcess;
const root = tempDir('aw-litestream-');
const dataDir = join(root, 'data');
const restoredDir = join(root, 'restored');
const config = join(root, 'litestream.yml');
const env = () => ({ AGENT_WALLET_SOLANA_NETWORK: 'custom', AGENT_WALLET_SOLANA_RPC_URL: simnet.url, AGENT_WALLET_SOLANA_USDC_MINT: DEVNET_USDC });

beforeAll(async () => {
  if (!litestream) return;
  // Fast slots: the first start after a restore waits out the newest blockhash (150 slots).
  simnet = await startSimnet({ port: 0, slotMs: 50 });
  daemon = await startDaemonProcess({ dataDir, env: env() });
  await simnet.airdrop(daemon.started.fee_payer as Address, 10_000_000_000n);
  await simnet.faucet(daemon.started.fee_payer as Address, 0n);
  writeFileSync(config, `dbs:\n  - path: ${join(dataDir, 'wallet.db')}\n    replicas:\n      - type: file\n        path: ${join(root, 'replica')}\n        sync-interval: 200ms\n`);
});
afterAll(async () => {
  if (!litestream) return;
  await daemon.stop();
  await simnet.stop();
});

async function pay(api: ApiClient, profile: ProfileData, to: string, amount: string): Promise<Record<string, any>> {
  const intent = await api.call<{ transaction_id: string }>('bot', 'pay', { to, amount });
  return confirmSignSubmit(api, profile, intent.transaction_id);
}

/** Restores the replica to `out` and says whether it holds `transactionId` completed. */
function replicaHolds(out: string, transactionId: string): boolean {
  const res = Bun.spawnSync([litestream!, 'restore', '-config', config, '-o', out, join(dataDir, 'wallet.db')]);
  // Before the first snapshot litestream answers "no matching backups found" and writes nothing.
  if (res.exitCode !== 0 || !existsSync(out)) return false;
  const db = new Database(out, { readonly: true });
  try {
    return db.query<{ status: string }, [string]>('SELECT status FROM transactions WHERE transaction_id = ?').get(transactionId)?.status === 'completed';
  } finally {
    db.close();
  }
}

test.skipIf(!litestream)('replicate to a file replica, litestream restore, mark restored, start: the payment the replica missed is recovered and a new one completes', async () => {
  const a = (await registerWallet(new ApiClient(daemon.url), { name: 'Stream A' })).profile;
  const b = (await registerWallet(new ApiClient(daemon.url), { name: 'Stream B' })).profile;
  const db = new Database(join(dataDir, 'wallet.db'));
  db.run('PRAGMA busy_timeout = 5000');
  db.run("INSERT OR IGNORE INTO owners (owner_id, email, created_at) VALUES ('own_ls', 'owner@example.com', 1)");
  db.query("UPDATE wallets SET status = 'claimed', owner_id = 'own_ls', claimed_at = 1 WHERE wallet_id IN (?, ?)").run(a.wallet_id, b.wallet_id);
  db.close();
  await simnet.faucet(a.address as Address, 50_000_000n);
  const api = new ApiClient(daemon.url, a.api_key);

  const replicator = Bun.spawn([litestream!, 'replicate', '-config', config], { stdout: 'ignore', stderr: 'pipe' });
  const replicated = await pay(api, a, b.username, '1');
  expect(replicated.status).toBe('completed');
  const probeDir = join(root, 'probe');
  mkdirSync(probeDir);
  const deadline = Date.now() + 30_000;
  for (let i = 0; !replicaHolds(join(probeDir, `wallet-${i}.db`), replicated.transaction_id); i++) {
    if (Date.now() > deadline) throw new Error('the replica never caught up');
    await Bun.sleep(200);
  }
  replicator.kill('SIGTERM');
  await replicator.exited;
  // What this test started is gone: no replicator of its config is left running.
  expect(Bun.spawnSync(['pgrep', '-f', `replicate -config ${config}`]).stdout.toString().trim()).toBe('');

  // Not replicated: the replicator is stopped.
  const missed = await pay(api, a, b.username, '2');
  expect(missed.status).toBe('completed');
  await daemon.kill();

  mkdirSync(restoredDir, { mode: 0o700 });
  const restore = Bun.spawnSync([litestream!, 'restore', '-config', config, '-o', join(restoredDir, 'wallet.db'), join(dataDir, 'wallet.db')]);
  expect(restore.exitCode).toBe(0);
  for (const file of ['master.key', 'fee-payer.json']) copyFileSync(join(dataDir, file), join(restoredDir, file));
  const marked = await runCli(['admin', 'mark-restored', '--backup-time', new Date().toISOString(), '--data-dir', restoredDir]);
  expect(marked.code).toBe(0);

  daemon = await startDaemonProcess({ dataDir: restoredDir, env: env(), timeoutMs: 60_000 });
  // It answers at once; the reconciliation finishes in the background.
  const reconciledBy = Date.now() + 60_000;
  while (!daemon.logs().includes('restore: ledger reconciled with the chain') && Date.now() < reconciledBy) await Bun.sleep(100);
  expect(daemon.logs()).toContain('restore: ledger reconciled with the chain');
  const api2 = new ApiClient(daemon.url, a.api_key);
  const sent = await api2.call<{ items: any[] }>('bot', 'list_payments', { limit: 10 });
  const byId = new Map(sent.items.map((t) => [t.transaction_id, t]));
  expect(byId.get(replicated.transaction_id)).toMatchObject({ status: 'completed', signature: replicated.signature });
  expect(byId.get(missed.transaction_id)).toMatchObject({ status: 'completed', signature: missed.signature });
  expect((await pay(api2, a, b.username, '0.5')).status).toBe('completed');
});
