/**
 * The `nodes` section of `npm run bench`: several `agent-wallet serve` daemons on one PostgreSQL
 * ledger (test/helpers/nodes.ts), in front of one chain in its own process (bench-servers.ts simnet).
 *
 *   two nodes     payments/s of 16 agents spread over two nodes (8 each) against the same agents on
 *                 one node (the other up and idle), the same database server and chain; with what the
 *                 cores allow (the CPU per payment of each daemon, the PostgreSQL server, the chain
 *                 and the agents)
 *   failover      16 agents paying through Caddy (test/helpers/caddy.ts) in a closed loop, one node
 *                 killed -9: the first payment begun after the kill to complete, the longest gap
 *                 between completions around it, payments lost for good; 3 kills, median and max;
 *                 then every agent's completed payments in the ledger against those seen to complete
 *   watch         the chain watch's lease holder killed -9: until the survivor watches the chain,
 *                 and until a deposit made right after the kill shows in the wallet's history
 *
 * Every payment carries an idempotency key on pay; a call that fails (a 502 for a request the dead
 * node had taken, a reset connection) is retried: pay with the same key and body, then the payment
 * finished from what the ledger holds (submit_signed_tx re-sends signed bytes, else a new round).
 */
import { simnetFaucet } from '../src/simnet/faucet-client.ts';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Address } from '@solana/kit';
import { ApiClient, ApiError, ConnectionError } from '../src/client/api.ts';
import { AgentRound, completePay, confirmSignSubmit } from '../src/client/sign.ts';
import type { ProfileData } from '../src/client/profile.ts';
import type { Simnet } from '../src/simnet/index.ts';
import type { DaemonProcess } from '../test/helpers/daemon.ts';
import type { Nodes } from '../test/helpers/nodes.ts';

interface Loop {
  count: number;
  rps: number;
  p50: number;
  p99: number;
}

/** What bench.ts lends this section: its constants, its report and rows, and its measuring tools. */
export interface NodesBench {
  seconds: number;
  rounds: number;
  rows: string[];
  report(name: string, value: number, baseline: number, goal: number, unit: string, extra?: string): void;
  startChild(mode: string): Promise<{ port: number; pid: number; kill: () => void }>;
  closedLoop(seconds: number, workers: number, once: (worker: number) => Promise<void>): Promise<Loop>;
  median<T>(xs: T[], by: (x: T) => number): T;
  cpuMs(pid: number): number;
  pgServerCpuMs(dataDir: string): number;
}

const AGENTS = 16;
/** Payments this section saw complete, all loops and warm-ups: the ledger must hold exactly these. */
let completedSeen = 0;
/** How long one payment may keep retrying through a failover before it counts as failed for good. */
const PAYMENT_DEADLINE_MS = 60_000;
/** The poll interval of every wait below (the only sleeps). */
const POLL_MS = 50;
/** Failover runs and watch takeovers. */
const KILLS = 3;
/** Payments the failover loop completes through the balancer before the kill, and the time it runs on after. */
const BEFORE_KILL = 400;
const AFTER_KILL_MS = 5_000;

/**
 * The daemons' environment: no rate limits in the way — the API's, and the RPC budget a `custom`
 * network gets by default (10 calls/s: it held 16 agents to 9 payments/s; the simnet the bench's other
 * daemons run on has none) — and the daemon's default pool (nodes.ts writes 4 for tests). The log
 * stays at info: startDaemonProcess waits for the info line naming the API URL (so this process
 * reads a line a request from each node's stdout, on the agents' CPU).
 */
const NODE_ENV = {
  AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '100000000',
  AGENT_WALLET_RATE_LIMITS_PER_KEY_PER_MINUTE: '100000000',
  AGENT_WALLET_SOLANA_RPC_MAX_RPS: '0',
  AGENT_WALLET_DATABASE_POOL_SIZE: '10',
};

/** The faucet of the chain in another process, over its JSON-RPC: all that startNodes asks of a Simnet. */
function chainOf(port: number): Pick<Simnet, 'url' | 'faucet' | 'airdrop'> {
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    faucet: (owner: Address, usdc: bigint) => simnetFaucet(url, owner, usdc),
    airdrop: (address: Address, lamports: bigint) => simnetFaucet(url, address, 0n, lamports),
  };
}

