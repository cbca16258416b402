/**
 * The servers `npm run bench` measures, one per child process, each printing `READY <port>`
 * (and for `world`, the agents' profiles as one JSON line) when it listens.
 *
 *   bare        Bun.serve answering the ping JSON: the ceiling of the HTTP stack
 *   bare-same   the same, answering the app's ping bytes and headers (BENCH_PING_BODY, BENCH_PING_HEADERS)
 *   bare-read   bare-same after reading the request's body
 *   app         the full app (dispatcher, auth, rate limits, metrics, logs) on a file ledger
 *   raw-insert  Bun.serve inserting one row per request into SQLite with the ledger's durability
 *               (the daemon's: synchronous=NORMAL, the answer waits for the worker's sync)
 *   raw-insert-full  the same with synchronous=FULL, each commit syncing on the event loop: the
 *               baseline issue 27 was filed against (when the daemon committed that way too)
 *   world       the full app + claimed, funded agents, on the embedded simnet or (BENCH_EXTERNAL_RPC)
 *               on a simnet in another process
 *   simnet      a standalone simnet, so the chain's CPU is not the daemon's
 */
import { simnetFaucet } from '../src/simnet/faucet-client.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from 'bun:sqlite';
import { SqliteStore } from '../src/db/sqlite-store.ts';
import { openLedger } from '../src/db/ledger.ts';
import type { Address } from '@solana/kit';
import { loadConfig } from '../src/config.ts';
import { IMMEDIATE, startDurability } from '../src/db/durability.ts';
import { buildServices } from '../src/daemon/services.ts';
import { createApp } from '../src/api/app.ts';
import { createLogger } from '../src/log.ts';
import { loadFeePayer, loadMasterKey } from '../src/secret-files.ts';

