/**
 * A daemon restarted (kill -9) with signed transactions still pending resumes the confirmation
 * cadence without a burst: its first look is one block height and one status call for all of them,
 * nothing is re-sent until one cadence later, and then each signed message goes out once and lands.
 * The chain runs outside the daemon (network "custom" pointed at a simnet), as a real cluster would;
 * simnet counts every call. Pending transactions are kept unlanded by the congestion fault.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { CONFIRMATION_CADENCE_SECONDS } from '../../src/jobs/payments.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { claimInLedger, customChainEnv, fundOperator, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';
import { signWithoutSubmit } from '../helpers/signing.ts';

const PENDING = 5;

let simnet: Simnet;
let daemon: DaemonProcess;
const dataDir = join(tempDir('aw-restart-'), 'data');
const env = () => customChainEnv(simnet.url);

beforeAll(async () => {
  // 400 ms blocks: a blockhash stays valid about a minute, longer than this test.
  simnet = await startSimnet({ port: 0, slotMs: 400 });
  daemon = await startDaemonProcess({ dataDir, env: env() });
  await fundOperator(simnet, daemon);
});
afterAll(async () => {
  await daemon.stop();
  await simnet.stop();
});

const claim = async (walletId: string): Promise<void> => await claimInLedger(dataDir, [walletId]);

const calls = (method: string): number => simnet.stats().calls[method] ?? 0;

test('a restart with pending transactions resumes the cadence without a burst', async () => {
  const a = await registerWallet(new ApiClient(daemon.url), { name: 'Restart A' });
  const b = await registerWallet(new ApiClient(daemon.url), { name: 'Restart B' });
  await claim(a.profile.wallet_id);
  await claim(b.profile.wallet_id);
  await simnet.faucet(a.profile.address as Address, 50_000_000n);
  await simnet.faucet(b.profile.address as Address, 0n);
  // Every message is priced below this floor, so the signed bytes stay pending however often they are sent.
  simnet.setCongestion(1_000_000_000n);
  const api = new ApiClient(daemon.url, a.profile.api_key);
  const ids: string[] = [];
  for (let i = 0; i < PENDING; i++) ids.push(await signWithoutSubmit(api, a.profile, { to: b.profile.username, amount: 1 }));

  await daemon.kill();
  simnet.resetStats();
  simnet.setCongestion(null);
  daemon = await startDaemonProcess({ dataDir, env: env() });

  // The first look after the start: one height (getEpochInfo), one status call for all five, no send.
  const lookDeadline = Date.now() + 10_000;
  while (calls('getSignatureStatuses') === 0 && Date.now() < lookDeadline) await Bun.sleep(20);
  const firstLook = Date.now();
  expect(calls('getSignatureStatuses')).toBe(1);
  expect(calls('getEpochInfo')).toBe(1);
  expect(calls('sendTransaction')).toBe(0);

  // One cadence later every pending message is re-sent once, and they land.
  const api2 = new ApiClient(daemon.url, a.profile.api_key);
  const doneDeadline = Date.now() + 20_000;
  let firstSendAt: number | null = null;
  let statuses: string[] = [];
  for (;;) {
    if (firstSendAt === null && calls('sendTransaction') > 0) firstSendAt = Date.now();
    const listed = await api2.call<{ items: { transaction_id: string; status: string }[] }>('bot', 'transactions', {});
    statuses = ids.map((id) => listed.items.find((t) => t.transaction_id === id)?.status ?? 'missing');
    if (statuses.every((s) => s === 'completed') || Date.now() > doneDeadline) break;
    await Bun.sleep(100);
  }
  const elapsed = Date.now() - firstLook;
  expect(statuses).toEqual(Array(PENDING).fill('completed'));
  expect(firstSendAt).not.toBeNull();
  expect(firstSendAt! - firstLook).toBeGreaterThanOrEqual(CONFIRMATION_CADENCE_SECONDS * 1000 - 600);
  expect(calls('sendTransaction')).toBe(PENDING);
  // The cadence: about one status call per CONFIRMATION_CADENCE_SECONDS, not one per transaction.
  expect(calls('getSignatureStatuses')).toBeLessThanOrEqual(Math.ceil(elapsed / (CONFIRMATION_CADENCE_SECONDS * 1000)) + 2);

  const chain = createRpcChainPort(simnet.url);
  const landed = (await chain.getSignaturesForAddress(await usdcAta(b.profile.address as Address, simnet.mint), { limit: 100 })).filter((s) => s.err === null);
  expect(landed.length).toBe(PENDING + 1); // the faucet's deposit and the five payments, each once
});