/** Polls `probe` every POLL_MS until it gives a value; throws naming `what` after `ms`. */
async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms: number): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const v = await probe().catch(() => null);
    if (v !== null && v !== undefined && v !== false) return v;
    if (performance.now() > deadline) throw new Error(`bench nodes: timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(POLL_MS);
  }
}

const origin = (node: DaemonProcess) => new URL(node.url).origin;

/** A node's (or the balancer's) /readyz: its chain_watch and live nodes, or null when not ready. */
async function readyz(base: string): Promise<{ chain_watch: string; nodes: number } | null> {
  const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) });
  const body = (await res.json()) as { status: string; chain_watch: string; nodes: number };
  return res.status === 200 && body.status === 'ready' ? body : null;
}

/**
 * Worth another try after a node died: the call may not have reached the ledger, or its answer was
 * lost (a keyed call has already been sent again by ApiClient on the balancer's own 502).
 */
function retryable(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  return err instanceof ApiError && (err.status >= 500 || err.errorCode === 'IDEMPOTENCY_CONFLICT');
}

/** A short name for a retried error, to count them by kind. */
function kindOf(err: unknown): string {
  if (err instanceof ApiError) return `${err.status} ${err.errorCode}`;
  if (err instanceof ConnectionError) return /answered HTTP (\d+)/.exec(err.message)?.[0] ?? 'connection failed';
  return (err as Error).name;
}

/**
 * Finishes a payment whose intent exists after a failed call, from what the ledger holds: signed
 * bytes are re-sent (submit_signed_tx), an unsigned message gets a new round (confirm, sign).
 */
async function finish(api: ApiClient, profile: ProfileData, transactionId: string): Promise<Record<string, unknown>> {
  try {
    return await api.call<Record<string, unknown>>('bot', 'submit_signed_tx', { transaction_id: transactionId, wait: true });
  } catch (err) {
    if (!(err instanceof ApiError) || err.errorCode !== 'INVALID_STATUS') throw err;
  }
  try {
    return await confirmSignSubmit(api, profile, transactionId);
  } catch (err) {
    // Completed meanwhile (by the call whose answer was lost, its effect done on the surviving node).
    if (err instanceof ApiError && err.errorCode === 'ALREADY_COMPLETED') return { status: 'completed' };
    throw err;
  }
}

/**
 * One payment on the fast path that survives a node's death: pay (commitments, idempotency key),
 * sign and submit; a retryable failure is retried for up to PAYMENT_DEADLINE_MS — pay again with
 * the same key and body until the intent is known, then `finish`. Resolves to the retries' kinds.
 */
async function resilientPay(api: ApiClient, profile: ProfileData, to: string): Promise<string[]> {
  const key = randomUUID();
  const round = new AgentRound(profile);
  const params = { to, amount: '0.01', commitments: round.commitments };
  const deadline = performance.now() + PAYMENT_DEADLINE_MS;
  const retries: string[] = [];
  let intent: Record<string, unknown> | null = null;
  let roundUsed = false;
  for (;;) {
    try {
      intent ??= await api.call<Record<string, unknown>>('bot', 'pay', params, { idempotencyKey: key });
      let done: Record<string, unknown>;
      if (!roundUsed && typeof intent.sign_session_id === 'string') {
        // The round the pay opened (a replayed pay opens none): its nonces sign once, whatever follows.
        roundUsed = true;
        done = await completePay(api, profile, intent, round);
      } else {
        done = await finish(api, profile, String(intent.transaction_id));
      }
      if (done.status === 'completed') {
        completedSeen++;
        return retries;
      }
      // Still pending after the wait: the chain has not answered yet; sent again and waited for below.
      if (done.status !== 'pending') throw new Error(`payment ${String(done.status)}`);
      retries.push('still pending');
    } catch (err) {
      if (!retryable(err) || performance.now() > deadline) throw err;
      retries.push(kindOf(err));
    }
    await Bun.sleep(POLL_MS);
  }
}

export async function benchNodes(b: NodesBench): Promise<void> {
  const { pgServer, startNodes } = await import('../test/helpers/nodes.ts');
  const { claimInLedger } = await import('../test/helpers/daemon.ts');
  const { startCaddyBalancer } = await import('../test/helpers/caddy.ts');
  const { registerWallet } = await import('../src/client/register.ts');
  completedSeen = 0;
  const server = await pgServer();
  let chainChild: { port: number; pid: number; kill: () => void } | null = null;
  let nodes: Nodes | null = null;
  try {
    chainChild = await b.startChild('simnet');
    const chain = chainOf(chainChild.port);
    // startNodes uses a Simnet's url, airdrop and faucet only: the chain in its own process has those.
    nodes = await startNodes(server.url, chain as Simnet, 2, NODE_ENV);
    const live = [...nodes.nodes];
    const profiles: ProfileData[] = [];
    for (let i = 0; i < AGENTS; i++) profiles.push((await registerWallet(new ApiClient(live[i % 2]!.url), { name: `bench node agent ${i}` })).profile);
    await claimInLedger(live[0]!.dataDir, profiles.map((p) => p.wallet_id));
    for (const p of profiles) await chain.faucet(p.address as Address, 1_000_000_000_000n);
    const recipient = (w: number) => profiles[(w + 1) % AGENTS]!.username;

    await throughput(b, live, profiles, recipient, server.cluster?.dir ?? null, chainChild.pid);
    await failover(b, nodes, live, profiles, recipient, startCaddyBalancer);
    await watchTakeover(b, nodes, live, profiles, chain);
  } finally {
    if (nodes) {
      await nodes.stop();
      // startNodes's temp dir: every node's data dir is in it.
      rmSync(dirname(nodes.nodes[0]!.dataDir), { recursive: true, force: true });
    }
    chainChild?.kill();
    await server.cluster?.stop();
  }
}

/**
 * payments/s of the 16 agents on two nodes (agent w on node w % 2) and on one, ROUNDS rounds of
 * SECONDS each of both, alternating (a shared 2-core VM drifts: each side should see the same
 * drift). One node is the chain watch's holder taking every request; the other stays up, idle but
 * for its job ticks, so the rounds can alternate without a restart — its CPU is counted in both. The
 * CPU per payment of every process (both daemons, the PostgreSQL server, the chain, this process)
 * is taken over each round.
 */
async function throughput(b: NodesBench, live: DaemonProcess[], profiles: ProfileData[], recipient: (w: number) => string, pgDir: string | null, chainPid: number): Promise<void> {
  const holder = await watchHolder(live);
  const pair = [holder, live.find((n) => n !== holder)!];
  const setup = (on: DaemonProcess[]) => {
    const apis = profiles.map((p, w) => new ApiClient(on[w % on.length]!.url, p.api_key));
    return async (w: number) => {
      const round = new AgentRound(profiles[w]!);
      const answer = await apis[w]!.call<Record<string, unknown>>('bot', 'pay', { to: recipient(w), amount: '0.01', commitments: round.commitments }, { idempotencyKey: randomUUID() });
      const done = await completePay(apis[w]!, profiles[w]!, answer, round);
      if (done.status !== 'completed') throw new Error(`payment ${String(done.status)}`);
      completedSeen++;
    };
  };
  type Round = { rps: number; p50: number; daemons: number[]; server: number; chain: number; agents: number };
  const round = async (payOnce: (w: number) => Promise<void>): Promise<Round> => {
    const daemonsBefore = pair.map((n) => b.cpuMs(n.pid));
    const serverBefore = pgDir ? b.pgServerCpuMs(pgDir) : 0;
    const chainBefore = b.cpuMs(chainPid);
    const agentsBefore = process.cpuUsage();
    const r = await b.closedLoop(b.seconds, AGENTS, payOnce);
    const agents = process.cpuUsage(agentsBefore);
    return {
      rps: r.rps,
      p50: r.p50,
      daemons: pair.map((n, k) => (b.cpuMs(n.pid) - daemonsBefore[k]!) / r.count),
      server: pgDir ? (b.pgServerCpuMs(pgDir) - serverBefore) / r.count : 0,
      chain: (b.cpuMs(chainPid) - chainBefore) / r.count,
      agents: (agents.user + agents.system) / 1000 / r.count,
    };
  };
  const payTwo = setup(pair);
  const payOne = setup([holder]);
  await b.closedLoop(1, AGENTS, payTwo);
  await b.closedLoop(1, AGENTS, payOne);
  // Agents 0 and 1 by turns: on two nodes, one payment on each.
  const aloneTwo = await alone(payTwo);
  const aloneOne = await alone(payOne);
  const twoRounds: Round[] = [];
  const oneRounds: Round[] = [];
  for (let i = 0; i < b.rounds; i++) {
    twoRounds.push(await round(payTwo));
    oneRounds.push(await round(payOne));
  }
  // The median round by payments/s, its CPU beside it (one round's figures, so they add up).
  const two = b.median(twoRounds, (r) => r.rps);
  const one = b.median(oneRounds, (r) => r.rps);

  const range = (xs: Round[]) => `${Math.min(...xs.map((x) => x.rps)).toFixed(0)}–${Math.max(...xs.map((x) => x.rps)).toFixed(0)}`;
  b.report('payments/s two nodes / one node', two.rps, one.rps, 0, '/s', `16 agents end to end (8 a node), one PostgreSQL server, one chain; median of ${b.rounds} alternating rounds (two ${range(twoRounds)}, one ${range(oneRounds)}); a payment p50 ${two.p50.toFixed(0)} ms on two, ${one.p50.toFixed(0)} ms on one; a figure, no goal`);
  const all = (r: Round) => r.daemons.reduce((a, x) => a + x, 0) + r.server + r.chain + r.agents;
  const pg = (r: Round) => (pgDir ? `${r.server.toFixed(2)} ms` : 'not measured (AW_TEST_PG_URL)');
  b.rows.push(`${'CPU per payment, one node'.padEnd(34)} daemon ${one.daemons[0]!.toFixed(2)} ms (+ ${one.daemons[1]!.toFixed(2)} ms the idle second node), PostgreSQL server ${pg(one)}, chain ${one.chain.toFixed(2)} ms, bench process ${one.agents.toFixed(2)} ms: ${all(one).toFixed(2)} ms`);
  b.rows.push(`${'CPU per payment, two nodes'.padEnd(34)} daemons ${two.daemons.map((d) => d.toFixed(2)).join(' + ')} ms, PostgreSQL server ${pg(two)}, chain ${two.chain.toFixed(2)} ms, bench process ${two.agents.toFixed(2)} ms: ${all(two).toFixed(2)} ms`);
  // All the CPU a payment takes on this machine against its cores: the most either setup can do here.
  const cores = navigator.hardwareConcurrency;
  const ceiling = (r: Round) => (cores * 1000) / all(r);
  b.rows.push(`${`  what ${cores} cores allow`.padEnd(34)} one node ${ceiling(one).toFixed(0)}/s, two nodes ${ceiling(two).toFixed(0)}/s: a ratio of at most ${(ceiling(two) / ceiling(one)).toFixed(2)} here; measured ${(two.rps / one.rps).toFixed(2)}, ${((100 * two.rps) / ceiling(two)).toFixed(0)} % of two nodes' ceiling, ${((100 * one.rps) / ceiling(one)).toFixed(0)} % of one node's`);
  // The other bound: each agent pays once its last payment completed, and a payment waits for the chain's confirmation.
  const waits = (ms: number) => (AGENTS * 1000) / ms;
  b.rows.push(`${'  what 16 agents allow'.padEnd(34)} one node ${waits(aloneOne).toFixed(0)}/s, two nodes ${waits(aloneTwo).toFixed(0)}/s: a payment alone (nothing else paying) takes ${aloneOne.toFixed(0)} ms on one node, ${aloneTwo.toFixed(0)} ms on two (median of ${ALONE}, the chain's confirmation included), and each agent pays only once its last payment completed`);
}

/** Payments one agent makes alone, one after another, for a payment's unloaded time. */
const ALONE = 8;

/** The median time (ms) of ALONE payments made one after another by agent 0 alone. */
async function alone(payOnce: (w: number) => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < ALONE; i++) {
    const t = performance.now();
    await payOnce(i % 2 === 0 ? 0 : 1);
    times.push(performance.now() - t);
  }
  return times.sort((x, y) => x - y)[Math.floor(times.length / 2)]!;
}

