/** `agent-wallet merchant …` on commander (DESIGN §11); the bodies are in merchant-commands.ts. */
import type { Command, CommandUnknownOpts } from '@commander-js/extra-typings';
import type { CliContext } from './context.ts';
import { AGENT_EXITS, collect, helpFooter, withGlobals } from './define.ts';
import { userPath } from './paths.ts';
import { addEventsCommands, addRequestCommands, clientAction, type Done } from './agent-program.ts';

/** Runs the merchant body `name` with the profile's merchant key store. */
async function merchantBody(name: string, ctx: CliContext): Promise<number> {
  const [{ MERCHANT_COMMANDS }, { MerchantProfileStore }] = await Promise.all([import('./merchant-commands.ts'), import('../client/merchant-profile.ts')]);
  return MERCHANT_COMMANDS[name]!(ctx, new MerchantProfileStore(ctx.store.home));
}

export function addMerchantCommands(program: Command, done: Done): void {
  // The group takes the global flags too: `merchant --json info` reads as before commander.
  const merchant = withGlobals(program.command('merchant').description('merchant account calls; the key is kept in <home>/merchants/<profile>.json')) as unknown as Command;
  helpFooter(merchant, ['agent-wallet merchant register --name "Cafe" --username cafe --payout-address 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin'], AGENT_EXITS);
  const sub = (name: string, summary: string, example: string, setup: (c: CommandUnknownOpts) => CommandUnknownOpts = (c) => c) => {
    const c = withGlobals(merchant.command(name).description(summary)) as unknown as CommandUnknownOpts;
    helpFooter(setup(c), [`agent-wallet merchant ${example}`], AGENT_EXITS).action(clientAction(done, async () => (ctx) => merchantBody(name, ctx)));
  };
  sub('register', 'register a merchant account and keep its key in a merchant profile', 'register --name "Cafe" --username cafe --payout-address 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin', (c) =>
    c
      .requiredOption('--name <name>', 'the display name')
      .requiredOption('--username <username>', 'the merchant username')
      .requiredOption('--payout-address <address>', 'where payments land')
      .option('--webhook-url <url>', 'signed payment notifications go here'),
  );
  sub('info', 'the merchant account', 'info --json');
  sub('balance', 'the payout address balance', 'balance');
  sub('verify', 'was the order with this payment reference paid (and in full)?', 'verify order-42 --expected-amount 18.5', (c) =>
    c.argument('<reference>', 'the payment reference').option('--expected-amount <usdc>', 'the amount the order should have paid'),
  );
  sub('history', 'payments received', 'history --since 2026-01-01T00:00:00Z', (c) =>
    c.option('--limit <n>', 'page size').option('--offset <n>', 'rows to skip').option('--since <isoTime>', 'only payments after this time'),
  );
  sub('set-webhook', 'set the webhook URL (Standard Webhooks)', 'set-webhook https://shop.example.com/hooks/wallet', (c) => c.argument('<url>', 'the webhook URL'));
  sub('rotate-secret', 'rotate the webhook signing secret', 'rotate-secret');
  sub('deliveries', 'webhook deliveries and their status', 'deliveries --limit 20', (c) => c.option('--limit <n>', 'page size').option('--offset <n>', 'rows to skip'));
  sub('redeliver', 'send a webhook delivery again', 'redeliver whd_123', (c) => c.argument('<deliveryId>', 'the delivery'));
  sub('fees', "the operator's fee on your x402 sales: owed, credit limit, invoice", 'fees --invoice', (c) =>
    c.option('--invoice', 'open (or bring up to date) an invoice for what is owed, with a Solana Pay URL to pay it'),
  );
  sub('gate', 'run an x402 paywall in front of a plain HTTP API: priced routes answer 402 until paid (settled by this daemon)', 'gate --upstream http://127.0.0.1:3000 --route "GET /api/*=0.01" --port 8402', (c) =>
    c
      .requiredOption('--upstream <url>', 'the HTTP API behind the paywall')
      .requiredOption('--route <METHOD /path=price>', 'a priced route, repeatable; * matches any characters, METHOD * any method; the first match prices', collect)
      .option('--port <n>', 'where the paywall listens (default 8402; 0: any free port)')
      .option('--host <host>', 'the address it listens on (default 127.0.0.1)')
      .option('--require-payment-id', 'v2 buyers must send a payment identifier (a resend with it gets the first answer again)')
      .option('--journal <file>', "where the gate keeps paid requests' answers across restarts (default: beside the merchant profile, <profile>.gate.sqlite); one gate a file", userPath),
  );
  addRequestCommands(merchant, done, 'agent-wallet merchant', (ctx) => merchantBody('request', ctx));
  addEventsCommands(merchant, done, 'agent-wallet merchant', (ctx) => merchantBody('events', ctx));
}
