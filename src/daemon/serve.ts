/**
 * `agent-wallet serve`: loads the config, opens the ledger, starts the embedded simnet when the
 * network is simnet, serves the API and runs the jobs until SIGTERM/SIGINT, then shuts down in
 * order: stop accepting, finish in-flight requests, stop jobs, stop the chain, close the DB.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PortInUseError } from './port-in-use.ts';
import { loadConfig, type Config, type ConfigFlags } from '../config.ts';
import { openLedger } from '../db/ledger.ts';
import { pinnedMasterKey } from '../db/master-key-pin.ts';
import { DatabaseOpenError } from '../db/open.ts';
import { masterKeyFingerprint } from '../domain/master-key-fingerprint.ts';
import { watchLoopLag } from '../ops/loop-lag.ts';
import { createLogger, type Logger } from '../log.ts';
import { loadFeePayer, loadMasterKey } from '../secret-files.ts';
import { createApp } from '../api/app.ts';
import { Metrics } from '../metrics.ts';
import { SERVER_BODY_CAP } from '../api/body.ts';
import { JobRunner } from '../jobs/runner.ts';
import { nodeMetricsSource } from '../ops/node-metrics.ts';
import { maintenanceJob } from '../jobs/maintenance.ts';
import { paymentJobs } from '../jobs/payments.ts';
import { depositJob } from '../jobs/deposits.ts';
import { paylinkJobs } from '../jobs/paylinks.ts';
import { x402Jobs } from '../jobs/x402-catalog.ts';
import { mailJob } from '../mail/sender.ts';
import { webhookHistoryJob, webhookJob } from '../jobs/webhooks.ts';
import { buildServices } from './services.ts';
import { lockDataDir } from './lock.ts';
import type { Simnet } from '../simnet/index.ts';
import type { Services } from '../services.ts';
import type { Address } from '@solana/kit';
import { treasuryOf } from '../payments/message.ts';
import { beginRestore, finishRestore } from '../ops/after-restore.ts';
import { checkLedgerRewind } from '../ops/rewind-check.ts';
import { ledgerMetricsSource } from '../ops/ledger-metrics.ts';
import { feePayerWatch } from '../ops/fee-payer-watch.ts';

export interface RunningDaemon {
  config: Config;
  url: string;
  simnet: Simnet | null;
  stop(): Promise<void>;
}

function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** SOL the fee payer gets at simnet start (pays fees and rent for every wallet). */
const SIMNET_FEE_PAYER_LAMPORTS = 1_000n * 1_000_000_000n;

