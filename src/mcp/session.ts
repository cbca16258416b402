/**
 * What a tool handler works with: the configured server, profile store and profile name (the
 * same env and defaults as the CLI, DESIGN §11), the wallet's authenticated client, progress
 * reporting and the stderr logger. stdout is the protocol channel: nothing here writes to it.
 */
import { statSync } from 'node:fs';
import { ApiClient } from '../client/api.ts';
import type { ProfileData, ProfileStore } from '../client/profile.ts';
import { DEFAULT_SERVER, profileClient, type CliContext } from '../cli/context.ts';
import type { Logger } from '../log.ts';

export interface Session {
  /** The API base URL from AGENT_WALLET_URL / --server, or the default. */
  readonly server: string;
  /** True when the server URL was configured (env or flag) rather than defaulted. */
  readonly explicitServer: boolean;
  readonly profileName: string;
  readonly store: ProfileStore;
  readonly log: Logger;
  /** The wallet's profile and a client with its key; throws ProfileError when there is none. */
  wallet(): { profile: ProfileData; api: ApiClient };
  /** A client without a key, for the actions that need none (dkg_*, register, wallet_import_key). */
  anonymous(): ApiClient;
  /** Drops the cached profile (after register or import wrote a new one). */
  forget(): void;
  /** Reports a step of long work (stderr, and an MCP progress notification when asked for). */
  progress(step: string): void;
}

/**
 * A session over the CLI context; the profile is loaded lazily and cached (scrypt is slow), and
 * loaded again when its file changed: the CLI beside this server may have refreshed the key share
 * or stored a rotated API key, and signing with the old share would be refused.
 */
export function createSession(ctx: CliContext, log: Logger): Session & { withProgress(report: (step: string) => void): Session } {
  let cached: { profile: ProfileData; api: ApiClient; mtimeMs: number } | null = null;
  const mtimeOf = () => {
    try {
      return statSync(ctx.store.path(ctx.profileName)).mtimeMs;
    } catch {
      return -1;
    }
  };
  const base: Session = {
    server: ctx.server,
    explicitServer: ctx.server !== DEFAULT_SERVER,
    profileName: ctx.profileName,
    store: ctx.store,
    log,
    wallet() {
      const mtimeMs = mtimeOf();
      if (!cached || cached.mtimeMs !== mtimeMs) cached = { ...profileClient(ctx), mtimeMs };
      return cached;
    },
    anonymous: () => new ApiClient(ctx.server),
    forget() {
      cached = null;
    },
    progress: (step) => log.info(step),
  };
  return {
    ...base,
    withProgress(report) {
      // The methods close over `cached`, so a copy shares the profile cache.
      return {
        ...base,
        progress(step) {
          log.info(step);
          report(step);
        },
      };
    },
  };
}
