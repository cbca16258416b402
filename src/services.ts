/**
 * Everything an action handler or a job may use, built once by the daemon (or by a test) and
 * passed down explicitly: no module reaches for globals.
 */
import type { Database } from 'bun:sqlite';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';

export interface Services {
  config: Config;
  db: Database;
  log: Logger;
  /** The current time; tests pass a fake clock. */
  now: () => Date;
  version: string;
  /** Base of the links the daemon hands out, without a trailing slash (public_url or the listen address). */
  publicUrl: () => string;
  /** The embedded chain's RPC URL when running on simnet. */
  simnetRpcUrl?: string;
}