const mode = process.argv[2];
// An orderly exit on the bench's kill, so a CPU profile (--cpu-prof) is written.
process.on('SIGTERM', () => process.exit(0));
const dataDir = mkdtempSync(join(tmpdir(), 'aw-bench-'));
const PING = JSON.stringify({ success: true, data: { status: 'ok', version: '0.1.0', network: 'simnet', usdc_mint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' } });

async function appServices(rpcUrl?: string) {
  const config = loadConfig({ dataDir }, { AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '100000000', AGENT_WALLET_RATE_LIMITS_PER_KEY_PER_MINUTE: '100000000' });
  if (rpcUrl) config.rpcUrl = rpcUrl;
  // BENCH_DATABASE_URL: the ledger on PostgreSQL, as [database] url would put it; else SQLite as the
  // daemon runs it (src/daemon/serve.ts): syncs on a worker, effects wait for them.
  const ledger = await openLedger({ dataDir, database: { url: process.env.BENCH_DATABASE_URL ?? '', pool_size: 10, tls: false }, solana: { network: 'simnet' } }, (message) => console.error(`bench: ${message}`));
  const { store: db, durability } = ledger;
  // Real logging cost, written to /dev/null rather than the terminal.
  const sink = Bun.file('/dev/null').writer();
  return buildServices({
    config,
    db,
    durability,
    // BENCH_LOG=1: the daemon's log on stderr (to see why a bench run failed).
    log: createLogger({ write: (l) => void (process.env.BENCH_LOG ? process.stderr.write(l) : sink.write(l)) }),
    masterKey: loadMasterKey(dataDir),
    feePayer: loadFeePayer(dataDir, 'fee-payer.json'),
    listenUrl: () => 'http://127.0.0.1',
  });
}

/** The faucet of a simnet running in another process, over its JSON-RPC. */
function rpcFaucet(url: string) {
  return {
    url,
    airdrop: (address: Address, lamports: bigint) => simnetFaucet(url, address, 0n, lamports),
    faucet: (owner: Address, usdc: bigint) => simnetFaucet(url, owner, usdc),
  };
}

if (mode === 'bare') {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(PING, { headers: { 'Content-Type': 'application/json; charset=utf-8' } }) });
  console.log(`READY ${server.port}`);
} else if (mode === 'bare-same' || mode === 'bare-read') {
  // The app's own ping answer, byte for byte (body and headers, a fresh request id each time);
  // bare-read first reads the request's body, as the app must and bare never does.
  const body = process.env.BENCH_PING_BODY ?? PING;
  const headers = JSON.parse(process.env.BENCH_PING_HEADERS ?? '{}') as Record<string, string>;
  const answer = () => new Response(body, { headers: { ...headers, 'X-Request-Id': crypto.randomUUID() } });
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: mode === 'bare-read' ? (req) => req.bytes().then(answer) : answer });
  console.log(`READY ${server.port}`);
} else if (mode === 'app') {
  const app = createApp(await appServices());
  app.listen({ port: 0, hostname: '127.0.0.1' });
  console.log(`READY ${app.server?.port}`);
} else if (mode === 'raw-insert' || mode === 'raw-insert-full') {
  const path = join(dataDir, 'raw.db');
  const db = new Database(path, { create: true, strict: true, safeIntegers: true });
  db.run('PRAGMA busy_timeout = 5000');
  db.run('PRAGMA journal_mode = WAL');
  db.run('CREATE TABLE intents (id TEXT PRIMARY KEY, wallet TEXT NOT NULL, amount INTEGER NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL) STRICT');
  let durability = IMMEDIATE;
  if (mode === 'raw-insert') durability = startDurability(new SqliteStore(db), path, (message) => console.error(`bench: ${message}`));
  else db.run('PRAGMA synchronous = FULL');
  const insert = db.query('INSERT INTO intents VALUES (?, ?, ?, ?, ?)');
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      const body = await req.text();
      const id = crypto.randomUUID();
      db.transaction(() => insert.run(id, 'wallet', 10_000n, body, Date.now())).immediate();
      await durability.durable();
      return Response.json({ success: true, data: { transaction_id: id, status: 'pre_approved' } });
    },
  });
  console.log(`READY ${server.port}`);
} else if (mode === 'world') {
  const agents = Number(process.argv[3] ?? 16);
  const { startSimnet } = await import('../src/simnet/index.ts');
  const { ApiClient } = await import('../src/client/api.ts');
  const { registerWallet } = await import('../src/client/register.ts');
  const { ensureOwner } = await import('../src/db/owners.ts');
  const { markClaimed } = await import('../src/db/wallets.ts');
  // BENCH_EXTERNAL_RPC: a simnet in another process (`agent-wallet simnet`), so this process is the app alone.
  const external = process.env.BENCH_EXTERNAL_RPC;
  const simnet = external ? rpcFaucet(external) : await startSimnet({ port: 0, slotMs: 400 });
  const services = await appServices(simnet.url);
  await simnet.airdrop(services.feePayer.address, 1_000_000_000_000n);
  await simnet.faucet(services.feePayer.address, 0n);
  // The ledger gauges and counters as the daemon serves them (the bench reads commits per payment).
  const { Metrics } = await import('../src/metrics.ts');
  const { ledgerMetricsSource } = await import('../src/ops/ledger-metrics.ts');
  const metrics = new Metrics();
  metrics.addSource(ledgerMetricsSource(services.db, services.durability));
  const { watchLoopLag } = await import('../src/ops/loop-lag.ts');
  metrics.addSource(watchLoopLag().source);
  const app = createApp(services, { metrics });
  app.listen({ port: 0, hostname: '127.0.0.1' });
  const url = `http://127.0.0.1:${app.server?.port}/v1`;
  const profiles = [];
  for (let i = 0; i < agents; i++) {
    const { profile } = await registerWallet(new ApiClient(url), { name: `bench ${i}` });
    await services.db.transaction(async () => {
      const { owner } = await ensureOwner(services.db, 'bench@example.com', 'own_bench', Date.now());
      await markClaimed(services.db, profile.wallet_id, owner.owner_id, Date.now());
    });
    await simnet.faucet(profile.address as Address, 1_000_000_000_000n);
    profiles.push(profile);
  }
  console.log(`READY ${app.server?.port}`);
  console.log(JSON.stringify(profiles));
} else if (mode === 'export') {
  // One claimed wallet with N ledger transactions and an owner token: the owner's CSV export.
  const count = Number(process.argv[3] ?? 10_000);
  const { ApiClient } = await import('../src/client/api.ts');
  const { registerWallet } = await import('../src/client/register.ts');
  const { ensureOwner, insertOwnerToken } = await import('../src/db/owners.ts');
  const { markClaimed } = await import('../src/db/wallets.ts');
  const { insertTx } = await import('../src/db/transactions.ts');
  const { newApiKey } = await import('../src/domain/api-keys.ts');
  const { newId } = await import('../src/contract/ids.ts');
  const services = await appServices();
  const app = createApp(services);
  app.listen({ port: 0, hostname: '127.0.0.1' });
  const { profile } = await registerWallet(new ApiClient(`http://127.0.0.1:${app.server?.port}/v1`), { name: 'export bench' });
  const key = newApiKey('owner');
  const start = Date.now() - count * 1000;
  await services.db.transaction(async () => {
      const { owner } = await ensureOwner(services.db, 'bench@example.com', 'own_bench', Date.now());
      await markClaimed(services.db, profile.wallet_id, owner.owner_id, Date.now());
      await insertOwnerToken(services.db, { token_id: newId('ownerToken'), owner_id: owner.owner_id, token_hash: key.hash, label: 'bench', now: Date.now() });
      for (let i = 0; i < count; i++) {
        await insertTx(services.db, {
          transaction_id: newId('transaction'),
          wallet_id: profile.wallet_id,
          type: 'payment',
          direction: i % 3 === 0 ? 'in' : 'out',
          status: 'completed',
          amount: BigInt(10_000 + i),
          fee: 100n,
          counterparty: `payee-${i % 50}`,
          note: i % 7 === 0 ? `invoice, "item" ${i}` : null,
          reference: `order-${i}`,
          signature: `S${String(i).padStart(87, '0')}`,
          now: start + i * 1000,
          completed_at: start + i * 1000,
        });
      }
    });
  console.log(`READY ${app.server?.port}`);
  console.log(JSON.stringify({ wallet_id: profile.wallet_id, token: key.key }));
} else if (mode === 'simnet') {
  const { startSimnet } = await import('../src/simnet/index.ts');
  const simnet = await startSimnet({ port: 0, slotMs: 400 });
  console.log(`READY ${simnet.port}`);
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
