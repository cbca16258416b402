/**
 * `admin doctor`: one check per thing an operator must get right, each with what it found and how
 * to fix it. Checks that need what an earlier one could not give (a config, a ledger, an RPC)
 * report that instead of failing in a confusing way.
 */
import { Database } from 'bun:sqlite';
import { SqliteStore } from '../db/sqlite-store.ts';
import { PgStore } from '../db/pg-store.ts';
import { pgHealth } from '../db/pg-health.ts';
import { redactedUrl } from '../db/ledger.ts';
import type { Store } from '../db/store.ts';
import { existsSync, readFileSync, statfsSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Address } from '@solana/kit';
import { loadConfig, type Config } from '../config.ts';
import { SCHEMA_VERSION } from '../db/open.ts';
import { mailBacklog, recentCompletedTransfers, webhookBacklog } from '../db/ops-metrics.ts';
import { assessFeePayer, dailyFeeLamports } from '../domain/fee-payer.ts';
import { loadFeePayer } from '../secret-files.ts';
import { NETWORKS } from '../solana/networks.ts';
import { createRpcChainPort, type ChainPort } from '../solana/port.ts';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  how_to_fix: string | null;
}

/** Free space below which the ledger may not grow (WAL checkpoints, VACUUM INTO backups). */
const MIN_FREE_BYTES = 1024 * 1024 * 1024;
/** A mail or webhook message older than this means its job is stuck or its target is down. */
const MAX_BACKLOG_AGE_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Expiry, lockouts and link lifetimes are decided on this machine's clock; the chain's may lag a few seconds. */
const MAX_CLOCK_SKEW_S = 60n;

const pass = (name: string, detail: string): Check => ({ name, ok: true, detail, how_to_fix: null });
const fail = (name: string, detail: string, howToFix: string): Check => ({ name, ok: false, detail, how_to_fix: howToFix });

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

function fileModes(dataDir: string, config: Config | null): Check {
  const problems: string[] = [];
  if (!existsSync(dataDir)) return fail('file_modes', `${dataDir} does not exist`, 'Pass the --data-dir the daemon runs with.');
  if ((modeOf(dataDir) & 0o077) !== 0) problems.push(`${dataDir} is 0${modeOf(dataDir).toString(8)}`);
  const feePayerFile = config?.solana.fee_payer_keypair_file ?? 'fee-payer.json';
  for (const path of [join(dataDir, 'master.key'), isAbsolute(feePayerFile) ? feePayerFile : join(dataDir, feePayerFile)]) {
    if (!existsSync(path)) problems.push(`${path} is missing`);
    else if ((modeOf(path) & 0o077) !== 0) problems.push(`${path} is 0${modeOf(path).toString(8)}`);
  }
  if (problems.length === 0) return pass('file_modes', 'data dir 0700; master.key and the fee payer key readable by the owner only');
  return fail('file_modes', problems.join('; '), `chmod 700 ${dataDir} && chmod 600 ${dataDir}/master.key and the fee payer key; restore a missing secret file from a backup.`);
}

async function ledger(dataDir: string, config: Config): Promise<Check> {
  if (config.database.url) return pgLedger(config);
  const path = join(dataDir, 'wallet.db');
  if (!existsSync(path)) return fail('ledger', `no ledger at ${path}`, 'Start the daemon once to create it, or restore a backup (agent-wallet admin restore).');
  const db = new Database(path, { readonly: true });
  try {
    db.run('PRAGMA busy_timeout = 5000');
    const quick = db.query<{ quick_check: string }, []>('PRAGMA quick_check').get()?.quick_check;
    const version = Number(db.query<{ user_version: number }, []>('PRAGMA user_version').get()?.user_version ?? 0);
    const network = db.query<{ value: string }, [string]>('SELECT value FROM meta WHERE key = ?').get('network')?.value;
    if (quick !== 'ok') return fail('ledger', `quick_check answered ${quick}`, 'Stop the daemon and restore the latest backup (agent-wallet admin restore).');
    if (network !== config.solana.network) return fail('ledger', `the ledger belongs to network ${network}, the config says ${config.solana.network}`, 'Use a separate --data-dir per network.');
    if (version > SCHEMA_VERSION) return fail('ledger', `schema ${version} is newer than this binary's ${SCHEMA_VERSION}`, 'Run the agent-wallet release that wrote it.');
    return pass('ledger', `schema ${version}, network ${network}, quick_check ok`);
  } finally {
    db.close();
  }
}

