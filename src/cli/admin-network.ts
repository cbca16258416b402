/**
 * The network of a data directory, for admin commands. A daemon may run with its network given
 * by environment (AGENT_WALLET_SOLANA_NETWORK=custom …) that the operator's shell does not
 * repeat, so the running daemon's record (`<data-dir>/daemon.json`: network, RPC URL, mint) wins
 * over the data dir's config.toml; only an explicit, different network in the environment is
 * refused. Without a daemon record, config.toml and the environment say it, as for `serve`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

type Env = Record<string, string | undefined>;

/** Thrown for a data dir an admin command cannot work on (exit code 1 with the message). */
export class AdminError extends Error {
  override readonly name = 'AdminError';
}

/** `env` with the running daemon's network settings laid over it, for loadConfig. */
export function dataDirEnv(dataDir: string, env: Env): Env {
  const stateFile = join(dataDir, 'daemon.json');
  if (!existsSync(stateFile)) return env;
  const daemon = JSON.parse(readFileSync(stateFile, 'utf8')) as { network?: string; rpc_url?: string; usdc_mint?: string };
  if (!daemon.network) return env;
  const asked = env.AGENT_WALLET_SOLANA_NETWORK;
  if (asked && asked !== daemon.network) {
    throw new AdminError(`the daemon on ${dataDir} runs on network ${daemon.network}, not ${asked} (AGENT_WALLET_SOLANA_NETWORK); unset it, or pass the --data-dir of a ${asked} daemon`);
  }
  // Simnet serves its own RPC (config refuses an rpc_url there); other networks take the daemon's.
  if (daemon.network === 'simnet') return { ...env, AGENT_WALLET_SOLANA_NETWORK: 'simnet' };
  return {
    ...env,
    AGENT_WALLET_SOLANA_NETWORK: daemon.network,
    ...(daemon.rpc_url && !env.AGENT_WALLET_SOLANA_RPC_URL ? { AGENT_WALLET_SOLANA_RPC_URL: daemon.rpc_url } : {}),
    ...(daemon.usdc_mint && !env.AGENT_WALLET_SOLANA_USDC_MINT ? { AGENT_WALLET_SOLANA_USDC_MINT: daemon.usdc_mint } : {}),
  };
}
