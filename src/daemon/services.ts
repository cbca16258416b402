/** Builds the Services object from a loaded config, an open database and the secrets. */
import type { Store } from '../db/store.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { FeePayerKey } from '../secret-files.ts';
import type { Services } from '../services.ts';
import { createRpcChainPort, type ChainPort } from '../solana/port.ts';
import type { RpcObserver } from '../solana/rpc-transport.ts';
import { VERSION } from '../version.ts';
import { notRestoring } from '../ops/restore-state.ts';
import { IMMEDIATE, type Durability } from '../db/durability.ts';
import { localNodeLocks, type NodeLocks } from '../db/node-locks.ts';
import { registerHeadSigner } from '../db/decision-log.ts';
import { storeSigningLedger } from '../db/signing-ledger.ts';
import { storeDkgLedger } from '../db/dkg-ledger.ts';
import { signWithLogKey } from '../evidence/log-key.ts';

export function buildServices(opts: {
  config: Config;
  db: Store;
  log: Logger;
  masterKey: Uint8Array;
  feePayer: FeePayerKey;
  listenUrl: () => string;
  chain?: ChainPort;
  /** Told of every RPC attempt (for /metrics). */
  observeRpc?: RpcObserver;
  now?: () => Date;
  simnetRpcUrl?: string;
  /** Syncs on a worker (the daemon); without it the database is synchronous=FULL. */
  durability?: Durability;
  /** The node's locks on a shared ledger (the daemon on PostgreSQL); alone, it holds everything. */
  nodes?: NodeLocks;
}): Services {
  const durability = opts.durability ?? IMMEDIATE;
  const chain =
    opts.chain ??
    createRpcChainPort(opts.config.rpcUrl, {
      fallbackUrls: opts.config.rpcFallbackUrls,
      maxRps: opts.config.rpcMaxRps,
      observe: opts.observeRpc,
      log: (event, fields) => opts.log.warn(event, fields),
    });
  // Each decision-log row is signed in its own commit with the log key (DESIGN §9.1).
  registerHeadSigner(opts.db, (statement) => signWithLogKey(opts.masterKey, statement));
  return {
    config: opts.config,
    db: opts.db,
    log: opts.log,
    now: opts.now ?? (() => new Date()),
    version: VERSION,
    publicUrl: () => opts.config.public_url || pageUrl(opts.listenUrl()),
    signingLedger: storeSigningLedger(opts.db),
    dkgLedger: storeDkgLedger(opts.db),
    masterKey: opts.masterKey,
    feePayer: opts.feePayer,
    chain: durability === IMMEDIATE ? chain : durableSends(chain, durability),
    simnetRpcUrl: opts.simnetRpcUrl,
    restore: notRestoring(),
    durable: () => durability.durable(),
    durability,
    nodes: opts.nodes ?? localNodeLocks(),
  };
}

/** The chain port whose every broadcast waits until the commit that stored the bytes is on the disk. */
function durableSends(chain: ChainPort, durability: Durability): ChainPort {
  return {
    ...chain,
    async sendRawTransaction(wire) {
      await durability.durable();
      return chain.sendRawTransaction(wire);
    },
  };
}

/**
 * The URL people are sent to when no public_url is set: on the default loopback address it names
 * `localhost`, the same server, because passkeys need a domain as the relying party's id (an IP
 * cannot be one), and the owner's session cookie must live on the host the passkey prompt runs on.
 */
function pageUrl(listenUrl: string): string {
  return listenUrl.replace(/^(https?:\/\/)127\.0\.0\.1(:\d+)?$/, '$1localhost$2');
}
