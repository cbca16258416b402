/** Client commands of the custody issue: register, info, balance, address, limits-free wallet calls, export (and revoke), import, set-api-key. */
import { readFileSync, writeFileSync } from 'node:fs';
import { ApiClient, ApiError } from '../client/api.ts';
import { registerWallet } from '../client/register.ts';
import { exportWallet, importWallet, parseWalletFile, WalletFileError } from '../client/wallet-file.ts';
import { keyProblem } from '../domain/api-keys.ts';
import { commandFlags, DEFAULT_SERVER, profileClient, type CliContext } from './context.ts';
import { EXIT, printData, progress } from './output.ts';
import { userPath } from './paths.ts';
import { UsageError } from './usage.ts';
import { registerNextStep, withNextStep } from './next-steps.ts';

type Command = (ctx: CliContext) => Promise<number>;

/** A command that calls one action with the profile's key and prints its data. */
function simple(action: string, params: (positional: string[]) => Record<string, unknown> = () => ({})): Command {
  return async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const { api } = profileClient(ctx);
    printData(ctx, await api.call('bot', action, params(positional)));
    return EXIT.ok;
  };
}

export const WALLET_COMMANDS: Record<string, Command> = {
  register: async (ctx) => {
    const { flags } = commandFlags(ctx, { name: 'string', 'owner-email': 'string', 'agent-model': 'string', description: 'string' });
    if (ctx.store.exists(ctx.profileName)) {
      throw new UsageError(`profile "${ctx.profileName}" already exists in ${ctx.store.home}; pass --profile NAME for another wallet`);
    }
    const api = new ApiClient(ctx.server);
    const { response, profile } = await registerWallet(
      api,
      { name: flags.name!, owner_email: flags['owner-email'], agent_model: flags['agent-model'], description: flags.description },
      (step) => progress(ctx, step),
    );
    const path = ctx.store.save(ctx.profileName, profile);
    progress(ctx, `key share and API key saved to ${path} (mode 0600)`);
    const data = { ...response, profile: ctx.profileName, profile_path: path };
    printData(ctx, withNextStep(data, registerNextStep(data, path)), 'Wallet registered.');
    return EXIT.ok;
  },
  info: simple('info'),
  balance: simple('balance'),
  address: simple('get_deposit_address'),
  reconcile: simple('reconcile'),
  rename: simple('update_name', ([name]) => ({ name })),
  'set-owner': simple('update_owner', ([email]) => ({ owner_email: email })),

  export: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { force: 'boolean' });
    if (positional[0] === 'revoke') {
      const { api } = profileClient(ctx);
      printData(ctx, await api.call('bot', 'revoke_export', { export_id: positional[1] }), 'Export revoked: its file can no longer be imported.');
      return EXIT.ok;
    }
    const file = userPath(positional[0]!);
    const { profile, api } = profileClient(ctx);
    const content = await exportWallet(api, profile);
    writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600, flag: flags.force ? 'w' : 'wx' });
    printData(ctx, { file, export_id: content.export_id, wallet_id: content.wallet_id, address: content.address }, 'Export written. It can be imported while the server keeps the export (at most 5 imports a day).');
    return EXIT.ok;
  },

  /**
   * Stores the bot API key the owner got from rotate_api_key in the profile, after checking that it
   * opens this very wallet. The key is read from stdin when not given, so it stays out of `ps`.
   */
  'set-api-key': async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const key = (positional[0] ?? (process.stdin.isTTY ? '' : await new Response(Bun.stdin.stream()).text())).trim();
    const problem = keyProblem(key, 'bot');
    if (problem) throw new UsageError(`that is not a wallet_bot_… key as the owner got it from rotate_api_key or the dashboard: ${problem}`);
    const profile = ctx.store.load(ctx.profileName);
    const server = ctx.server === DEFAULT_SERVER ? profile.server_url : ctx.server;
    const info = await new ApiClient(server, key).call<{ wallet_id: string; username: string }>('bot', 'info').catch((err: unknown) => {
      // Not "run set-api-key" (the advice for a profile whose stored key is refused): this key is the wrong one.
      if (!(err instanceof ApiError && err.errorCode === 'UNAUTHORIZED')) throw err;
      throw new ApiError(
        'UNAUTHORIZED',
        `the daemon at ${server} refused this key; nothing saved`,
        'Check that you passed the whole key the owner got last (rotate_api_key, agent-wallet owner rotate-key or the dashboard): each rotation refuses the keys before it. Ask the owner for the current key, or to rotate it again.',
        err.status,
        {},
      );
    });
    if (info.wallet_id !== profile.wallet_id) throw new Error(`the key opens wallet ${info.wallet_id}, not this profile's ${profile.wallet_id}; nothing saved`);
    ctx.store.update(ctx.profileName, (p) => {
      p.api_key = key;
    });
    printData(ctx, { profile: ctx.profileName, profile_path: ctx.store.path(ctx.profileName), wallet_id: info.wallet_id, username: info.username }, 'API key stored in the profile.');
    return EXIT.ok;
  },

  import: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const file = userPath(positional[0]!);
    let parsed;
    try {
      parsed = parseWalletFile(readFileSync(file, 'utf8'));
    } catch (err) {
      if (err instanceof WalletFileError) throw err;
      throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
    }
    if (ctx.store.exists(ctx.profileName)) throw new UsageError(`profile "${ctx.profileName}" already exists; pass --profile NAME to import under another name`);
    const server = ctx.server.endsWith('/v1') && process.env.AGENT_WALLET_URL === undefined && ctx.flags.server === undefined ? parsed.server_url : ctx.server;
    const profile = await importWallet(new ApiClient(server), parsed);
    const api = new ApiClient(server, profile.api_key);
    const info = await api.call<Record<string, unknown>>('bot', 'info');
    const path = ctx.store.save(ctx.profileName, { ...profile, server_url: server });
    printData(ctx, { profile: ctx.profileName, profile_path: path, wallet_id: info.wallet_id, username: info.username, address: info.address }, 'Wallet imported.');
    return EXIT.ok;
  },
};
