/**
 * A dead node costs nothing (issue 42): two daemons on one PostgreSQL behind a real Caddy balancer
 * (active /readyz checks, retries), agents paying through it with idempotency keys, and kill -9 of
 * the node holding the chain watch while payments are in flight. Every payment completes exactly
 * once (each key one transaction; the chain moved by exactly the payments), a deposit made after
 * the kill is recorded by the survivor within 15 s (the watch moved), and the merchant's receiver
 * gets each webhook message, once per attempt.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { ApiClient, ApiError } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { AgentRound, completePay, confirmSignSubmit } from '../../src/client/sign.ts';
import type { ProfileData } from '../../src/client/profile.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { claimInLedger, type DaemonProcess } from '../helpers/daemon.ts';
import { caddyOrSkip, startCaddyBalancer } from '../helpers/caddy.ts';
import { startNodes, type Nodes } from '../helpers/nodes.ts';
import { pgServerForFile, type PgCluster } from '../helpers/pg.ts';
import { randomAddress, startReceiver, type Receiver } from '../webhooks/receiver.ts';

const AGENTS = 8;
const PAYMENTS = 3;
const caddy = caddyOrSkip('the failover test through a real balancer');
let simnet: Simnet;
let cluster: PgCluster | null = null;
let nodes: Nodes;
let balancer: { url: string; stop(): Promise<void> } | null = null;
let receiver: Receiver;

beforeAll(async () => {
  if (!caddy) return;
  simnet = await startSimnet({ port: 0, slotMs: 100 });
  const server = await pgServerForFile('the failover test', 'fail');
  cluster = server.cluster;
  receiver = startReceiver();
  nodes = await startNodes(server.url, simnet, 2, { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' });
  balancer = await startCaddyBalancer(nodes.nodes.map((n) => new URL(n.url).origin));
}, 120_000);
afterAll(async () => {
  await balancer?.stop();
  await nodes?.stop();
  receiver?.stop();
  await simnet?.stop();
  await cluster?.stop();
}, 60_000);

const readyz = async (node: DaemonProcess) => (await (await fetch(`${new URL(node.url).origin}/readyz`)).json()) as { chain_watch?: string };

/** Polls `fn` until it returns a value (not undefined), or fails after `ms`. */
async function until<T>(what: string, ms: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(100);
  }
}

/** What an agent does when a call fails on the way (a 502 from the balancer, a reset): the same call again, same key. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      // A refusal of the ledger is an answer, not an outage.
      if (err instanceof ApiError && err.status < 500 && err.errorCode !== 'IDEMPOTENCY_CONFLICT') throw err;
      if (Date.now() > deadline) throw err;
      await Bun.sleep(200);
    }
  }
}

/** One payment as a careful agent makes it: pay under its key, sign; after a failure, resend the signed bytes or sign anew. */
async function payOnce(api: ApiClient, profile: ProfileData, to: string, key: string): Promise<string> {
  const round = new AgentRound(profile);
  const intent = await retrying(() => api.call<Record<string, unknown>>('bot', 'pay', { to, amount: '0.5', commitments: round.commitments }, { idempotencyKey: key }));
  const id = String(intent.transaction_id);
  let done = await completePay(api, profile, intent, round).catch(() => null);
  while (done?.status !== 'completed') {
    done = await retrying(() => api.call<Record<string, unknown>>('bot', 'submit_signed_tx', { transaction_id: id, wait: true })).catch(async (err: unknown) => {
      // Not signed yet (its round died with the node): a new round over the message, checked as before.
      if (err instanceof ApiError && err.status < 500) return await confirmSignSubmit(api, profile, id).catch(() => null);
      throw err;
    });
  }
  return id;
}

