/**
 * Crash-point sweep: for pay and for withdraw, the daemon (a real child process) is killed with
 * SIGKILL at each step (AGENT_WALLET_CRASH_AT), restarted, and the client retries as a real agent
 * would (same idempotency key, then confirm/sign/submit). Afterwards: integrity_check ok, exactly
 * one landed transfer per intent, the intent terminal, and no nonce used twice.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { ApiClient, ApiError, ConnectionError } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import type { ProfileData } from '../../src/client/profile.ts';
import { newId } from '../../src/contract/ids.ts';
import type { CrashPoint } from '../../src/crash-points.ts';
import { ensureOwner, insertOwnerToken } from '../../src/db/owners.ts';
import { markClaimed } from '../../src/db/wallets.ts';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { createRpcChainPort, type ChainPort } from '../../src/solana/port.ts';
import { DEVNET_USDC } from '../../src/solana/networks.ts';
import { startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { openDataDirLedger } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

let simnet: Simnet;
let chain: ChainPort;
beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 400 });
  chain = createRpcChainPort(simnet.url);
});
afterAll(() => simnet.stop());

const POINTS: CrashPoint[] = ['intent_committed', 'share_computed', 'signed_stored', 'broadcast_sent', 'confirmation_seen', 'completion_recorded'];

function env(crashAt?: string): Record<string, string> {
  return {
    AGENT_WALLET_SOLANA_NETWORK: 'custom',
    AGENT_WALLET_SOLANA_RPC_URL: simnet.url,
    AGENT_WALLET_SOLANA_USDC_MINT: DEVNET_USDC,
    ...(crashAt ? { AGENT_WALLET_CRASH_AT: crashAt } : {}),
  };
}

/** Claims the wallet for an owner and returns that owner's API token (what `admin owner-token` does). */
async function claimWithToken(dataDir: string, walletId: string): Promise<string> {
  const ledger = await openDataDirLedger(dataDir);
  const db = ledger.store;
  const key = newApiKey('owner');
  try {
    await db.transaction(async () => {
      const { owner } = await ensureOwner(db, 'owner@example.com', newId('owner'), Date.now());
      await markClaimed(db, walletId, owner.owner_id, Date.now());
      await insertOwnerToken(db, { token_id: newId('ownerToken'), owner_id: owner.owner_id, token_hash: key.hash, label: 'sweep', now: Date.now() });
    });
  } finally {
    await ledger.close();
  }
  return key.key;
}

async function waitForExit(d: DaemonProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    try {
      process.kill(d.pid, 0);
    } catch {
      return;
    }
    await Bun.sleep(20);
  }
  await d.kill();
}

/** Runs `step`; a daemon that died mid-request shows up as a ConnectionError. */
async function survive<T>(step: () => Promise<T>): Promise<T | null> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof ConnectionError) return null;
    throw err;
  }
}

/** The agent's retry after a restart: replay the intent by its key, then finish it whatever its state. */
async function finish(api: ApiClient, profile: ProfileData, start: () => Promise<Record<string, any>>, confirmAction: string, approve?: (approvalId: string) => Promise<void>) {
  const intent = await start();
  if (intent.status === 'awaiting_approval' && approve) await approve(intent.approval_id);
  try {
    return await confirmSignSubmit(api, profile, intent.transaction_id, { confirmAction });
  } catch (err) {
    if (err instanceof ApiError && err.errorCode === 'ALREADY_COMPLETED') return { status: 'completed', transaction_id: intent.transaction_id };
    throw err;
  }
}

/** Landed transactions that credited `owner`'s USDC account (the operator's setup of a claimed wallet's account moves none). */
async function landedTo(owner: Address): Promise<number> {
  const ata = await usdcAta(owner, simnet.mint);
  let credits = 0;
  for (const s of await chain.getSignaturesForAddress(ata, { limit: 100 })) {
    const t = s.err === null ? await chain.getTokenTransfersOf(s.signature) : null;
    if (t?.deltas.some((d) => d.account === ata && d.delta > 0n)) credits++;
  }
  return credits;
}