async function startSimnet(config: Config, log: Logger, feePayer: Address): Promise<Simnet> {
  // LiteSVM's native addon is unpacked into TMPDIR by the compiled binary: keep it private and exec-allowed.
  const tmp = join(config.dataDir, 'tmp');
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  process.env.TMPDIR = tmp;
  const { startSimnet: start } = await import('../simnet/index.ts');
  let simnet: Simnet;
  try {
    simnet = await start({
      port: config.simnet.rpc_port,
      stateFile: join(config.dataDir, 'simnet', 'state.bin'),
      slotMs: config.simnet.slot_ms,
      log: (entry) => log.debug('simnet', entry),
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new PortInUseError(
        `the embedded chain's RPC port ${config.simnet.rpc_port} is already in use (solana-test-validator listens there too); start with --simnet-port N (0: any free port), or set simnet.rpc_port / AGENT_WALLET_SIMNET_RPC_PORT`,
      );
    }
    throw err;
  }
  await simnet.airdrop(feePayer, SIMNET_FEE_PAYER_LAMPORTS);
  return simnet;
}

/**
 * Fees go to the treasury's USDC token account: on simnet it is created at start; elsewhere a
 * missing one is a loud warning (payments would fail until the operator creates it).
 */
async function prepareTreasury(services: Services, simnet: Simnet | null): Promise<void> {
  const treasury = treasuryOf(services);
  try {
    if (simnet) await simnet.faucet(treasury, 0n);
    else if (!(await services.chain.tokenAccountExists(treasury, services.config.usdcMint as Address))) {
      services.log.warn('the treasury has no USDC token account yet: payments with a fee fail until it exists', { treasury, usdc_mint: services.config.usdcMint });
    }
  } catch (err) {
    services.log.warn('could not check the treasury token account', { treasury, error: (err as Error).message });
  }
}

/** Starts the daemon; resolves once it listens. Refused while another daemon holds the data directory. */
export async function startDaemon(flags: ConfigFlags, opts: { log?: Logger } = {}): Promise<RunningDaemon> {
  const config = loadConfig(flags);
  const log = opts.log ?? createLogger({ level: config.log.level });
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const unlock = lockDataDir(config.dataDir);
  try {
    return await startLocked(config, log, unlock);
  } catch (err) {
    unlock();
    throw err;
  }
}

/** Everything after the data directory lock; `unlock` runs when the daemon stops. */
async function startLocked(config: Config, log: Logger, unlock: () => void): Promise<RunningDaemon> {
  const masterKey = loadMasterKey(config.dataDir);
  const feePayer = loadFeePayer(config.dataDir, config.solana.fee_payer_keypair_file);
  // On SQLite commits no longer wait for the disk on the event loop; every effect waits for its commit instead.
  const ledger = await openLedger(
    config,
    (message) => log.error('the ledger cannot reach the disk: nothing is answered or sent until the daemon restarts; check the disk', { error: message }),
    (message) => log.warn('the node lock connection to PostgreSQL does not answer: this node runs no job and watches no chain until it does', { error: message }),
  );
  const { store: db, durability } = ledger;
  const closeDb = () => ledger.close();
  // Every node of one ledger holds the master key it was created with (DESIGN §10.2).
  const fingerprint = masterKeyFingerprint(masterKey);
  const pinned = await pinnedMasterKey(db, fingerprint);
  if (pinned !== fingerprint) {
    await closeDb();
    throw new DatabaseOpenError(
      `the ledger at ${ledger.where} was created with another master.key (fingerprint ${pinned}; ${join(config.dataDir, 'master.key')} has ${fingerprint}): the server's key shares are sealed under that key; copy master.key from the data dir of the node that created the ledger (every node of one ledger shares it)`,
    );
  }

  let simnet: Simnet | null = null;
  try {
    if (config.solana.network === 'simnet') {
      simnet = await startSimnet(config, log, feePayer.address);
      config.rpcUrl = simnet.url;
    }
  } catch (err) {
    await closeDb();
    throw err;
  }

  const tls = config.server.tls_cert_file ? { cert: Bun.file(config.server.tls_cert_file), key: Bun.file(config.server.tls_key_file) } : undefined;
  const scheme = tls ? 'https' : 'http';
  let listenUrl = '';
  const metrics = new Metrics();
  const services = buildServices({
    config, db, log, masterKey, feePayer, listenUrl: () => listenUrl, simnetRpcUrl: simnet?.url, durability, nodes: ledger.nodes,
    observeRpc: (method, outcome) => {
      metrics.rpcCall(method, outcome);
      if (outcome === 'rate_limited') log.warn('rpc rate limited', { method, detail: 'the RPC provider answered HTTP 429; calls wait and retry (lower solana.rpc_max_rps to stay under its limit)' });
    },
  });
  // A restored ledger: its signing rounds close now, before anything answers; the daemon then
  // serves reads while money actions wait for the reconciliation with the chain (below).
  // A ledger put back in time without admin restore / mark-restored is caught here, before anything answers.
  await checkLedgerRewind(db, config.dataDir, log, () => durability.durable());
  const restoring = await beginRestore(services);
  metrics.addSource(ledgerMetricsSource(db, durability));
  metrics.addSource(nodeMetricsSource(ledger.nodes));
  const loopLag = watchLoopLag();
  metrics.addSource(loopLag.source);
  const app = createApp(services, { metrics });
  let server: NonNullable<typeof app.server>;
  try {
    // Elysia's listen keeps the Bun server on the app, so handlers can read the client IP.
    // idleTimeout: Bun's default (10 s) would cut the 30 s long polls of approval_status and events.
    // reusePort off (Elysia turns it on): a second daemon on a taken port must fail, not silently
    // take half of the first one's connections.
    app.listen({ hostname: config.server.host, port: config.server.port, maxRequestBodySize: SERVER_BODY_CAP, tls, idleTimeout: 60, reusePort: false });
    if (!app.server) throw new Error('the server did not start');
    server = app.server;
  } catch (err) {
    await simnet?.stop();
    await closeDb();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new PortInUseError(`port ${config.server.port} on ${config.server.host} is already in use (another daemon?); start this one on another port with --port N (or server.port in config.toml, AGENT_WALLET_SERVER_PORT)`);
    }
    throw new Error(`cannot listen on ${config.server.host}:${config.server.port}: ${(err as Error).message}`);
  }
  const hostForUrl = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  listenUrl = `${scheme}://${hostForUrl}:${server.port}`;
  // Written as soon as the server listens: the admin commands and doctor find a running daemon (and
  // its network) even while the chain is unreachable and the treasury check below waits on it.
  const pidFile = join(config.dataDir, 'daemon.json');
  writeFileSync(pidFile, `${JSON.stringify({ pid: process.pid, api_url: `${listenUrl}/v1`, rpc_url: config.rpcUrl, network: config.solana.network, usdc_mint: config.usdcMint })}\n`, { mode: 0o600 });
  await prepareTreasury(services, simnet);

  const jobs = new JobRunner(log, metrics, Date.now, ledger.nodes);
  let stopped = false;
  const startJobs = () => {
    if (stopped) return;
    jobs.add(maintenanceJob(db));
    for (const job of paymentJobs(services)) jobs.add(job);
    jobs.add(depositJob(services));
    for (const job of paylinkJobs(services)) jobs.add(job);
    jobs.add(mailJob(services));
    jobs.add(webhookJob(services));
    jobs.add(webhookHistoryJob(services));
    for (const job of x402Jobs(services)) jobs.add(job);
    jobs.add(feePayerWatch(services, metrics).job);
  };
  // The jobs record and send money (and the deposit watch expects the scan done): after the
  // reconciliation, which a chain outage only delays (tried again, backing off to a minute).
  const restored = restoring
    ? (async (closed) => {
        for (let wait = 2_000; !stopped; wait = Math.min(wait * 2, 60_000)) {
          try {
            await finishRestore(services, closed);
            return startJobs();
          } catch (err) {
            if (stopped) return;
            log.error('restore: the ledger could not be reconciled with the chain yet; trying again', { error: (err as Error).message, retry_in_ms: wait });
            await Bun.sleep(wait);
          }
        }
      })(restoring)
    : Promise.resolve(startJobs());

  if (!tls && !isLoopbackHost(config.server.host)) {
    log.warn('listening on a non-loopback address without TLS: DKG packages carry secret shares; set server.tls_cert_file/tls_key_file or put a TLS proxy in front', {
      host: config.server.host,
    });
  }
  log.info('agent wallet service started', {
    api_url: `${listenUrl}/v1`,
    public_url: services.publicUrl(),
    network: config.solana.network,
    rpc_url: config.rpcUrl,
    usdc_mint: config.usdcMint,
    fee_payer: feePayer.address,
    data_dir: config.dataDir,
    ledger: ledger.where,
  });

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('shutting down');
      stopped = true;
      await server.stop(false);
      await Promise.race([restored, Bun.sleep(1_000)]);
      await jobs.stop();
      loopLag.stop();
      await simnet?.stop();
      await closeDb();
      rmSync(pidFile, { force: true });
      unlock();
      log.info('stopped');
    })());

  return { config, url: `${listenUrl}/v1`, simnet, stop };
}

/** Runs the daemon in the foreground until a signal arrives. */
export async function serveCommand(flags: ConfigFlags): Promise<number> {
  // Listen for signals before starting: a stop requested during start-up waits for it, then stops cleanly.
  const signalled = new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  const daemon = await startDaemon(flags);
  await signalled;
  await daemon.stop();
  return 0;
}
