/**
 * Everything an action handler or a job may use, built once by the daemon (or by a test) and
 * passed down explicitly: no module reaches for globals.
 */
import type { Store } from './db/store.ts';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import type { FeePayerKey } from './secret-files.ts';
import type { ChainPort } from './solana/port.ts';
import type { RestoreState } from './ops/restore-state.ts';
import type { Durability } from './db/durability.ts';
import type { NodeLocks } from './db/node-locks.ts';
import type { TxRow } from './db/transactions.ts';
import type { SigningLedger } from './frost/signing-ledger.ts';
import type { DkgLedger } from './frost/dkg-ledger.ts';

export interface Services {
  config: Config;
  db: Store;
  log: Logger;
  /** The current time; tests pass a fake clock. */
  now: () => Date;
  version: string;
  /** Base of the links the daemon hands out, without a trailing slash (public_url or the listen address). */
  publicUrl: () => string;
  /** What the FROST coordinators keep: signing rounds and key generations, on the ledger `db` holds. */
  signingLedger: SigningLedger<TxRow>;
  dkgLedger: DkgLedger;
  /** Seals server shares, DKG state and nonces at rest (AES-256-GCM). */
  masterKey: Uint8Array;
  /** The operator's key that pays SOL fees and rent. */
  feePayer: FeePayerKey;
  /** The only way to the chain. */
  chain: ChainPort;
  /** The embedded chain's RPC URL when running on simnet. */
  simnetRpcUrl?: string;
  /** The first start after a restore: money actions wait while it is active (src/ops/restore-state.ts). */
  restore: RestoreState;
  /**
   * The rule for every external effect (an answer, a broadcast, a webhook, a mail, a payment
   * header): wait for this first. Undefined when every commit so far is on the disk (src/db/durability.ts).
   */
  durable: () => Promise<void> | undefined;
  /** How the ledger reaches the disk, for /metrics. */
  durability: Durability;
  /** What this node holds against the other daemons of a shared ledger: job ticks, the chain watch, idempotency keys. */
  nodes: NodeLocks;
}