/** The PostgreSQL ledger: reachable, version ≥ 15, this binary's schema, this network, room for the pool. */
async function pgLedger(config: Config): Promise<Check> {
  const where = redactedUrl(config.database.url);
  let store: PgStore;
  try {
    store = new PgStore(config.database.url, { poolSize: 1, tls: config.database.tls });
  } catch (err) {
    return fail('ledger', `${where}: ${(err as Error).message}`, 'Check [database] url (AGENT_WALLET_DATABASE_URL).');
  }
  try {
    const h = await pgHealth(store);
    if (h.serverVersionNum < 150000) return fail('ledger', `PostgreSQL ${h.serverVersion} at ${where}; version 15 or newer is needed`, 'Upgrade the server or point [database] url at a PostgreSQL 15+ database.');
    if (h.network !== config.solana.network) return fail('ledger', `the ledger at ${where} belongs to network ${h.network}, the config says ${config.solana.network}`, 'Use a separate database per network.');
    if (h.schemaVersion === null || h.schemaVersion > SCHEMA_VERSION) return fail('ledger', `schema ${h.schemaVersion ?? 'unknown'} at ${where}; this binary has ${SCHEMA_VERSION}`, 'Run the agent-wallet release that wrote it.');
    if (h.schemaVersion < SCHEMA_VERSION) return fail('ledger', `schema ${h.schemaVersion} at ${where} is older than this binary's ${SCHEMA_VERSION}`, 'Start this release once to migrate it.');
    const room = h.maxConnections - h.connections;
    const poolNote = `pool ${config.database.pool_size} of the server's max_connections ${h.maxConnections} (${h.connections} open to this database now)`;
    if (room < config.database.pool_size) return fail('ledger', `PostgreSQL ${h.serverVersion} at ${where}: ${poolNote}, too few left for a new daemon's pool`, 'Raise max_connections on the server or lower [database] pool_size.');
    return pass('ledger', `PostgreSQL ${h.serverVersion} at ${where}: schema ${h.schemaVersion}, network ${h.network}, ${poolNote}`);
  } catch (err) {
    return fail('ledger', `${where}: ${(err as Error).message}`, 'Check [database] url (AGENT_WALLET_DATABASE_URL), that the server runs and the user may connect.');
  } finally {
    await store.close();
  }
}

/** A read of the configured ledger for one check: SQLite read-only, or PostgreSQL. */
async function readLedger<T>(dataDir: string, config: Config, fn: (db: Store) => Promise<T>): Promise<T> {
  if (config.database.url) {
    const store = new PgStore(config.database.url, { poolSize: 1, tls: config.database.tls });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }
  const db = new Database(join(dataDir, 'wallet.db'), { readonly: true });
  try {
    db.run('PRAGMA busy_timeout = 5000');
    return await fn(new SqliteStore(db));
  } finally {
    db.close();
  }
}

/** The RPC the daemon uses: on simnet the embedded chain's, found in daemon.json. */
function rpcUrlOf(dataDir: string, config: Config): string | null {
  if (config.solana.network !== 'simnet') return config.rpcUrl;
  const state = join(dataDir, 'daemon.json');
  if (!existsSync(state)) return null;
  return (JSON.parse(readFileSync(state, 'utf8')) as { rpc_url?: string }).rpc_url ?? null;
}

