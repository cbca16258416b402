/** Builds the Services object from a loaded config and an open database. */
import type { Database } from 'bun:sqlite';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Services } from '../services.ts';
import { VERSION } from '../version.ts';

export function buildServices(opts: { config: Config; db: Database; log: Logger; listenUrl: () => string; now?: () => Date; simnetRpcUrl?: string }): Services {
  return {
    config: opts.config,
    db: opts.db,
    log: opts.log,
    now: opts.now ?? (() => new Date()),
    version: VERSION,
    publicUrl: () => opts.config.public_url || opts.listenUrl(),
    simnetRpcUrl: opts.simnetRpcUrl,
  };
}
