/** Builds the Services object from a loaded config, an open database and the secrets. */
import type { Database } from 'bun:sqlite';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { FeePayerKey } from '../secret-files.ts';
import type { Services } from '../services.ts';
import { createRpcChainPort, type ChainPort } from '../solana/port.ts';
import type { RpcObserver } from '../solana/rpc-transport.ts';
import { VERSION } from '../version.ts';
import { notRestoring } from '../ops/restore-state.ts';

export function buildServices(opts: {
  config: Config;
  db: Database;
  log: Logger;
  masterKey: Uint8Array;
  feePayer: FeePayerKey;
  listenUrl: () => string;
  chain?: ChainPort;
  /** Told of every RPC attempt (for /metrics). */
  observeRpc?: RpcObserver;
  now?: () => Date;
  simnetRpcUrl?: string;
}): Services {
  return {
    config: opts.config,
    db: opts.db,
    log: opts.log,
    now: opts.now ?? (() => new Date()),
    version: VERSION,
    publicUrl: () => opts.config.public_url || opts.listenUrl(),
    masterKey: opts.masterKey,
    feePayer: opts.feePayer,
    chain:
      opts.chain ??
      createRpcChainPort(opts.config.rpcUrl, {
        fallbackUrls: opts.config.rpcFallbackUrls,
        maxRps: opts.config.rpcMaxRps,
        observe: opts.observeRpc,
        log: (event, fields) => opts.log.warn(event, fields),
      }),
    simnetRpcUrl: opts.simnetRpcUrl,
    restore: notRestoring(),
  };
}