test.skipIf(!caddy)('kill -9 of the node watching the chain while payments are in flight: each payment completes once, chain = ledger, a later deposit is recorded within 15 s, each webhook message arrives, once per attempt', async () => {
  const api = new ApiClient(`${balancer!.url}/v1`);
  const payout = randomAddress();
  await simnet.faucet(payout as Address, 0n);
  const merchant = await api.call<{ merchant_id: string; username: string; api_key: string }>('merchant', 'register', { name: 'Failover Shop', username: 'failover-shop', payout_address: payout, webhook_url: receiver.url });
  const agents: ProfileData[] = [];
  for (let i = 0; i < AGENTS; i++) agents.push((await registerWallet(api, { name: `Failover agent ${i}` })).profile);
  await claimInLedger(nodes.nodes[0]!.dataDir, agents.map((p) => p.wallet_id));
  for (const p of agents) await simnet.faucet(p.address as Address, 10_000_000n);
  const chain = createRpcChainPort(simnet.url);
  const before = await Promise.all(agents.map((p) => chain.getTokenBalance(p.address as Address, simnet.mint)));
  const payoutBefore = await chain.getTokenBalance(payout as Address, simnet.mint);

  const watcher = await until('a node holds the chain watch', 15_000, async () => {
    for (const n of nodes.nodes) if ((await readyz(n)).chain_watch === 'this node') return n;
    return undefined;
  });
  const survivor = nodes.nodes.find((n) => n !== watcher)!;

  let completed = 0;
  const runs = agents.map(async (p, i) => {
    const client = new ApiClient(`${balancer!.url}/v1`, p.api_key);
    const ids: string[] = [];
    for (let k = 0; k < PAYMENTS; k++) {
      ids.push(await payOnce(client, p, merchant.username, `failover-${i}-${k}`));
      completed++;
    }
    return ids;
  });
  // Killed with payments in flight: some done, most not.
  await until('the first payments complete', 60_000, async () => (completed >= 4 ? true : undefined));
  await watcher.kill();
  const killedAt = Date.now();
  // A deposit after the kill: the survivor takes the watch over and records it.
  const depositor = agents[0]!;
  await simnet.faucet(depositor.address as Address, 3_000_000n);
  const ids = (await Promise.all(runs)).flat();
  expect(new Set(ids).size).toBe(AGENTS * PAYMENTS);

  const depositorApi = new ApiClient(`${balancer!.url}/v1`, depositor.api_key);
  await until('the deposit is recorded through the survivor', 15_000 - (Date.now() - killedAt), async () => {
    const events = await depositorApi.call<{ items: { type: string; data: { amount: number; kind?: string } }[] }>('bot', 'events', { types: ['payment.received'], limit: 10 });
    return events.items.some((e) => e.data.amount === 3 && e.data.kind === 'deposit') ? true : undefined;
  });
  expect((await readyz(survivor)).chain_watch).toBe('this node');

  // Exactly once: each agent's account moved by its 3 payments (0.5 + 0.01 fee each) and the deposit, the payout by 24 × 0.5.
  const after = await Promise.all(agents.map((p) => chain.getTokenBalance(p.address as Address, simnet.mint)));
  agents.forEach((_, i) => expect(after[i]! - before[i]!).toBe(-BigInt(PAYMENTS) * 510_000n + (i === 0 ? 3_000_000n : 0n)));
  expect((await chain.getTokenBalance(payout as Address, simnet.mint)) - payoutBefore).toBe(BigInt(AGENTS * PAYMENTS) * 500_000n);
  for (const [i, p] of agents.entries()) {
    const client = new ApiClient(`${balancer!.url}/v1`, p.api_key);
    const balance = await client.call<{ balance: number }>('bot', 'balance', {});
    expect(BigInt(Math.round(balance.balance * 1e6))).toBe(after[i]!);
    const sent = await client.call<{ items: { status: string }[] }>('bot', 'list_payments', { limit: 20 });
    expect(sent.items.filter((t) => t.status === 'completed')).toHaveLength(PAYMENTS);
    expect(sent.items).toHaveLength(PAYMENTS);
  }

  // Webhooks: every payment's message arrives, and none more often than it was attempted. A delivery
  // the killed node had leased is tried again once its lease ends (the outbound timeout + 30 s), so
  // it may arrive late, and twice if the dead node's attempt reached the receiver before the kill.
  const merchantApi = new ApiClient(`${balancer!.url}/v1`, merchant.api_key);
  const payments = () => receiver.requests.filter((r) => JSON.parse(r.body).type === 'payment.received');
  await until('every webhook message is delivered', 90_000, async () => (new Set(payments().map((r) => r.headers.get('webhook-id'))).size >= AGENTS * PAYMENTS ? true : undefined));
  const arrivals = new Map<string, number>();
  for (const r of payments()) arrivals.set(r.headers.get('webhook-id')!, (arrivals.get(r.headers.get('webhook-id')!) ?? 0) + 1);
  expect(arrivals.size).toBe(AGENTS * PAYMENTS);
  // The receiver has a message before its sender records the answer: wait for each row to say delivered.
  type Deliveries = { items: { delivery_id: string; status: string; attempts: number }[] };
  const recorded = async () => {
    const d = await merchantApi.call<Deliveries>('merchant', 'webhook_deliveries', { limit: 100 });
    return [...arrivals.keys()].every((id) => d.items.find((x) => x.delivery_id === id)?.status === 'delivered') ? d : undefined;
  };
  const deliveries = await until('every arrived message is recorded delivered', 30_000, recorded);
  for (const [id, n] of arrivals) {
    const row = deliveries.items.find((d) => d.delivery_id === id);
    expect(row?.status).toBe('delivered');
    // Once per attempt: the recorded attempts, and at most one more that the killed node made and could not record.
    expect(n).toBeLessThanOrEqual(row!.attempts + 1);
  }
}, 240_000);
