/**
 * `agent-wallet simnet [--port N] [--data-dir DIR] [--slot-ms MS] [provider faults]`: the embedded
 * chain alone, for tools that want a local Solana JSON-RPC with USDC (kit clients,
 * `solana -u localhost`). The fault flags make it behave like a hosted provider on a congested
 * mainnet, so a chain client can be tested offline; `simnet_setFaults` changes them later.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parsePort, UsageError } from './usage.ts';

/** A whole number ≥ 1 from a flag, or undefined when the flag is absent. */
function count(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number ≥ 1, got "${value}"`);
  return n;
}

/** The flags of `agent-wallet simnet`, as commander parsed them. */
export interface SimnetFlags {
  port?: string;
  dataDir?: string;
  slotMs?: string;
  congestionFloor?: string;
  rateLimit?: string;
  /** false when --no-retry-after was given. */
  retryAfter: boolean;
  statusLagSlots?: string;
}

export async function simnetCommand(values: SimnetFlags): Promise<number> {
  const slotMs = values.slotMs === undefined ? 400 : Number(values.slotMs);
  if (!Number.isInteger(slotMs) || slotMs < 10) throw new UsageError('--slot-ms must be a whole number of milliseconds ≥ 10');
  const floor = count('--congestion-floor', values.congestionFloor);
  const rps = count('--rate-limit', values.rateLimit);
  if (!values.retryAfter && rps === undefined) throw new UsageError('--no-retry-after needs --rate-limit');
  const statusLagSlots = count('--status-lag-slots', values.statusLagSlots);
  const port = parsePort('--port', values.port) ?? 8899;
  const dataDir = resolve(values.dataDir ?? './data');
  // The compiled binary unpacks LiteSVM's native addon into TMPDIR: keep it private and exec-allowed.
  const tmp = join(dataDir, 'tmp');
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  process.env.TMPDIR = tmp;
  // Listen for signals before starting: a stop requested during start-up waits for it, then stops cleanly.
  const signalled = new Promise<void>((done) => {
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
  });
  const { faultsJson, startSimnet } = await import('../simnet/index.ts');
  const stateFile = join(dataDir, 'simnet', 'state.bin');
  const simnet = await startSimnet({
    port,
    stateFile,
    slotMs,
    ...(floor === undefined ? {} : { congestionFloor: BigInt(floor) }),
    ...(rps === undefined ? {} : { rateLimit: { rps, retryAfter: values.retryAfter } }),
    ...(statusLagSlots === undefined ? {} : { statusLagSlots }),
  });
  // Only the faults that are on, so the line says at a glance what this simnet will do to callers.
  const faults = Object.fromEntries(Object.entries(faultsJson(simnet.faults())).filter(([, v]) => v !== null));
  process.stdout.write(
    `${JSON.stringify({ msg: 'simnet started', rpc_url: simnet.url, usdc_mint: simnet.mint, network: 'simnet (presents as devnet)', state_file: stateFile, faults })}\n`,
  );
  await signalled;
  await simnet.stop();
  return 0;
}