/** The one of `live` holding the chain watch's lease (its /readyz: 'this node', the others 'another node'). */
async function watchHolder(live: DaemonProcess[]): Promise<DaemonProcess> {
  return until('one node to watch the chain', async () => {
    const watches = await Promise.all(live.map(async (n) => (await readyz(origin(n)))?.chain_watch));
    const holders = live.filter((_, i) => watches[i] === 'this node');
    return holders.length === 1 && watches.filter((w) => w === 'another node').length === live.length - 1 ? holders[0]! : null;
  }, 30_000);
}

/**
 * KILLS times: Caddy in front of the two live nodes, 16 agents paying through it in a closed loop,
 * one node killed -9 once BEFORE_KILL payments completed; the loop runs AFTER_KILL_MS on. Then a
 * fresh node replaces the dead one (and a new balancer takes both: its upstreams are fixed).
 */
async function failover(
  b: NodesBench,
  nodes: Nodes,
  live: DaemonProcess[],
  profiles: ProfileData[],
  recipient: (w: number) => string,
  startCaddyBalancer: (upstreams: string[]) => Promise<{ url: string; stop(): Promise<void> }>,
): Promise<void> {
  const runs: { first: number; gap: number; failed: number; paid: number; retried: number; kinds: Map<string, number>; latency: number; before: number; after: number }[] = [];
  const failures: string[] = [];
  for (let k = 0; k < KILLS; k++) {
    const balancer = await startCaddyBalancer(live.map(origin));
    try {
      // In rotation: the balancer's /readyz answered by both nodes (one watches the chain, one not).
      const seen = new Set<string>();
      await until('the balancer to send to both nodes', async () => {
        const r = await readyz(balancer.url);
        if (r) seen.add(r.chain_watch);
        return seen.has('this node') && seen.has('another node');
      }, 30_000);
      const apis = profiles.map((p) => new ApiClient(`${balancer.url}/v1`, p.api_key));
      await b.closedLoop(1, AGENTS, async (w) => void (await resilientPay(apis[w]!, profiles[w]!, recipient(w))));
      const done: { start: number; end: number }[] = [];
      const kinds = new Map<string, number>();
      let failed = 0;
      let retried = 0;
      let killAt = Number.POSITIVE_INFINITY;
      let stopAt = Number.POSITIVE_INFINITY;
      const loopStart = performance.now();
      const loop = Promise.all(
        profiles.map(async (p, w) => {
          while (performance.now() < stopAt) {
            const start = performance.now();
            try {
              const retries = await resilientPay(apis[w]!, p, recipient(w));
              done.push({ start, end: performance.now() });
              if (retries.length > 0) retried++;
              for (const r of retries) kinds.set(r, (kinds.get(r) ?? 0) + 1);
            } catch (err) {
              failed++;
              failures.push(`${kindOf(err)}: ${(err as Error).message.slice(0, 200)}`);
            }
          }
        }),
      );
      const victim = live[k % 2]!;
      try {
        await until(`${BEFORE_KILL} payments through the balancer`, async () => done.length >= BEFORE_KILL, 60_000);
        killAt = performance.now();
        stopAt = killAt + AFTER_KILL_MS;
        await victim.kill();
      } finally {
        stopAt = Math.min(stopAt, performance.now() + AFTER_KILL_MS);
        await loop;
      }
      live.splice(live.indexOf(victim), 1);
      const firstAfter = Math.min(...done.filter((d) => d.start >= killAt).map((d) => d.end));
      // Completions from the last one before the kill to the loop's end: the longest wait between two.
      const ends = done.map((d) => d.end).sort((x, y) => x - y);
      const from = Math.max(0, ends.findIndex((e) => e >= killAt) - 1);
      let gap = 0;
      for (let i = from + 1; i < ends.length; i++) gap = Math.max(gap, ends[i]! - ends[i - 1]!);
      const rate = (d: { end: number }[], ms: number) => (d.length * 1000) / ms;
      runs.push({
        first: firstAfter - killAt,
        gap,
        failed,
        paid: done.length,
        retried,
        kinds,
        latency: ((d) => d.end - d.start)(b.median(done.filter((d) => d.end < killAt), (d) => d.end - d.start)),
        before: rate(done.filter((d) => d.end < killAt), killAt - loopStart),
        after: rate(done.filter((d) => d.end >= killAt), AFTER_KILL_MS),
      });
    } finally {
      await balancer.stop();
    }
    const fresh = await nodes.add();
    live.push(fresh);
    await until('the fresh node to be ready', async () => (await readyz(origin(fresh))) !== null, 30_000);
  }
  const stat = (by: (r: (typeof runs)[number]) => number) => ({ mid: by(b.median(runs, by)), max: Math.max(...runs.map(by)) });
  const first = stat((r) => r.first / 1000);
  const gap = stat((r) => r.gap / 1000);
  const failed = runs.reduce((a, r) => a + r.failed, 0);
  const kinds = new Map<string, number>();
  for (const r of runs) for (const [kind, n] of r.kinds) kinds.set(kind, (kinds.get(kind) ?? 0) + n);
  const kindText = [...kinds].sort((x, y) => y[1] - x[1]).map(([kind, n]) => `${kind} ×${n}`).join(', ') || 'none';
  b.rows.push(`${'failover: kill to first payment'.padEnd(34)} median ${first.mid.toFixed(2)} s, max ${first.max.toFixed(2)} s over ${KILLS} kills -9 of one of two nodes behind Caddy (the first payment begun after the kill to complete, one payment's time included: p50 ${runs.map((r) => (r.latency / 1000).toFixed(2)).join(', ')} s before the kills; goal ≤ 3 s: ${first.max <= 3 ? 'met' : 'NOT MET'})`);
  b.rows.push(`${'failover: longest gap'.padEnd(34)} median ${gap.mid.toFixed(2)} s, max ${gap.max.toFixed(2)} s between two completed payments from the last before the kill on; payments/s before the kill ${runs.map((r) => r.before.toFixed(0)).join(', ')}, after ${runs.map((r) => r.after.toFixed(0)).join(', ')}`);
  // Each payment once: the ledger's completed payments, every agent's, against those the agents saw complete.
  const inLedger = (await Promise.all(profiles.map((p) => new ApiClient(live[0]!.url, p.api_key).call<{ total: number }>('bot', 'list_payments', { status: 'completed', limit: 1 })))).reduce((a, r) => a + r.total, 0);
  b.rows.push(`${'failover: each payment once'.padEnd(34)} ${inLedger} completed payments in the ledger, ${completedSeen} seen to complete by the agents (this whole section, kills included): ${inLedger === completedSeen ? 'equal' : 'NOT EQUAL'}`);
  b.rows.push(`${'failover: payments failed for good'.padEnd(34)} ${failed} of ${runs.reduce((a, r) => a + r.paid + r.failed, 0)} (goal 0: ${failed === 0 ? 'met' : 'NOT MET'}); ${runs.map((r) => r.retried).join(', ')} payments retried (retries: ${kindText})${failures.length ? `; failures: ${[...new Set(failures)].slice(0, 3).join(' | ')}` : ''}`);
}

