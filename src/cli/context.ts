/**
 * What a command body gets (DESIGN §11): the global flags (--server, --profile, --json, --home,
 * with their environment fallbacks), its operands and its own flags, all parsed by commander
 * (src/cli/program.ts). Flags are keyed by their long name, as typed: `flags['max-amount']`.
 */
import { ApiClient } from '../client/api.ts';
import { ProfileStore, defaultHome, type ProfileData } from '../client/profile.ts';
import { userPath } from './paths.ts';
import { UsageError } from './usage.ts';

export type FlagValue = string | string[] | boolean;

/** A command's operands and the flags given on its command line. */
export interface CommandInput {
  args: string[];
  /** Given flags only; absent ones are undefined. */
  flags: Record<string, FlagValue>;
  /** Every long flag name the command declares. */
  declared: ReadonlySet<string>;
}

export interface CliContext extends CommandInput {
  server: string;
  profileName: string;
  json: boolean;
  store: ProfileStore;
  out: (text: string) => void;
  err: (text: string) => void;
}

export interface GlobalFlags {
  server?: string;
  profile?: string;
  home?: string;
  json?: boolean;
}

export const DEFAULT_SERVER = 'http://127.0.0.1:8787/v1';

/**
 * The daemon's API URL from --server (or AGENT_WALLET_URL): `/v1` is added to a bare origin
 * (`http://127.0.0.1:8787` or `…/`); another path must end in /v1, since the daemon may sit under
 * a prefix behind a proxy and only the user knows where.
 */
export function apiUrl(server: string): string {
  let url: URL | null = null;
  try {
    url = /^https?:\/\//.test(server) ? new URL(server) : null;
  } catch {
    // Not a URL: said below.
  }
  if (!url) throw new UsageError(`--server must be an http(s) URL ending in /v1, got "${server}"`);
  const path = url.pathname.replace(/\/+$/, '');
  if (path === '' && !url.search && !url.hash) return `${url.origin}/v1`;
  if (!path.endsWith('/v1')) throw new UsageError(`--server must be the daemon's API URL, ending in /v1: did you mean ${url.origin}${path}/v1? (got "${server}")`);
  return server.replace(/\/+$/, '');
}

/** The context of an agent or merchant command; flags win over the environment. */
export function cliContext(globals: GlobalFlags, input: CommandInput, env: Record<string, string | undefined> = process.env): CliContext {
  return {
    server: apiUrl(globals.server ?? (env.AGENT_WALLET_URL || DEFAULT_SERVER)),
    profileName: globals.profile ?? (env.AGENT_WALLET_PROFILE || 'default'),
    json: globals.json === true,
    store: new ProfileStore(globals.home ?? userPath(defaultHome(env)), env.AGENT_WALLET_PASSPHRASE || undefined),
    ...input,
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
  };
}

/** The profile and a client authenticated with its key. */
export function profileClient(ctx: CliContext): { profile: ProfileData; api: ApiClient } {
  const profile = ctx.store.load(ctx.profileName);
  // --server (or AGENT_WALLET_URL) overrides the URL stored at registration only when given explicitly.
  const server = ctx.server === DEFAULT_SERVER ? profile.server_url : ctx.server;
  return { profile, api: new ApiClient(server, profile.api_key) };
}

/**
 * The flags a body reads, typed by `spec` (their kinds as declared to commander). A name the
 * command did not declare is a programming error, caught by the first run of the command.
 */
export function commandFlags<const S extends Record<string, 'string' | 'boolean' | 'strings'>>(
  input: CommandInput,
  spec: S,
): { flags: { [K in keyof S]?: S[K] extends 'boolean' ? boolean : S[K] extends 'strings' ? string[] : string }; positional: string[] } {
  const flags: Record<string, FlagValue> = {};
  for (const name of Object.keys(spec)) {
    if (!input.declared.has(name)) throw new Error(`the command reads --${name} but does not declare it`);
    const value = input.flags[name];
    if (value !== undefined) flags[name] = value;
  }
  return { flags: flags as never, positional: input.args };
}
