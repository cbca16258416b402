/**
 * `agent-wallet merchant …` (DESIGN §11): merchant account calls on /v1/merchant. The merchant
 * key is kept in a merchant profile, `<home>/merchants/<profile>.json` (0600), written by
 * `merchant register`. Global flags (--server, --profile, --json, --home) work as for agents.
 */
import { ApiClient } from '../client/api.ts';
import { MerchantProfileStore } from '../client/merchant-profile.ts';
import { cliContext, commandFlags, DEFAULT_SERVER, type CliContext } from './context.ts';
import { EXIT, printData, printError, progress } from './output.ts';
import { UsageError } from './usage.ts';
import { requestCommand } from './earning-commands.ts';
import { eventsCommand } from './payment-commands.ts';

type Command = (ctx: CliContext, store: MerchantProfileStore) => Promise<number>;

/** Usage text of `agent-wallet merchant`. */
export const MERCHANT_USAGE = `usage: agent-wallet merchant <command> [--profile NAME] [--server URL] [--json] [--home DIR]
  register --name N --username U --payout-address ADDRESS [--webhook-url URL]
  info | balance
  verify REFERENCE [--expected-amount A]
  history [--limit N] [--offset N] [--since ISO-TIME]
  set-webhook URL | rotate-secret
  deliveries [--limit N] [--offset N] | redeliver DELIVERY_ID
  request create|get|list|cancel|send …   paylinks paying the payout address (see: merchant request)
  events [--unread] [--since ID|TIME] [--wait S] [--type T]… | events read IDS…|--all`;

/** A client with the profile's merchant key; an explicit --server overrides the stored URL. */
function merchantClient(ctx: CliContext, store: MerchantProfileStore): ApiClient {
  const profile = store.load(ctx.profileName);
  return new ApiClient(ctx.server === DEFAULT_SERVER ? profile.server_url : ctx.server, profile.api_key);
}

function intFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,7}$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${value}"`);
  return Number(value);
}

/** A command that calls one action with the merchant key and prints its data. */
function simple(action: string, usage: string, arity: number, params: (positional: string[]) => Record<string, unknown> = () => ({})): Command {
  return async (ctx, store) => {
    const { positional } = commandFlags(ctx.args, {});
    if (positional.length !== arity) throw new UsageError(`usage: agent-wallet merchant ${usage}`);
    printData(ctx, await merchantClient(ctx, store).call('merchant', action, params(positional)));
    return EXIT.ok;
  };
}

const COMMANDS: Record<string, Command> = {
  register: async (ctx, store) => {
    const { flags, positional } = commandFlags(ctx.args, { name: 'string', username: 'string', 'payout-address': 'string', 'webhook-url': 'string' });
    if (!flags.name || !flags.username || !flags['payout-address'] || positional.length > 0) {
      throw new UsageError('usage: agent-wallet merchant register --name N --username U --payout-address ADDRESS [--webhook-url URL]');
    }
    if (store.exists(ctx.profileName)) throw new UsageError(`merchant profile "${ctx.profileName}" already exists in ${store.dir}; pass --profile NAME for another merchant`);
    const data = await new ApiClient(ctx.server).call<Record<string, unknown>>('merchant', 'register', {
      name: flags.name,
      username: flags.username,
      payout_address: flags['payout-address'],
      ...(flags['webhook-url'] ? { webhook_url: flags['webhook-url'] } : {}),
    });
    const path = store.save(ctx.profileName, {
      version: 1,
      server_url: ctx.server,
      merchant_id: String(data.merchant_id),
      username: String(data.username),
      name: String(data.name),
      payout_address: String(data.payout_address),
      api_key: String(data.api_key),
      created_at: new Date().toISOString(),
    });
    progress(ctx, `merchant API key saved to ${path} (mode 0600)`);
    printData(ctx, { ...data, profile: ctx.profileName, profile_path: path }, 'Merchant registered.');
    return EXIT.ok;
  },
  info: simple('info', 'info', 0),
  balance: simple('balance', 'balance', 0),
  verify: async (ctx, store) => {
    const { flags, positional } = commandFlags(ctx.args, { 'expected-amount': 'string' });
    if (positional.length !== 1) throw new UsageError('usage: agent-wallet merchant verify REFERENCE [--expected-amount A]');
    const params = { reference: positional[0], ...(flags['expected-amount'] ? { expected_amount: flags['expected-amount'] } : {}) };
    printData(ctx, await merchantClient(ctx, store).call('merchant', 'verify', params));
    return EXIT.ok;
  },
  history: async (ctx, store) => {
    const { flags, positional } = commandFlags(ctx.args, { limit: 'string', offset: 'string', since: 'string' });
    if (positional.length > 0) throw new UsageError('usage: agent-wallet merchant history [--limit N] [--offset N] [--since ISO-TIME]');
    const params = { limit: intFlag('limit', flags.limit), offset: intFlag('offset', flags.offset), since: flags.since };
    printData(ctx, await merchantClient(ctx, store).call('merchant', 'history', JSON.parse(JSON.stringify(params))));
    return EXIT.ok;
  },
  'set-webhook': simple('set_webhook', 'set-webhook URL', 1, ([url]) => ({ url })),
  'rotate-secret': simple('rotate_webhook_secret', 'rotate-secret', 0),
  deliveries: async (ctx, store) => {
    const { flags, positional } = commandFlags(ctx.args, { limit: 'string', offset: 'string' });
    if (positional.length > 0) throw new UsageError('usage: agent-wallet merchant deliveries [--limit N] [--offset N]');
    const params = { limit: intFlag('limit', flags.limit), offset: intFlag('offset', flags.offset) };
    printData(ctx, await merchantClient(ctx, store).call('merchant', 'webhook_deliveries', JSON.parse(JSON.stringify(params))));
    return EXIT.ok;
  },
  redeliver: simple('redeliver', 'redeliver DELIVERY_ID', 1, ([id]) => ({ delivery_id: id })),
  request: (ctx, store) => requestCommand(ctx, { endpoint: 'merchant', prefix: 'agent-wallet merchant', api: () => merchantClient(ctx, store) }),
  events: (ctx, store) => eventsCommand(ctx, { endpoint: 'merchant', prefix: 'agent-wallet merchant', api: () => merchantClient(ctx, store) }),
};

/** `agent-wallet merchant SUBCOMMAND …`; returns the exit code. */
export async function merchantCommand(argv: string[]): Promise<number> {
  const ctx = cliContext(argv);
  const [name, ...rest] = ctx.args;
  const command = name === undefined ? undefined : COMMANDS[name];
  if (!command) {
    if (name === undefined || name === 'help' || name === '--help') {
      ctx.out(`${MERCHANT_USAGE}\n`);
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    return printError(ctx, new UsageError(`unknown merchant command "${name}"\n${MERCHANT_USAGE}`));
  }
  try {
    return await command({ ...ctx, args: rest }, new MerchantProfileStore(ctx.store.home));
  } catch (err) {
    return printError(ctx, err);
  }
}