async function checkLedger(dataDir: string, txId: string) {
  const ledger = await openDataDirLedger(dataDir);
  const db = ledger.store;
  try {
    if (db.dialect === 'sqlite') expect(await db.get('PRAGMA integrity_check')).toEqual({ integrity_check: 'ok' });
    const tx = (await db.get('SELECT status, signature FROM transactions WHERE transaction_id = ?', txId)) as { status: string; signature: string };
    const used = (await db.get("SELECT count(*) AS n FROM sign_sessions WHERE transaction_id = ? AND status = 'used'", txId)) as { n: bigint };
    const live = (await db.get("SELECT count(*) AS n FROM sign_sessions WHERE transaction_id = ? AND status != 'open' AND nonces IS NOT NULL", txId)) as { n: bigint };
    return { tx, usedSessions: Number(used.n), closedWithNonces: Number(live.n) };
  } finally {
    await ledger.close();
  }
}

describe.each(['pay', 'withdraw'] as const)('%s', (flow) => {
  test.each(POINTS)(`kill -9 at %s, restart, retry: one landed transfer, terminal intent, nonces used once`, async (point) => {
    const dataDir = join(tempDir('aw-sweep-'), 'data');
    let daemon = await startDaemonProcess({ dataDir, env: env(point) });
    await simnet.airdrop(daemon.started.fee_payer as Address, 10_000_000_000n);
    await simnet.faucet(daemon.started.fee_payer as Address, 0n);
    const a = await registerWallet(new ApiClient(daemon.url), { name: 'Payer' });
    const recipient = flow === 'pay' ? (await registerWallet(new ApiClient(daemon.url), { name: 'Payee' })).profile : null;
    const token = await claimWithToken(dataDir, a.profile.wallet_id);
    if (recipient) await claimWithToken(dataDir, recipient.wallet_id);
    const destination = recipient ? (recipient.address as Address) : (await generateKeyPairSigner()).address;
    await simnet.faucet(a.profile.address as Address, 20_000_000n);
    const key = `sweep-${flow}-${point}`;
    const start = (api: ApiClient) =>
      flow === 'pay'
        ? api.call<Record<string, any>>('bot', 'pay', { to: recipient!.username, amount: 3 }, { idempotencyKey: key })
        : api.call<Record<string, any>>('bot', 'withdraw', { amount: 3, to_address: destination, reason: 'sweep' }, { idempotencyKey: key });
    const approve = (url: string) => async (approvalId: string) => {
      await new ApiClient(url, token).call('owner', 'approve', { approval_id: approvalId }).catch((err) => {
        if (!(err instanceof ApiError && err.errorCode === 'INVALID_STATUS')) throw err;
      });
    };
    const confirmAction = flow === 'pay' ? 'confirm_payment' : 'confirm_withdrawal';

    // First run: the daemon dies at `point` somewhere in the flow (or in its confirmation job).
    const api1 = new ApiClient(daemon.url, a.profile.api_key);
    await survive(() => finish(api1, a.profile, () => start(api1), confirmAction, approve(daemon.url)));
    await waitForExit(daemon);

    // Restart without the fault; the agent retries.
    daemon = await startDaemonProcess({ dataDir, env: env() });
    const api2 = new ApiClient(daemon.url, a.profile.api_key);
    const done = await finish(api2, a.profile, () => start(api2), confirmAction, approve(daemon.url));
    expect(done.status).toBe('completed');
    expect(await daemon.stop()).toBe(0);

    expect(await landedTo(destination)).toBe(1);
    expect(await chain.getTokenBalance(destination, simnet.mint)).toBe(3_000_000n);
    const ledger = await checkLedger(dataDir, String(done.transaction_id));
    expect(ledger.tx.status).toBe('completed');
    expect(ledger.usedSessions).toBe(1);
    expect(ledger.closedWithNonces).toBe(0);
  });
});
