/**
 * The daemon's one typed configuration object. Precedence: defaults ← TOML file ← environment
 * (`AGENT_WALLET_<SECTION>_<KEY>`) ← command-line flags. A bad value stops start-up naming the
 * key path and what is allowed. Money values are decimal strings (TOML integers beyond 2^53 throw).
 */
import { isIP } from 'node:net';
import { Type as T, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseUsdc } from './domain/money.ts';
import { isPostgresUrl } from './db/pg-store.ts';
import { NETWORKS, type NetworkName } from './solana/networks.ts';

const Money = T.String({ description: 'decimal USDC, e.g. "0.25"' });
const Port = T.Integer({ minimum: 0, maximum: 65535 });

export const ConfigSchema = T.Object(
  {
    public_url: T.String({ default: '' }),
    server: T.Object(
      {
        host: T.String({ default: '127.0.0.1', minLength: 1 }),
        port: T.Integer({ default: 8787, minimum: 0, maximum: 65535 }),
        tls_cert_file: T.String({ default: '' }),
        tls_key_file: T.String({ default: '' }),
        metrics_token: T.String({ default: '' }),
        trusted_proxies: T.Array(T.String({ minLength: 1 }), { default: [] }),
      },
      { additionalProperties: false, default: {} },
    ),
    solana: T.Object(
      {
        network: T.Union([T.Literal('simnet'), T.Literal('devnet'), T.Literal('mainnet'), T.Literal('custom')], { default: 'simnet' }),
        rpc_url: T.String({ default: '' }),
        usdc_mint: T.String({ default: '' }),
        fee_payer_keypair_file: T.String({ default: 'fee-payer.json', minLength: 1 }),
        treasury: T.String({ default: '' }),
        rpc_urls: T.Array(T.String({ minLength: 1 }), { default: [] }),
        rpc_max_rps: T.Number({ default: -1, minimum: -1, maximum: 100_000 }),
        priority_fee_percentile: T.Integer({ default: 75, minimum: 0, maximum: 100 }),
        priority_fee_cap_micro_lamports: T.Integer({ default: 1_000_000, minimum: 0, maximum: 1_000_000_000 }),
        commitment: T.Union([T.Literal('confirmed'), T.Literal('finalized')], { default: 'confirmed' }),
      },
      { additionalProperties: false, default: {} },
    ),
    database: T.Object(
      {
        url: T.String({ default: '' }),
        pool_size: T.Integer({ default: 10, minimum: 1, maximum: 200 }),
        tls: T.Boolean({ default: false }),
      },
      { additionalProperties: false, default: {} },
    ),
    simnet: T.Object(
      {
        rpc_port: T.Integer({ default: 8899, minimum: 0, maximum: 65535 }),
        slot_ms: T.Integer({ default: 400, minimum: 10, maximum: 60_000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    fees: T.Object(
      {
        payment_bps: T.Integer({ default: 50, minimum: 0, maximum: 10_000 }),
        payment_min: T.String({ default: '0.01' }),
        withdrawal_fee: T.String({ default: '0.10' }),
        account_setup_fee: T.String({ default: '0.25' }),
        sale_bps: T.Integer({ default: 50, minimum: 0, maximum: 10_000 }),
        sale_min: T.String({ default: '0' }),
        sale_credit: T.String({ default: '10.00' }),
        sale_network_lamports_per_day: T.Integer({ default: 50_000_000, minimum: 0 }),
        sale_network_lamports_per_day_total: T.Integer({ default: 1_000_000_000, minimum: 0 }),
      },
      { additionalProperties: false, default: {} },
    ),
    limits: T.Object({ max_amount: T.String({ default: '1000000' }) }, { additionalProperties: false, default: {} }),
    outbound: T.Object(
      {
        allow_hosts: T.Array(T.String(), { default: [] }),
        connect_timeout_ms: T.Integer({ default: 5000, minimum: 100, maximum: 120_000 }),
        total_timeout_ms: T.Integer({ default: 15000, minimum: 100, maximum: 600_000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    mail: T.Object(
      {
        smtp_url: T.String({ default: '' }),
        from: T.String({ default: 'Agent Wallet <wallet@localhost>' }),
      },
      { additionalProperties: false, default: {} },
    ),
    rate_limits: T.Object(
      {
        per_key_per_minute: T.Integer({ default: 600, minimum: 1 }),
        per_ip_per_minute: T.Integer({ default: 120, minimum: 1 }),
      },
      { additionalProperties: false, default: {} },
    ),
    log: T.Object(
      { level: T.Union([T.Literal('debug'), T.Literal('info'), T.Literal('warn'), T.Literal('error')], { default: 'info' }) },
      { additionalProperties: false, default: {} },
    ),
    recovery: T.Object(
      // The owner + daemon sweep waits this long after it is announced, so the owner can see and cancel one started with a stolen mailbox and kit.
      { sweep_delay_seconds: T.Integer({ default: 86_400, minimum: 0, maximum: 30 * 86_400 }) },
      { additionalProperties: false, default: {} },
    ),
    owner: T.Object(
      // A passkey reset started from the mail takes effect this long after, so a stolen mailbox alone cannot replace the owner's passkeys before the owner sees the mail.
      { passkey_reset_hours: T.Number({ default: 72, exclusiveMinimum: 0, maximum: 30 * 24 }) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

export type FileConfig = Static<typeof ConfigSchema>;

/** Money values of the config, parsed once into micro-USDC. */
export interface MoneyConfig {
  paymentMin: bigint;
  withdrawalFee: bigint;
  accountSetupFee: bigint;
  /** The least fee of an x402 sale settled here for a merchant. */
  saleMin: bigint;
  /** Sale fees a merchant may owe before its sales are refused. */
  saleCredit: bigint;
  maxAmount: bigint;
}

/** The resolved configuration the daemon runs with. */
export interface Config extends FileConfig {
  dataDir: string;
  configFile: string;
  money: MoneyConfig;
  /** RPC URL for devnet/mainnet/custom; for simnet, filled in once the embedded chain listens. */
  rpcUrl: string;
  /** Endpoints to fail over to after rpcUrl (solana.rpc_urls). */
  rpcFallbackUrls: string[];
  /** The client-side RPC request budget per second for all use; 0 = unlimited. */
  rpcMaxRps: number;
  usdcMint: string;
}

/** Thrown for any invalid configuration; `keyPath` is "section.key". */
export class ConfigError extends Error {
  constructor(
    readonly keyPath: string,
    message: string,
  ) {
    super(`config ${keyPath}: ${message}`);
    this.name = 'ConfigError';
  }
}

/** Flags given on the command line; they win over everything else. */
export interface ConfigFlags {
  dataDir?: string;
  configFile?: string;
  port?: number;
  host?: string;
  /** The embedded chain's RPC port (simnet.rpc_port). */
  simnetPort?: number;
}

function schemaProps(schema: TSchema): Record<string, TSchema> {
  return (schema as TObject).properties;
}

/** Converts one environment string to the type the schema expects at that key. */
function envValue(raw: string, schema: TSchema, keyPath: string): unknown {
  const type = (schema as { type?: string }).type;
  if (type === 'integer') {
    if (!/^-?[0-9]+$/.test(raw.trim())) throw new ConfigError(keyPath, `expected an integer, got "${raw}"`);
    return Number(raw.trim());
  }
  if (type === 'number') {
    if (!/^-?[0-9]+(\.[0-9]+)?$/.test(raw.trim())) throw new ConfigError(keyPath, `expected a number, got "${raw}"`);
    return Number(raw.trim());
  }
  if (type === 'array') return raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  if (type === 'boolean') return raw === 'true' || raw === '1';
  return raw;
}

/** Applies `AGENT_WALLET_<SECTION>_<KEY>` (and `AGENT_WALLET_<KEY>` for top-level keys). */
function applyEnv(target: Record<string, unknown>, env: Record<string, string | undefined>): void {
  for (const [key, sub] of Object.entries(schemaProps(ConfigSchema))) {
    if ((sub as { type?: string }).type === 'object') {
      const section = (target[key] ??= {}) as Record<string, unknown>;
      for (const [leaf, leafSchema] of Object.entries(schemaProps(sub))) {
        const raw = env[`AGENT_WALLET_${key}_${leaf}`.toUpperCase()];
        if (raw !== undefined) section[leaf] = envValue(raw, leafSchema, `${key}.${leaf}`);
      }
    } else {
      const raw = env[`AGENT_WALLET_${key}`.toUpperCase()];
      if (raw !== undefined) target[key] = envValue(raw, sub, key);
    }
  }
}

function pathToKey(path: string): string {
  return path.replace(/^\//, '').replaceAll('/', '.') || '(root)';
}

function describeAllowed(schema: TSchema): string {
  const s = schema as { anyOf?: { const: unknown }[]; type?: string; minimum?: number; maximum?: number };
  if (s.anyOf) return `one of ${s.anyOf.map((o) => JSON.stringify(o.const)).join(', ')}`;
  if (s.type === 'integer') return `an integer${s.minimum !== undefined ? ` from ${s.minimum}` : ''}${s.maximum !== undefined ? ` to ${s.maximum}` : ''}`;
  return `a ${s.type ?? 'value'}`;
}

function validate(raw: unknown): FileConfig {
  const withDefaults = Value.Default(ConfigSchema, Value.Clone(raw));
  const first = Value.Errors(ConfigSchema, withDefaults).First();
  if (first) {
    const key = pathToKey(first.path);
    if (first.message.includes('Unexpected property')) throw new ConfigError(key, 'unknown key; see the README configuration reference');
    throw new ConfigError(key, `${first.message.toLowerCase()}; allowed: ${describeAllowed(first.schema)}`);
  }
  return withDefaults as FileConfig;
}

function money(keyPath: string, value: string, allowZero: boolean): bigint {
  const parsed = parseUsdc(value);
  if (!parsed.ok) throw new ConfigError(keyPath, `"${value}" ${parsed.reason}; expected a decimal string like "0.25"`);
  if (!allowZero && parsed.micro === 0n) throw new ConfigError(keyPath, 'must be greater than 0');
  return parsed.micro;
}

/**
 * Loads the configuration: reads (and on first start writes) the TOML file, overlays the
 * environment and the flags, validates, and resolves network defaults. Throws ConfigError.
 */
export function loadConfig(flags: ConfigFlags = {}, env: Record<string, string | undefined> = process.env): Config {
  const dataDir = resolve(flags.dataDir ?? env.AGENT_WALLET_DATA_DIR ?? './data');
  const configFile = resolve(flags.configFile ?? env.AGENT_WALLET_CONFIG ?? join(dataDir, 'config.toml'));
  let fromFile: Record<string, unknown> = {};
  if (existsSync(configFile)) {
    try {
      fromFile = Bun.TOML.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError('(file)', `${configFile} is not valid TOML: ${(err as Error).message}`);
    }
  } else if (!flags.configFile && !env.AGENT_WALLET_CONFIG) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(configFile, DEFAULT_CONFIG_TOML, { mode: 0o600 });
  } else {
    throw new ConfigError('(file)', `${configFile} does not exist`);
  }

  const merged = structuredClone(fromFile);
  applyEnv(merged, env);
  const server = (merged.server ??= {}) as Record<string, unknown>;
  if (flags.port !== undefined) server.port = flags.port;
  if (flags.host !== undefined) server.host = flags.host;
  if (flags.simnetPort !== undefined) ((merged.simnet ??= {}) as Record<string, unknown>).rpc_port = flags.simnetPort;

  const file = validate(merged);
  const network = file.solana.network as NetworkName;
  const info = NETWORKS[network];
  const rpcUrl = file.solana.rpc_url || info.defaultRpcUrl || '';
  const usdcMint = file.solana.usdc_mint || info.defaultUsdcMint || '';
  const notAnIp = file.server.trusted_proxies.find((a) => isIP(a) === 0);
  if (notAnIp !== undefined) throw new ConfigError('server.trusted_proxies', `"${notAnIp}" is not an IP address; list the proxies' addresses as they connect (e.g. "127.0.0.1", "10.0.0.5")`);
  if (network === 'custom' && !file.solana.rpc_url) throw new ConfigError('solana.rpc_url', 'required when solana.network is "custom"');
  if (network === 'custom' && !file.solana.usdc_mint) throw new ConfigError('solana.usdc_mint', 'required when solana.network is "custom"');
  if (network === 'simnet' && file.solana.rpc_url) throw new ConfigError('solana.rpc_url', 'must be empty for simnet (the embedded chain serves its own RPC)');
  if (rpcUrl && !/^https?:\/\//.test(rpcUrl)) throw new ConfigError('solana.rpc_url', `"${rpcUrl}" must be an http(s) URL`);
  if (network === 'simnet' && file.solana.rpc_urls.length > 0) throw new ConfigError('solana.rpc_urls', 'must be empty for simnet (the embedded chain serves its own RPC)');
  for (const url of file.solana.rpc_urls) {
    if (!/^https?:\/\//.test(url)) throw new ConfigError('solana.rpc_urls', `"${url}" must be an http(s) URL`);
  }
  const rpcMaxRps = file.solana.rpc_max_rps === -1 ? info.defaultRpcMaxRps : file.solana.rpc_max_rps;
  if (file.public_url && !/^https?:\/\/[^/]+/.test(file.public_url)) throw new ConfigError('public_url', `"${file.public_url}" must be an http(s) URL such as https://wallet.example.com`);
  if (Boolean(file.server.tls_cert_file) !== Boolean(file.server.tls_key_file)) {
    throw new ConfigError(file.server.tls_cert_file ? 'server.tls_key_file' : 'server.tls_cert_file', 'TLS needs both tls_cert_file and tls_key_file');
  }
  if (file.database.url && !isPostgresUrl(file.database.url)) {
    throw new ConfigError('database.url', 'must be a postgres:// URL such as postgres://wallet@db.internal:5432/wallet (leave it empty for the embedded SQLite ledger)');
  }
  if (file.outbound.total_timeout_ms < file.outbound.connect_timeout_ms) {
    throw new ConfigError('outbound.total_timeout_ms', 'must be at least outbound.connect_timeout_ms');
  }

  return {
    ...file,
    public_url: file.public_url.replace(/\/+$/, ''),
    dataDir,
    configFile,
    rpcUrl,
    rpcFallbackUrls: file.solana.rpc_urls,
    rpcMaxRps,
    usdcMint,
    money: {
      paymentMin: money('fees.payment_min', file.fees.payment_min, true),
      withdrawalFee: money('fees.withdrawal_fee', file.fees.withdrawal_fee, true),
      accountSetupFee: money('fees.account_setup_fee', file.fees.account_setup_fee, true),
      saleMin: money('fees.sale_min', file.fees.sale_min, true),
      saleCredit: money('fees.sale_credit', file.fees.sale_credit, false),
      maxAmount: money('limits.max_amount', file.limits.max_amount, false),
    },
  };
}

/** Written to `<data-dir>/config.toml` on first start: every key with its default and why. */
export const DEFAULT_CONFIG_TOML = `# Agent Wallet Service configuration.
# Every key can also be set from the environment as AGENT_WALLET_<SECTION>_<KEY>
# (e.g. AGENT_WALLET_SERVER_PORT=9000); flags (--port, --host) win over both.

# Base of the links the daemon hands out (claim, checkout, fund pages).
# Empty: the address the daemon listens on, port included.
public_url = ""

[server]
host = "127.0.0.1"        # listen address; a non-loopback address without TLS is warned about
port = 8787
tls_cert_file = ""        # both set: the daemon serves HTTPS itself
tls_key_file = ""
metrics_token = ""        # empty: /metrics answers loopback clients only
trusted_proxies = []      # balancer / TLS proxy addresses whose X-Forwarded-For is believed, e.g. ["127.0.0.1"]

[solana]
network = "simnet"        # simnet | devnet | mainnet | custom
rpc_url = ""              # required for custom; default per network; empty for simnet
usdc_mint = ""            # default per network
fee_payer_keypair_file = "fee-payer.json"   # relative to the data dir; mode 0600
treasury = ""             # fee recipient; default: the fee payer's address
rpc_urls = []             # more endpoints to fail over to, after rpc_url, on errors and timeouts
rpc_max_rps = -1          # the client-side budget for ALL RPC calls (agent calls first); -1: the network's default
                          # (simnet unlimited, devnet/mainnet 8 for the public endpoints, custom 10), 0: unlimited
priority_fee_percentile = 75              # of getRecentPrioritizationFees for the accounts a payment writes
priority_fee_cap_micro_lamports = 1000000 # per compute unit; the fee payer pays price x CU limit / 1e6 lamports
commitment = "confirmed"  # when a payment counts as landed: confirmed | finalized

[simnet]
rpc_port = 8899           # the embedded chain's JSON-RPC port; 0 picks a free port
slot_ms = 400

[fees]
payment_bps = 50          # 0.5 % of each payment, paid by the sender
payment_min = "0.01"
withdrawal_fee = "0.10"
account_setup_fee = "0.25"  # charged when a payment must create the recipient's token account
sale_bps = 50             # 0.5 % of each x402 sale this daemon settles for a merchant, owed by the merchant
sale_min = "0"
sale_credit = "10.00"     # sale fees a merchant may owe; past it its sales are refused until it pays (merchant fees pay)
sale_network_lamports_per_day = 50000000  # SOL the fee payer may spend on one seller's x402 sales in 24 h (0.05 SOL)
sale_network_lamports_per_day_total = 1000000000  # ... and on all sellers' together (1 SOL): merchants register without a key

[limits]
max_amount = "1000000"    # largest amount any single request may name

[outbound]                # x402 probes and webhook deliveries
allow_hosts = []          # hosts or IPs allowed despite the private-range rule, e.g. ["127.0.0.1"]
connect_timeout_ms = 5000
total_timeout_ms = 15000

[mail]
smtp_url = ""             # empty: mail goes to the outbox table and the log
from = "Agent Wallet <wallet@localhost>"

[rate_limits]
per_key_per_minute = 600
per_ip_per_minute = 120

[log]
level = "info"            # debug | info | warn | error

[recovery]
sweep_delay_seconds = 86400   # an owner + daemon sweep may be signed this long after it is announced

[owner]
passkey_reset_hours = 72      # a passkey reset started from the mail takes effect this long after (any passkey cancels it)
`;
