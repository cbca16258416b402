/**
 * Simnet: an embedded local Solana chain (LiteSVM in-process) serving the Solana JSON-RPC
 * over HTTP, presenting itself as devnet (genesis hash, USDC mint address) so the daemon and
 * third-party clients use it exactly like a real cluster. Blocks advance on a timer, the last
 * 150 blockhashes stay valid, and state persists to `stateFile` across restarts. It also plays
 * a hosted provider on a busy mainnet: it counts every call, and can drop underpriced
 * transactions, rate-limit with 429, lag on statuses, fail or hang — each switchable here,
 * from `agent-wallet simnet` flags, and over loopback JSON-RPC (`simnet_setFaults`).
 */
import type { Address } from '@solana/kit';
import { DEVNET_USDC } from '../solana/networks.ts';
import { Chain } from './chain.ts';
import { Faucet } from './faucet.ts';
import { checkFaultPatch, faultsJson, FaultPatchError, type ChainFaults, type FaultMode, type FaultPatch, type FaultSettings, type RateLimit } from './faults.ts';
import { serveRpc } from './server.ts';
import { loadState, saveState } from './state.ts';
import { CallStats, type SimnetStats } from './stats.ts';

export { faultsJson } from './faults.ts';
export type { FaultMode, FaultSettings, RateLimit } from './faults.ts';
export type { SimnetStats } from './stats.ts';

/** How often a dirty state is written to `stateFile`. */
const SAVE_INTERVAL_MS = 5000;

export interface SimnetOptions {
  /** 0 → any free port. */
  port: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /** When set: restored at start if present, saved on a timer and at stop(). */
  stateFile?: string;
  /** Block time; default 400. */
  slotMs?: number;
  log?: (entry: Record<string, unknown>) => void;
  /** Start with the congestion fault on at this floor (micro-lamports/CU). */
  congestionFloor?: bigint;
  /** Start with the rate-limit fault on. */
  rateLimit?: RateLimit;
  /** Start with status queries this many slots behind. */
  statusLagSlots?: number;
}

export interface Simnet {
  /** 'http://127.0.0.1:PORT' */
  readonly url: string;
  readonly port: number;
  /** DEVNET_USDC, 6 decimals, minted by simnet's own authority. */
  readonly mint: Address;
  /** Real on-chain transactions (so they have signatures the deposit watcher can find): creates owner's USDC ATA idempotently and mints usdc (base units); airdrops lamports when given. Returns the mint tx signature. */
  faucet(owner: Address, usdc: bigint, lamports?: bigint): Promise<string>;
  /** Sends lamports from simnet's payer in a real transfer; returns its signature. */
  airdrop(address: Address, lamports: bigint): Promise<string>;
  /** Fault switch for reliability tests: 'error' → every RPC call answers HTTP 503; 'hang' → calls wait until the fault is cleared; null → normal. */
  setFault(mode: FaultMode): void;
  /** Congestion fault: sent transactions priced below `floorMicroLamports` per CU are answered but never land; null → off. */
  setCongestion(floorMicroLamports: bigint | null): void;
  /** Rate-limit fault: calls beyond `rps` per rolling second get HTTP 429 (with `Retry-After: 1` when `retryAfter`); null → off. */
  setRateLimit(limit: RateLimit | null): void;
  /** Lagging-node fault: status queries answer as a node `slots` behind; null → off. */
  setStatusLag(slots: number | null): void;
  /** Every fault's current setting. */
  faults(): FaultSettings;
  /** Calls served, HTTP requests, calls refused with 429, transactions dropped by congestion. */
  stats(): SimnetStats;
  resetStats(): void;
  /** Current block height (= slot). */
  blockHeight(): bigint;
  /** Produces `count` blocks at once (tests: a blockhash expires without waiting 150 slots). */
  skipBlocks(count: number): void;
  /** Writes the state file now (no-op without `stateFile`). */
  save(): Promise<void>;
  /** Saves state when stateFile is set; frees the port. Idempotent. */
  stop(): Promise<void>;
}