/**
 * KILLS times: the chain watch's lease holder of the two live nodes killed -9 and a deposit made at
 * once; the time until the survivor's /readyz says it watches the chain, and until the deposit is
 * in the wallet's history through the survivor (`transactions` type deposit: balance reads the
 * chain, not the watch). A fresh node replaces the dead one each time.
 */
async function watchTakeover(b: NodesBench, nodes: Nodes, live: DaemonProcess[], profiles: ProfileData[], chain: Pick<Simnet, 'faucet'>): Promise<void> {
  const runs: { lease: number; deposit: number }[] = [];
  for (let k = 0; k < KILLS; k++) {
    const holder = await watchHolder(live);
    const survivor = live.find((n) => n !== holder)!;
    const profile = profiles[k % profiles.length]!;
    const api = new ApiClient(survivor.url, profile.api_key);
    const killAt = performance.now();
    await holder.kill();
    live.splice(live.indexOf(holder), 1);
    const sig = await chain.faucet(profile.address as Address, 1_000_000n);
    const [lease, deposit] = await Promise.all([
      until('the survivor to watch the chain', async () => (await readyz(origin(survivor)))?.chain_watch === 'this node' && performance.now(), 60_000),
      until('the deposit in the wallet\'s history through the survivor', async () => {
        const page = await api.call<{ items: { signature: string | null }[] }>('bot', 'transactions', { type: 'deposit', limit: 20 });
        return page.items.some((t) => t.signature === sig) && performance.now();
      }, 60_000),
    ]);
    runs.push({ lease: (lease - killAt) / 1000, deposit: (deposit - killAt) / 1000 });
    const fresh = await nodes.add();
    live.push(fresh);
    await until('the fresh node to be ready', async () => (await readyz(origin(fresh))) !== null, 30_000);
  }
  const stat = (by: (r: (typeof runs)[number]) => number) => ({ mid: by(b.median(runs, by)), max: Math.max(...runs.map(by)) });
  const lease = stat((r) => r.lease);
  const deposit = stat((r) => r.deposit);
  b.rows.push(`${'watch takeover: survivor watches'.padEnd(34)} median ${lease.mid.toFixed(2)} s, max ${lease.max.toFixed(2)} s after the holder's kill -9 (its /readyz says 'this node'; ${KILLS} kills; goal ≤ 15 s: ${lease.max <= 15 ? 'met' : 'NOT MET'})`);
  b.rows.push(`${'watch takeover: deposit seen'.padEnd(34)} median ${deposit.mid.toFixed(2)} s, max ${deposit.max.toFixed(2)} s from the kill to a deposit made right after it in the wallet's history through the survivor (goal ≤ 15 s: ${deposit.max <= 15 ? 'met' : 'NOT MET'})`);
}
