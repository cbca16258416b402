/**
 * `agent-wallet merchant …` (DESIGN §11): merchant account calls on /v1/merchant. The merchant
 * key is kept in a merchant profile, `<home>/merchants/<profile>.json` (0600), written by
 * `merchant register`. Global flags (--server, --profile, --json, --home) work as for agents.
 */
import { ApiClient } from '../client/api.ts';
import { MerchantProfileStore } from '../client/merchant-profile.ts';
import { commandFlags, DEFAULT_SERVER, type CliContext } from './context.ts';
import { EXIT, printData, progress } from './output.ts';
import { parsePort, UsageError } from './usage.ts';
import { requestCommand } from './earning-commands.ts';
import { eventsCommand } from './payment-commands.ts';

export type Command = (ctx: CliContext, store: MerchantProfileStore) => Promise<number>;

interface SaleFees {
  fee_bps: number;
  fee_min: number;
  credit_limit: number;
  accrued: number;
  paid: number;
  owed: number;
  sales_refused: boolean;
  invoice: { invoice_id: string; status: string; amount: number; received: number; solana_pay_url: string | null } | null;
}

/** `merchant fees` for a person: what is owed, whether sales are refused, and how to pay. */
function saleFeesText(f: SaleFees): string {
  const lines = [
    `Sale fees: ${f.fee_bps / 100} % of each x402 sale${f.fee_min > 0 ? ` (at least ${f.fee_min} USDC)` : ''}, owed to the operator.`,
    `Owed ${f.owed} USDC (accrued ${f.accrued}, paid ${f.paid}); credit limit ${f.credit_limit} USDC.`,
  ];
  if (f.sales_refused) lines.push('Your sales are REFUSED until you pay what you owe.');
  const i = f.invoice;
  if (i) lines.push(`Invoice ${i.invoice_id}: ${i.status}, ${i.amount} USDC, ${i.received} received.`);
  if (i?.solana_pay_url) lines.push(`Pay it from any Solana wallet: ${i.solana_pay_url}`);
  else if (f.owed > 0) lines.push('Get an invoice: agent-wallet merchant fees --invoice');
  return `${lines.join('\n')}\n`;
}

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
function simple(action: string, params: (positional: string[]) => Record<string, unknown> = () => ({})): Command {
  return async (ctx, store) => {
    const { positional } = commandFlags(ctx, {});
    printData(ctx, await merchantClient(ctx, store).call('merchant', action, params(positional)));
    return EXIT.ok;
  };
}

export const MERCHANT_COMMANDS: Record<string, Command> = {
  register: async (ctx, store) => {
    const { flags } = commandFlags(ctx, { name: 'string', username: 'string', 'payout-address': 'string', 'webhook-url': 'string' });
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
  info: simple('info'),
  balance: simple('balance'),
  verify: async (ctx, store) => {
    const { flags, positional } = commandFlags(ctx, { 'expected-amount': 'string' });
    const params = { reference: positional[0], ...(flags['expected-amount'] ? { expected_amount: flags['expected-amount'] } : {}) };
    printData(ctx, await merchantClient(ctx, store).call('merchant', 'verify', params));
    return EXIT.ok;
  },
  history: async (ctx, store) => {
    const { flags } = commandFlags(ctx, { limit: 'string', offset: 'string', since: 'string' });
    const params = { limit: intFlag('limit', flags.limit), offset: intFlag('offset', flags.offset), since: flags.since };
    const data = await merchantClient(ctx, store).call<{ items: Record<string, unknown>[] }>('merchant', 'history', JSON.parse(JSON.stringify(params)));
    // A row says when, how much, who paid (username, else address), for what, and a refund due.
    const rows = ctx.json ? data : { ...data, items: data.items.map((p) => ({ ...p, payer: p.payer ?? p.payer_address })) };
    printData(ctx, rows, undefined, ['paid_at', 'transaction_id', 'amount', 'payer', 'reference', 'via', 'refund_due', 'sale_fee', 'note']);
    return EXIT.ok;
  },
  'set-webhook': simple('set_webhook', ([url]) => ({ url })),
  'rotate-secret': simple('rotate_webhook_secret'),
  deliveries: async (ctx, store) => {
    const { flags } = commandFlags(ctx, { limit: 'string', offset: 'string' });
    const params = { limit: intFlag('limit', flags.limit), offset: intFlag('offset', flags.offset) };
    printData(ctx, await merchantClient(ctx, store).call('merchant', 'webhook_deliveries', JSON.parse(JSON.stringify(params))));
    return EXIT.ok;
  },
  redeliver: simple('redeliver', ([id]) => ({ delivery_id: id })),
  fees: async (ctx, store) => {
    const { flags } = commandFlags(ctx, { invoice: 'boolean' });
    const data = (await merchantClient(ctx, store).call('merchant', flags.invoice ? 'pay_sale_fees' : 'sale_fees', {})) as SaleFees;
    if (ctx.json) printData(ctx, data);
    else ctx.out(saleFeesText(data));
    return EXIT.ok;
  },
  gate: async (ctx, store) => {
    const { flags } = commandFlags(ctx, { upstream: 'string', route: 'strings', port: 'string', host: 'string', 'require-payment-id': 'boolean', journal: 'string' });
    const [{ parseRoute }, { startPaywall }] = await Promise.all([import('../domain/paywall-routes.ts'), import('../x402/paywall.ts')]);
    const routes = (flags.route ?? []).map((text) => {
      const parsed = parseRoute(text);
      if (!parsed.ok) throw new UsageError(`--route: ${parsed.reason}`);
      return parsed.route;
    });
    if (!/^https?:\/\//.test(flags.upstream ?? '') || !URL.canParse(flags.upstream!)) throw new UsageError(`--upstream must be an http(s) URL, got "${flags.upstream}"`);
    const profile = store.load(ctx.profileName);
    // Beside the profile: a gate started again with it finds what the last one left halfway.
    const journal = flags.journal ?? store.path(ctx.profileName).replace(/\.json$/, '.gate.sqlite');
    // Listen for signals before starting: a stop during start-up waits for it, then stops cleanly.
    const signalled = new Promise<void>((stop) => {
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
    const gate = await startPaywall({
      server: ctx.server === DEFAULT_SERVER ? profile.server_url : ctx.server,
      merchantKey: profile.api_key,
      upstream: flags.upstream!,
      routes,
      hostname: flags.host ?? '127.0.0.1',
      port: parsePort('--port', flags.port) ?? 8402,
      paymentIdRequired: flags['require-payment-id'] === true,
      journal,
      log: (line) => ctx.err(`${JSON.stringify(line)}\n`),
    });
    printData(ctx, { msg: 'paywall started', url: gate.url, upstream: flags.upstream, pay_to: gate.payTo, routes: routes.map((r) => r.text), journal, warnings: gate.warnings }, `Paywall on ${gate.url} in front of ${flags.upstream}; paid to ${gate.payTo}. Ctrl-C stops it.`);
    // After the start line, on stderr: the gate runs, but these stop a local setup from selling.
    for (const warning of gate.warnings) ctx.err(`warning: ${warning}\n`);
    await signalled;
    await gate.stop();
    return EXIT.ok;
  },
  request: (ctx, store) => requestCommand(ctx, { endpoint: 'merchant', prefix: 'agent-wallet merchant', api: () => merchantClient(ctx, store) }),
  events: (ctx, store) => eventsCommand(ctx, { endpoint: 'merchant', prefix: 'agent-wallet merchant', api: () => merchantClient(ctx, store) }),
};