/** Starts a simnet: restores or creates the chain, starts block production and the RPC endpoint. */
export async function startSimnet(opts: SimnetOptions): Promise<Simnet> {
  const slotMs = opts.slotMs ?? 400;
  const log = opts.log ?? (() => {});
  const initialFaults: FaultPatch = {
    ...(opts.congestionFloor === undefined ? {} : { congestionFloor: opts.congestionFloor }),
    ...(opts.rateLimit === undefined ? {} : { rateLimitRps: opts.rateLimit.rps, retryAfter: opts.rateLimit.retryAfter }),
    ...(opts.statusLagSlots === undefined ? {} : { statusLagSlots: opts.statusLagSlots }),
  };
  checkFaultPatch(initialFaults);
  const saved = opts.stateFile === undefined ? null : await loadState(opts.stateFile);
  const faucet = await Faucet.load(saved?.faucet);
  const now = Date.now();
  let chain: Chain;
  if (saved === null) {
    chain = Chain.create(now);
    faucet.genesis(chain);
  } else {
    chain = Chain.restore(saved.chain, BigInt(Math.max(0, Math.floor((now - saved.savedAtMs) / slotMs))), now);
  }

  const stats = new CallStats();
  const chainFaults: ChainFaults = { congestionFloor: null, statusLagSlots: null };
  let mode: FaultMode = null;
  let rateLimit: RateLimit | null = null;
  const current = (): FaultSettings => ({ ...chainFaults, rateLimit, mode });

  const setFaults = (patch: FaultPatch): FaultSettings => {
    checkFaultPatch(patch);
    const rps = patch.rateLimitRps === undefined ? (rateLimit?.rps ?? null) : patch.rateLimitRps;
    if (rps === null && patch.retryAfter !== undefined) throw new FaultPatchError('rate_limit_retry_after needs a rate limit (rate_limit_rps)');
    if (patch.congestionFloor !== undefined) {
      chainFaults.congestionFloor = patch.congestionFloor;
      log({ event: 'simnet.congestion', floor: patch.congestionFloor?.toString() ?? null });
    }
    if (patch.statusLagSlots !== undefined) {
      chainFaults.statusLagSlots = patch.statusLagSlots;
      log({ event: 'simnet.status_lag', slots: patch.statusLagSlots });
    }
    if (patch.rateLimitRps !== undefined || patch.retryAfter !== undefined) {
      rateLimit = rps === null ? null : { rps, retryAfter: patch.retryAfter ?? rateLimit?.retryAfter ?? true };
      server.setRateLimit(rateLimit);
    }
    if (patch.mode !== undefined) {
      mode = patch.mode;
      server.setFault(mode);
    }
    return current();
  };

  // Two handler contexts, built once: nothing in them varies per request but where the caller is.
  const shared = { chain, faucet, faults: chainFaults, stats, control: { setFaults }, log };
  const contexts = { local: { ...shared, loopback: true }, remote: { ...shared, loopback: false } };
  const server = serveRpc({
    host: opts.host ?? '127.0.0.1',
    port: opts.port,
    context: (loopback) => (loopback ? contexts.local : contexts.remote),
    stats,
    log,
  });
  setFaults(initialFaults);

  let saving: Promise<void> = Promise.resolve();
  const save = (): Promise<void> => {
    const file = opts.stateFile;
    if (file === undefined) return Promise.resolve();
    saving = saving.catch(() => {}).then(async () => {
      chain.dirty = false;
      await saveState(file, { chain: chain.snapshot(), faucet: faucet.keys, savedAtMs: Date.now() });
    });
    return saving;
  };

  const blocks = setInterval(() => chain.tick(Date.now()), slotMs);
  blocks.unref();
  const saver = setInterval(() => {
    if (chain.dirty) save().catch((e: unknown) => log({ event: 'simnet.save_failed', error: (e as Error).message }));
  }, SAVE_INTERVAL_MS);
  saver.unref();

  let stopping: Promise<void> | null = null;
  log({ event: 'simnet.started', url: server.url, height: chain.blockHeight(), restored: saved !== null, faults: faultsJson(current()) });
  return {
    url: server.url,
    port: server.port,
    mint: DEVNET_USDC,
    faucet: (owner, usdc, lamports) => faucet.fund(chain, owner, usdc, lamports),
    airdrop: (address, lamports) => faucet.airdrop(chain, address, lamports),
    setFault: (next) => void setFaults({ mode: next }),
    setCongestion: (floor) => void setFaults({ congestionFloor: floor }),
    setRateLimit: (limit) => void setFaults(limit === null ? { rateLimitRps: null } : { rateLimitRps: limit.rps, retryAfter: limit.retryAfter }),
    setStatusLag: (slots) => void setFaults({ statusLagSlots: slots }),
    faults: current,
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    blockHeight: () => chain.blockHeight(),
    skipBlocks: (count) => {
      for (let i = 0; i < count; i++) chain.tick(Date.now());
    },
    save,
    stop() {
      stopping ??= (async () => {
        clearInterval(blocks);
        clearInterval(saver);
        await server.stop();
        await save();
        log({ event: 'simnet.stopped', height: chain.blockHeight() });
      })();
      return stopping;
    },
  };
}
