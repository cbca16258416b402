/**
 * Moving a ledger from SQLite to PostgreSQL, end to end: a daemon on SQLite (network "custom" in
 * front of a simnet that outlives it) makes wallets, payments and decision-log rows; it stops;
 * `admin copy-ledger` copies and verifies; a daemon started on the copy serves the same wallets,
 * balances and history, a new payment completes, and the decision-log export taken before the move
 * still verifies and is the start of the export taken after it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import type { ProfileData } from '../../src/client/profile.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { claimInLedger, customChainEnv, runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile, type PgCluster } from '../helpers/pg.ts';
import { tempDir } from '../helpers/services.ts';

let simnet: Simnet;
let server: string;
let cluster: PgCluster | null = null;
let daemon: DaemonProcess | null = null;
const root = tempDir('aw-copy-');
const dataDir = join(root, 'data');

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 50 });
  ({ url: server, cluster } = await pgServerForFile('the copy-ledger end-to-end test', 'fail'));
});
afterAll(async () => {
  await daemon?.stop();
  await simnet.stop();
  await cluster?.stop();
});

async function pay(api: ApiClient, profile: ProfileData, to: string, amount: string): Promise<Record<string, any>> {
  const intent = await api.call<{ transaction_id: string }>('bot', 'pay', { to, amount });
  return confirmSignSubmit(api, profile, intent.transaction_id);
}


async function exportLog(url: string, walletId: string, token: string, file: string): Promise<string> {
  const res = await fetch(`${new URL(url).origin}/v1/owner/decision-log?wallet_id=${walletId}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  writeFileSync(file, await res.text());
  return file;
}

const verifyLog = (file: string, daemonUrl: string) => runCli(['owner', 'verify-log', file, '--key', `${new URL(daemonUrl).origin}/.well-known/agent-wallet/log-key`, '--json']);

test('copy-ledger moves a live ledger to PostgreSQL: the daemon on the copy serves the same wallets, balances and history, and the log exported before the move still verifies', async () => {
  const env = customChainEnv(simnet.url);
  // The ledger to move is SQLite's, also when the suite runs on PostgreSQL (which would otherwise configure the data dir for it).
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, 'config.toml'), '', { mode: 0o600 });
  daemon = await startDaemonProcess({ dataDir, env });
  await simnet.airdrop(daemon.started.fee_payer as Address, 10_000_000_000n);
  await simnet.faucet(daemon.started.fee_payer as Address, 0n);
  const a = (await registerWallet(new ApiClient(daemon.url), { name: 'Copy A' })).profile;
  const b = (await registerWallet(new ApiClient(daemon.url), { name: 'Copy B' })).profile;
  await claimInLedger(dataDir, [a.wallet_id, b.wallet_id]);
  await simnet.faucet(a.address as Address, 50_000_000n);
  const apiA = new ApiClient(daemon.url, a.api_key);
  const apiB = new ApiClient(daemon.url, b.api_key);
  for (const amount of ['1', '2.5', '0.25']) expect((await pay(apiA, a, b.username, amount)).status).toBe('completed');
  const paylink = await apiB.call<{ request_id: string }>('bot', 'create_payment_request', { description: 'Order 1', amount: '3' });
  // The deposit watch records the faucet's deposit in its own time: wait for it, so the history is settled.
  const deadline = Date.now() + 20_000;
  while (!(await apiA.call<{ items: { type: string }[] }>('bot', 'transactions', { limit: 50 })).items.some((t) => t.type === 'deposit')) {
    if (Date.now() > deadline) throw new Error('the deposit was never recorded');
    await Bun.sleep(100);
  }
  const token = JSON.parse((await runCli(['admin', 'owner-token', 'owner@example.com', '--data-dir', dataDir, '--json'], env)).stdout).token as string;
  const before = {
    a: await apiA.call<any>('bot', 'balance'),
    b: await apiB.call<any>('bot', 'balance'),
    history: await apiA.call<any>('bot', 'transactions', { limit: 50 }),
    paylink: await apiB.call<any>('bot', 'get_payment_request', { request_id: paylink.request_id }),
  };
  const logBefore = await exportLog(daemon.url, a.wallet_id, token, join(root, 'before.jsonl'));
  const oldUrl = daemon.url;

  // A running daemon is refused (its ledger could change under the copy); a stopped one is copied and verified.
  const url = await emptyPgDatabase(server);
  const running = await runCli(['admin', 'copy-ledger', '--data-dir', dataDir, '--to', url], env);
  expect(running.code).toBe(1);
  expect(running.stderr).toContain('daemon');
  await daemon.stop();
  daemon = null;
  const copy = await runCli(['admin', 'copy-ledger', '--data-dir', dataDir, '--to', url, '--json'], env);
  expect(copy.code).toBe(0);
  const report = JSON.parse(copy.stdout);
  expect(report.ok).toBe(true);
  expect(report.tables.find((t: { table: string }) => t.table === 'transactions').rows).toBeGreaterThanOrEqual(6);
  expect(report.decisionLog.firstBreak).toBeNull();
  expect(copy.stderr).toContain('copy-ledger: transactions:');
  const again = await runCli(['admin', 'copy-ledger', '--data-dir', dataDir, '--to', url], env);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('not empty');

  daemon = await startDaemonProcess({ dataDir, env: { ...env, AGENT_WALLET_DATABASE_URL: url } });
  const origin = new URL(daemon.url).origin;
  const onPg = { a: new ApiClient(daemon.url, a.api_key), b: new ApiClient(daemon.url, b.api_key) };
  expect(await onPg.a.call<any>('bot', 'balance')).toEqual(before.a);
  expect(await onPg.b.call<any>('bot', 'balance')).toEqual(before.b);
  expect(await onPg.a.call<any>('bot', 'transactions', { limit: 50 })).toEqual(before.history);
  // The same paylink; only its links name the new daemon's port.
  // (Links name localhost, the page URL of a daemon on 127.0.0.1: src/daemon/services.ts.)
  const pages = (o: string) => [o, o.replace('//127.0.0.1:', '//localhost:')];
  const withoutLinks = (p: Record<string, unknown>) => JSON.parse([...pages(new URL(oldUrl).origin), ...pages(origin)].reduce((text, o) => text.replaceAll(o, 'ORIGIN'), JSON.stringify(p)));
  expect(withoutLinks(await onPg.b.call<any>('bot', 'get_payment_request', { request_id: paylink.request_id }))).toEqual(withoutLinks(before.paylink));
  // The ledger keeps working on PostgreSQL: a new payment completes, its money on chain.
  expect((await pay(onPg.a, a, b.username, '0.5')).status).toBe('completed');

  const logAfter = await exportLog(daemon.url, a.wallet_id, token, join(root, 'after.jsonl'));
  for (const file of [logBefore, logAfter]) {
    const r = await verifyLog(file, daemon.url);
    expect(r.code).toBe(0);
  }
  // Every row exported before the move is in the later export, unchanged.
  const rows = (file: string) => readFileSync(file, 'utf8').trim().split('\n').filter((l) => l.includes('"type":"row"'));
  const earlier = rows(logBefore);
  const later = rows(logAfter);
  expect(later.length).toBeGreaterThan(earlier.length);
  expect(later.slice(0, earlier.length)).toEqual(earlier);
}, 120_000);
