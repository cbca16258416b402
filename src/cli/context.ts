/**
 * Global flags of the command-line client (DESIGN §11): --server, --profile, --json, --home,
 * with their environment fallbacks. They may appear anywhere on the command line.
 */
import { ApiClient } from '../client/api.ts';
import { ProfileStore, defaultHome, type ProfileData } from '../client/profile.ts';
import { UsageError } from './usage.ts';

export interface CliContext {
  server: string;
  profileName: string;
  json: boolean;
  store: ProfileStore;
  /** Arguments left after the global flags, command name removed. */
  args: string[];
  out: (text: string) => void;
  err: (text: string) => void;
}

export const DEFAULT_SERVER = 'http://127.0.0.1:8787/v1';

/** Splits the global flags from `argv` (which starts after the command name). */
export function cliContext(argv: string[], env: Record<string, string | undefined> = process.env): CliContext {
  const args: string[] = [];
  let server = env.AGENT_WALLET_URL || DEFAULT_SERVER;
  let profileName = env.AGENT_WALLET_PROFILE || 'default';
  let home = defaultHome(env);
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || (inline === undefined && v.startsWith('--'))) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--server') server = value();
    else if (flag === '--profile') profileName = value();
    else if (flag === '--home') home = value();
    else if (flag === '--json') json = true;
    else args.push(a);
  }
  if (!/^https?:\/\//.test(server)) throw new UsageError(`--server must be an http(s) URL ending in /v1, got "${server}"`);
  return {
    server: server.replace(/\/+$/, ''),
    profileName,
    json,
    store: new ProfileStore(home, env.AGENT_WALLET_PASSPHRASE || undefined),
    args,
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

/** Parses the command's own flags; unknown flags are a usage error. */
export function commandFlags<const S extends Record<string, 'string' | 'boolean' | 'strings'>>(
  args: string[],
  spec: S,
): { flags: { [K in keyof S]?: S[K] extends 'boolean' ? boolean : S[K] extends 'strings' ? string[] : string }; positional: string[] } {
  const flags: Record<string, unknown> = {};
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq === -1 ? undefined : eq);
    const kind = spec[name];
    if (!kind) throw new UsageError(`unknown flag --${name}`);
    if (kind === 'boolean') {
      flags[name] = true;
      continue;
    }
    const v = eq === -1 ? args[++i] : a.slice(eq + 1);
    if (v === undefined) throw new UsageError(`--${name} needs a value`);
    if (kind === 'strings') flags[name] = [...((flags[name] as string[] | undefined) ?? []), v];
    else flags[name] = v;
  }
  return { flags: flags as never, positional };
}
