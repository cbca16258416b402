/**
 * The metrics to alert on, scraped from a real daemon process on a standalone chain: present from
 * the first scrape and moving as payments are made; and the fee payer watch warning before SOL runs out.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { Metrics } from '../../src/metrics.ts';
import { feePayerWatch } from '../../src/ops/fee-payer-watch.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { DEVNET_USDC } from '../../src/solana/networks.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { openDatabase } from '../../src/db/open.ts';
import { join } from 'node:path';
import { startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { memoryLogger, tempDir, testServices } from '../helpers/services.ts';

let simnet: Simnet;
let daemon: DaemonProcess;
const dataDir = join(tempDir('aw-metrics-'), 'data');

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 200 });
  daemon = await startDaemonProcess({
    dataDir,
    env: { AGENT_WALLET_SOLANA_NETWORK: 'custom', AGENT_WALLET_SOLANA_RPC_URL: simnet.url, AGENT_WALLET_SOLANA_USDC_MINT: DEVNET_USDC },
  });
  await simnet.airdrop(daemon.started.fee_payer as Address, 10_000_000_000n);
  await simnet.faucet(daemon.started.fee_payer as Address, 0n);
});
afterAll(async () => {
  await daemon.stop();
  await simnet.stop();
});

async function scrape(): Promise<Map<string, number>> {
  const text = await (await fetch(new URL('/metrics', daemon.url))).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const at = line.lastIndexOf(' ');
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}

test('ledger gauges, fee payer SOL, signing histogram and completed payments: present, then moving with payments', async () => {
  // The fee payer gauge appears with the watch's first reading, a chain call that runs at start:
  // on a loaded machine the first scrape can come before it.
  let first = await scrape();
  for (const deadline = Date.now() + 10_000; !first.has('agent_wallet_fee_payer_lamports') && Date.now() < deadline; first = await scrape()) await Bun.sleep(50);
  for (const name of [
    'agent_wallet_transactions{status="pending"}',
    'agent_wallet_transactions{status="pre_approved"}',
    'agent_wallet_transactions{status="awaiting_approval"}',
    'agent_wallet_webhook_queue_depth',
    'agent_wallet_webhook_oldest_pending_seconds',
    'agent_wallet_mail_queue_depth',
    'agent_wallet_mail_oldest_queued_seconds',
    'agent_wallet_payments_completed_total',
    'agent_wallet_payments_completed_micro_usdc_total',
    'agent_wallet_signing_seconds_count',
    'agent_wallet_signing_seconds_bucket{le="+Inf"}',
    'agent_wallet_fee_payer_lamports',
  ]) {
    expect(first.has(name)).toBe(true);
  }
  expect(first.get('agent_wallet_payments_completed_total')).toBe(0);

  const a = (await registerWallet(new ApiClient(daemon.url), { name: 'Metrics A' })).profile;
  const b = (await registerWallet(new ApiClient(daemon.url), { name: 'Metrics B' })).profile;
  const db = openDatabase(join(dataDir, 'wallet.db'), { network: 'custom' });
  await db.transaction(async () => {
    await db.run("INSERT OR IGNORE INTO owners (owner_id, email, created_at) VALUES ('own_metrics', 'owner@example.com', 1)");
    await db.run("UPDATE wallets SET status = 'claimed', owner_id = 'own_metrics', claimed_at = 1 WHERE wallet_id IN (?, ?)", a.wallet_id, b.wallet_id);
  });
  db.close();
  await simnet.faucet(a.address as Address, 50_000_000n);
  const api = new ApiClient(daemon.url, a.api_key);

  const intent = await api.call<{ transaction_id: string }>('bot', 'pay', { to: b.username, amount: '2' });
  const waiting = await scrape();
  expect(waiting.get('agent_wallet_transactions{status="pre_approved"}')).toBe(1);

  const done = await confirmSignSubmit(api, a, intent.transaction_id);
  expect(done.status).toBe('completed');
  const second = await confirmSignSubmit(api, a, (await api.call<{ transaction_id: string }>('bot', 'pay', { to: b.username, amount: '3' })).transaction_id);
  expect(second.status).toBe('completed');

  const after = await scrape();
  expect(after.get('agent_wallet_transactions{status="pre_approved"}')).toBe(0);
  expect(after.get('agent_wallet_payments_completed_total')).toBe(2);
  expect(after.get('agent_wallet_payments_completed_micro_usdc_total')).toBe(5_000_000);
  expect(after.get('agent_wallet_signing_seconds_count')).toBe(2);
  expect(after.get('agent_wallet_signing_seconds_sum')).toBeGreaterThan(0);
  // A later scrape counts only what is new.
  expect((await scrape()).get('agent_wallet_payments_completed_total')).toBe(2);
});

test('the fee payer watch: the gauge shows the balance, and a fee payer without SOL warns in the log', async () => {
  const chain = createRpcChainPort(simnet.url);
  const { log, lines } = memoryLogger();
  const services = testServices({ chain, rpcUrl: simnet.url, log });
  const metrics = new Metrics();
  const watch = feePayerWatch(services, metrics);
  await watch.tick();
  expect(await metrics.render()).toContain('agent_wallet_fee_payer_lamports 0\n');
  expect(lines.some((l) => l.includes('the fee payer is running low on SOL') && l.includes(services.feePayer.address))).toBe(true);

  await simnet.airdrop(services.feePayer.address, 2_000_000_000n);
  lines.length = 0;
  await watch.tick();
  expect(await metrics.render()).toContain('agent_wallet_fee_payer_lamports 2000000000\n');
  expect(lines.some((l) => l.includes('running low'))).toBe(false);
});
