/**
 * Power loss after each kind of external effect. The daemon commits without waiting for the disk
 * (synchronous=NORMAL) and syncs the WAL on a worker only when an effect waits for it
 * (src/db/durability.ts). Here a real daemon process on network `custom` (the chain, a standalone
 * simnet, outlives it) is killed with SIGKILL right after an effect — an HTTP answer, a broadcast
 * seen by the RPC, a webhook seen by the merchant — and the WAL is cut back to the length the
 * last sync made durable, as the disk would have it after a power cut. Restarted on that file,
 * the ledger must hold everything the outside world saw, and agree with the chain.
 *
 * Without the rule nothing would ever be synced (syncs happen only when an effect waits), so each
 * case would lose what it answered or sent.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { ApiClient, ConnectionError } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import type { ProfileData } from '../../src/client/profile.ts';
import { newId } from '../../src/contract/ids.ts';
import { openDatabase } from '../../src/db/open.ts';
import { ensureOwner } from '../../src/db/owners.ts';
import { markClaimed } from '../../src/db/wallets.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { DEVNET_USDC } from '../../src/solana/networks.ts';
import { createRpcChainPort, type ChainPort } from '../../src/solana/port.ts';
import { startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';
import { randomAddress } from '../webhooks/receiver.ts';

let simnet: Simnet;
let chain: ChainPort;
/** The daemon to kill when the RPC sees a sendTransaction, and the signatures sent. */
const rpc = { killOnSend: 0, sent: [] as string[] };
let rpcProxy: ReturnType<typeof Bun.serve>;
/** The daemon to kill when the merchant receives an event of this type, and the webhook-ids received. */
const hooks = { killOn: '', pid: 0, received: [] as { id: string; type: string }[] };
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 400 });
  chain = createRpcChainPort(simnet.url);
  // The daemon's RPC: forwards every call; kills the daemon once the chain has accepted a send.
  rpcProxy = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = await req.text();
      const res = await fetch(simnet.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const text = await res.text();
      const call = JSON.parse(body) as { method?: string };
      if (call.method === 'sendTransaction' && rpc.killOnSend) {
        const result = (JSON.parse(text) as { result?: string }).result;
        if (result) {
          rpc.sent.push(result);
          process.kill(rpc.killOnSend, 'SIGKILL');
          rpc.killOnSend = 0;
        }
      }
      return new Response(text, { status: res.status, headers: { 'content-type': 'application/json' } });
    },
  });
  // The merchant's webhook endpoint: records each message; kills the daemon on the chosen event.
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = JSON.parse(await req.text()) as { type: string };
      hooks.received.push({ id: req.headers.get('webhook-id') ?? '', type: body.type });
      if (hooks.killOn && body.type === hooks.killOn) {
        process.kill(hooks.pid, 'SIGKILL');
        hooks.killOn = '';
      }
      return new Response('ok');
    },
  });
});
afterAll(async () => {
  await rpcProxy?.stop(true);
  await receiver?.stop(true);
  await simnet?.stop();
});

const root = tempDir('aw-power-');
const dataDir = join(root, 'data');
const syncedLog = join(root, 'synced-wal');
const env = {
  AGENT_WALLET_SOLANA_NETWORK: 'custom',
  AGENT_WALLET_SOLANA_USDC_MINT: DEVNET_USDC,
  AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
  AGENT_WALLET_TEST_SYNCED_WAL: syncedLog,
};
const start = () => startDaemonProcess({ dataDir, env: { ...env, AGENT_WALLET_SOLANA_RPC_URL: `http://127.0.0.1:${rpcProxy.port}` } });

/** What a power cut leaves: the WAL as long as the last sync made it, no shared-memory index. Returns the bytes discarded. */
function powerLoss(): number {
  const wal = join(dataDir, 'wallet.db-wal');
  const durable = Number(readFileSync(syncedLog, 'utf8'));
  const size = existsSync(wal) ? statSync(wal).size : 0;
  if (size > durable) truncateSync(wal, durable);
  rmSync(join(dataDir, 'wallet.db-shm'), { force: true });
  return Math.max(0, size - durable);
}

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/** The payer's outgoing transfers that landed, from the chain: signatures that took USDC out of its account. */
async function landedFrom(owner: Address): Promise<string[]> {
  const ata = await usdcAta(owner, simnet.mint);
  const out: string[] = [];
  for (const s of await chain.getSignaturesForAddress(ata, { limit: 100 })) {
    const t = s.err === null ? await chain.getTokenTransfersOf(s.signature) : null;
    if (t?.deltas.some((d) => d.account === ata && d.delta < 0n)) out.push(s.signature);
  }
  return out.sort();
}