async function rpc(config: Config, rpcUrl: string | null, chain: ChainPort | null): Promise<Check> {
  if (!rpcUrl || !chain) return fail('rpc', 'simnet runs inside the daemon, which is not running', 'Start the daemon (agent-wallet serve), then run the doctor again.');
  try {
    const height = await chain.getBlockHeight();
    const genesis = await chain.getGenesisHash();
    const caip2 = NETWORKS[config.solana.network].caip2;
    if (caip2 && !genesis.startsWith(caip2.slice('solana:'.length))) {
      return fail('rpc', `${rpcUrl} serves genesis ${genesis}, not ${config.solana.network}`, `Point solana.rpc_url at a ${config.solana.network} RPC endpoint.`);
    }
    return pass('rpc', `${rpcUrl} answers: block height ${height}, genesis ${genesis}`);
  } catch (err) {
    return fail('rpc', `${rpcUrl} does not answer: ${(err as Error).message}`, 'Check solana.rpc_url, the network and the RPC provider; the daemon cannot pay without it.');
  }
}

async function feePayerSol(dataDir: string, config: Config, chain: ChainPort | null): Promise<Check> {
  if (!chain) return fail('fee_payer_sol', 'not checked: no RPC', 'Fix the rpc check first.');
  try {
    const feePayer = loadFeePayer(dataDir, config.solana.fee_payer_keypair_file);
    const lamports = await chain.getSolBalance(feePayer.address);
    const perDay = dailyFeeLamports(await readLedger(dataDir, config, (db) => recentCompletedTransfers(db, Date.now() - DAY_MS)));
    const verdict = assessFeePayer(lamports, perDay);
    if (verdict.ok) return pass('fee_payer_sol', `${feePayer.address}: ${verdict.reason}`);
    return fail('fee_payer_sol', `${feePayer.address}: ${verdict.reason}`, `Send SOL to the fee payer ${feePayer.address}; it pays every fee and token-account rent.`);
  } catch (err) {
    return fail('fee_payer_sol', `could not read the fee payer's SOL: ${(err as Error).message}`, 'Fix the rpc and file_modes checks first.');
  }
}

async function treasury(dataDir: string, config: Config, chain: ChainPort | null): Promise<Check> {
  if (!chain) return fail('treasury_usdc_account', 'not checked: no RPC', 'Fix the rpc check first.');
  try {
    const owner = (config.solana.treasury || loadFeePayer(dataDir, config.solana.fee_payer_keypair_file).address) as Address;
    if (await chain.tokenAccountExists(owner, config.usdcMint as Address)) return pass('treasury_usdc_account', `${owner} has a USDC token account`);
    return fail('treasury_usdc_account', `${owner} has no USDC token account: payments with a fee fail`, `Create the associated token account of ${owner} for mint ${config.usdcMint} (spl-token create-account).`);
  } catch (err) {
    return fail('treasury_usdc_account', `could not check: ${(err as Error).message}`, 'Fix the rpc check first.');
  }
}

async function clockSkew(chain: ChainPort | null, reachable: boolean): Promise<Check> {
  if (!chain || !reachable) return fail('clock_skew', 'not checked: no RPC', 'Fix the rpc check first.');
  try {
    const chainTime = await chain.getChainUnixTime();
    const skew = BigInt(Math.floor(Date.now() / 1000)) - chainTime;
    const abs = skew < 0n ? -skew : skew;
    if (abs <= MAX_CLOCK_SKEW_S) return pass('clock_skew', `this machine's clock is ${skew} s from the chain's`);
    return fail('clock_skew', `this machine's clock is ${skew} s from the chain's (more than ${MAX_CLOCK_SKEW_S} s)`, 'Turn on NTP (timedatectl set-ntp true); intent expiry, links and lockouts use this clock.');
  } catch (err) {
    return fail('clock_skew', `could not read the chain's clock: ${(err as Error).message}`, 'Fix the rpc check first.');
  }
}

function freeDisk(dataDir: string): Check {
  const s = statfsSync(dataDir);
  const free = Number(s.bavail) * Number(s.bsize);
  const gib = (free / 1024 ** 3).toFixed(1);
  if (free >= MIN_FREE_BYTES) return pass('free_disk', `${gib} GiB free under ${dataDir}`);
  return fail('free_disk', `only ${gib} GiB free under ${dataDir}`, 'Free disk space or move the data directory: SQLite needs room for its WAL and backups.');
}