test('killed and cut back to its last sync after an answer, a broadcast and a webhook, the ledger holds all three and equals the chain', async () => {
  // Set-up on a first daemon: payer, payee, a merchant with a webhook, the payer claimed and funded.
  let daemon: DaemonProcess = await start();
  await simnet.airdrop(daemon.started.fee_payer as Address, 10_000_000_000n);
  await simnet.faucet(daemon.started.fee_payer as Address, 0n);
  const payer = (await registerWallet(new ApiClient(daemon.url), { name: 'Payer' })).profile as ProfileData;
  const payee = (await registerWallet(new ApiClient(daemon.url), { name: 'Payee' })).profile as ProfileData;
  const merchant = await new ApiClient(daemon.url).call<any>('merchant', 'register', {
    name: 'Power Shop',
    username: 'power-shop',
    payout_address: randomAddress(),
    webhook_url: `http://127.0.0.1:${receiver.port}/hook`,
  });
  expect(await daemon.stop()).toBe(0);
  const db = openDatabase(join(dataDir, 'wallet.db'), { network: 'custom' });
  await db.transaction(async () => {
    const { owner } = await ensureOwner(db, 'owner@example.com', newId('owner'), Date.now());
    await markClaimed(db, payer.wallet_id, owner.owner_id, Date.now());
  });
  db.close();
  await simnet.faucet(payer.address as Address, 20_000_000n);

  // 1. An answer: the intent it names survives.
  daemon = await start();
  hooks.pid = daemon.pid;
  let api = new ApiClient(daemon.url, payer.api_key);
  const answered = await api.call<any>('bot', 'pay', { to: payee.username, amount: 1 });
  await daemon.kill();
  powerLoss();
  daemon = await start();
  api = new ApiClient(daemon.url, payer.api_key);
  const listed = await api.call<any>('bot', 'list_payments', {});
  expect(listed.items.map((t: any) => t.transaction_id)).toContain(answered.transaction_id);

  // 2. A broadcast: the chain has the bytes, so the ledger must know them (and record them landed).
  rpc.killOnSend = daemon.pid;
  const sending = await confirmSignSubmit(api, payer, answered.transaction_id, { wait: false }).catch((err) => err);
  expect(sending).toBeInstanceOf(ConnectionError);
  await daemon.kill();
  powerLoss();
  expect(rpc.sent).toHaveLength(1);
  daemon = await start();
  api = new ApiClient(daemon.url, payer.api_key);
  const landed = await waitFor('the broadcast transfer recorded as completed', async () => {
    const items = (await api.call<any>('bot', 'list_payments', { status: 'completed' })).items as any[];
    return items.find((t) => t.signature === rpc.sent[0]);
  });
  expect(landed.transaction_id).toBe(answered.transaction_id);

  // 3. A webhook: the merchant saw payment.received with a webhook-id the ledger must still hold.
  hooks.pid = daemon.pid;
  hooks.killOn = 'payment.received';
  const order = await api.call<any>('bot', 'pay', { to: 'power-shop', amount: 2, reference: 'order-1' });
  await confirmSignSubmit(api, payer, order.transaction_id, { wait: false });
  await waitFor('the payment.received webhook', async () => hooks.received.find((h) => h.type === 'payment.received'));
  await daemon.kill();
  powerLoss();
  daemon = await start();
  const seen = hooks.received.find((h) => h.type === 'payment.received')!;
  const shop = new ApiClient(daemon.url, merchant.api_key);
  const deliveries = (await shop.call<any>('merchant', 'webhook_deliveries', {})).items as any[];
  expect(deliveries.map((d) => d.delivery_id)).toContain(seen.id);

  // The ledger equals the chain: every transfer out of the payer's account, and nothing else, completed.
  api = new ApiClient(daemon.url, payer.api_key);
  const onChain = await landedFrom(payer.address as Address);
  expect(onChain).toHaveLength(2);
  const ledger = await waitFor('both payments completed in the ledger', async () => {
    const items = (await api.call<any>('bot', 'list_payments', { status: 'completed' })).items as any[];
    return items.length === 2 ? items : null;
  });
  expect(ledger.map((t) => t.signature).sort()).toEqual(onChain);
  expect(await daemon.stop()).toBe(0);
}, 90_000);