async function daemon(dataDir: string): Promise<Check> {
  const state = join(dataDir, 'daemon.json');
  if (!existsSync(state)) return fail('daemon', 'no daemon.json: the daemon is not running on this data dir', `Start it: agent-wallet serve --data-dir ${dataDir} (or systemctl start agent-wallet).`);
  const { pid, api_url } = JSON.parse(readFileSync(state, 'utf8')) as { pid: number; api_url: string };
  try {
    process.kill(pid, 0);
  } catch {
    return fail('daemon', `daemon.json names pid ${pid}, which is not running`, `Start it: agent-wallet serve --data-dir ${dataDir}.`);
  }
  try {
    const res = await fetch(new URL('/healthz', api_url), { signal: AbortSignal.timeout(5_000) });
    const health = (await res.json().catch(() => ({}))) as { status?: string; until_block_height?: string | null; blocks_to_go?: number };
    if (res.ok && health.status === 'restoring') {
      const where = health.until_block_height === null ? 'reading the chain' : `${health.blocks_to_go} blocks to go (until block height ${health.until_block_height})`;
      return pass('daemon', `pid ${pid} answers at ${api_url}; restoring, ${where}: reads work, money actions wait until the ledger is reconciled with the chain`);
    }
    if (res.ok) return pass('daemon', `pid ${pid} answers /healthz at ${api_url}`);
    return fail('daemon', `pid ${pid} answers /healthz with ${res.status}`, 'Read the daemon log; /healthz fails when the ledger cannot be read.');
  } catch (err) {
    return fail('daemon', `pid ${pid} runs but ${api_url} does not answer: ${(err as Error).message}`, 'Read the daemon log; restart it if it hangs.');
  }
}

async function backlog(dataDir: string, config: Config): Promise<Check> {
  const { mail, hooks } = await readLedger(dataDir, config, async (db) => ({ mail: await mailBacklog(db), hooks: await webhookBacklog(db) }));
  const detail = `mail: ${mail.depth} queued; webhooks: ${hooks.depth} pending`;
  const stale = [['mail', mail.oldestAt], ['webhook', hooks.oldestAt]].filter(([, at]) => at !== null && Date.now() - (at as number) > MAX_BACKLOG_AGE_MS);
  if (stale.length === 0) return pass('backlog', detail);
  const oldest = stale.map(([what, at]) => `oldest ${what} waits ${Math.round((Date.now() - (at as number)) / 60_000)} min`).join('; ');
  return fail('backlog', `${detail}; ${oldest}`, 'Check mail.smtp_url and the merchants\' webhook endpoints (agent-wallet admin mail; the daemon log names each failure).');
}

/** Runs every check on `dataDir`. */
export async function runDoctor(dataDir: string, env: Record<string, string | undefined>): Promise<Check[]> {
  let config: Config;
  try {
    config = loadConfig({ dataDir }, env);
  } catch (err) {
    return [fileModes(dataDir, null), fail('config', (err as Error).message, `Fix ${join(dataDir, 'config.toml')} or the AGENT_WALLET_* variable named above.`)];
  }
  const checks: Check[] = [fileModes(dataDir, config), pass('config', `network ${config.solana.network}, usdc mint ${config.usdcMint}`)];
  const ledgerCheck = existsSync(dataDir) ? await ledger(dataDir, config) : fail('ledger', `${dataDir} does not exist`, 'Pass the --data-dir the daemon runs with.');
  checks.push(ledgerCheck);
  const rpcUrl = rpcUrlOf(dataDir, config);
  const chain = rpcUrl ? createRpcChainPort(rpcUrl, { timeoutMs: 5_000 }) : null;
  const rpcCheck = await rpc(config, rpcUrl, chain);
  checks.push(rpcCheck);
  const reachable = rpcCheck.ok ? chain : null;
  checks.push(ledgerCheck.ok ? await feePayerSol(dataDir, config, reachable) : fail('fee_payer_sol', 'not checked: no ledger', 'Fix the ledger check first.'));
  checks.push(await treasury(dataDir, config, reachable));
  checks.push(await clockSkew(chain, rpcCheck.ok));
  if (existsSync(dataDir)) checks.push(freeDisk(dataDir));
  checks.push(await daemon(dataDir));
  if (ledgerCheck.ok) checks.push(await backlog(dataDir, config));
  return checks;
}
