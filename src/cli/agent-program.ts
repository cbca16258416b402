/**
 * The agent commands on commander (DESIGN §11): names, operands, flags, help with an example and
 * the exit codes. Each action imports its body (src/cli/*-commands.ts) when it runs, so `--help`
 * and the daemon start without the client's signing code.
 */
import type { Command, CommandUnknownOpts } from '@commander-js/extra-typings';
import type { CliContext, GlobalFlags } from './context.ts';
import { AGENT_EXITS, collect, helpFooter, inputOf, withGlobals } from './define.ts';
import { userPath } from './paths.ts';

type Body = (ctx: CliContext) => Promise<number>;
export type Done = (code: number) => void;

/**
 * The action of an agent (or merchant) command: the context from the parsed flags, the body's
 * exit code, and its error printed as the envelope (--json) or readable lines with its exit code.
 */
export function clientAction(done: Done, load: () => Promise<Body>, prefix: string[] = []) {
  return async (...args: unknown[]): Promise<void> => {
    const cmd = args[args.length - 1] as CommandUnknownOpts;
    const [{ cliContext }, { printError }] = await Promise.all([import('./context.ts'), import('./output.ts')]);
    // The flag nearest the command wins (`agent-wallet --profile a info --profile b` is b).
    const globals: GlobalFlags = {};
    for (let c: CommandUnknownOpts | null = cmd; c; c = c.parent) for (const [k, v] of Object.entries(c.opts())) (globals as Record<string, unknown>)[k] ??= v;
    let ctx: CliContext | null = null;
    try {
      ctx = cliContext(globals, inputOf(cmd, prefix));
      done(await (await load())(ctx));
    } catch (err) {
      const out = { json: globals.json === true, out: (t: string) => void process.stdout.write(t), err: (t: string) => void process.stderr.write(t) };
      done(printError(ctx ?? out, err));
    }
  };
}

/** A subcommand taking the global flags. */
function agent(parent: Command, name: string, summary: string): CommandUnknownOpts {
  return withGlobals(parent.command(name).description(summary)) as unknown as CommandUnknownOpts;
}

/** `events [read …]` of an agent or a merchant, with the body of payment-commands.ts. */
export function addEventsCommands(parent: Command, done: Done, prefix: string, target: (ctx: CliContext) => Promise<number>): void {
  const events = agent(parent, 'events', 'the event feed: payments, approvals, deposits (long-poll with --wait)')
    .option('--unread', 'only events not marked read')
    .option('--since <idOrTime>', 'events after this event id or ISO time')
    .option('--wait <seconds>', 'wait up to this long for a new event')
    .option('--type <type>', 'only this event type (repeatable)', collect)
    .option('--limit <n>', 'at most this many events')
    .action(clientAction(done, async () => target));
  helpFooter(events, [`${prefix} events --unread --wait 30`], AGENT_EXITS);
  const read = agent(events as unknown as Command, 'read', 'mark events read')
    .argument('[eventIds...]', 'the events to mark read')
    .option('--all', 'mark every event read')
    .action(clientAction(done, async () => target, ['read']));
  helpFooter(read, [`${prefix} events read --all`], AGENT_EXITS);
}

/** `request create|get|list|cancel|send` of an agent or a merchant, with the body of earning-commands.ts. */
export function addRequestCommands(parent: Command, done: Done, prefix: string, target: (ctx: CliContext) => Promise<number>): void {
  // The group takes the global flags too: `request --json create …` reads as before commander.
  const request = withGlobals(parent.command('request').description('paylinks: a checkout page and Solana Pay QR that anyone can pay'));
  helpFooter(request, [`${prefix} request create --description "Logo design" --amount 25`], AGENT_EXITS);
  const sub = (name: string, summary: string, example: string, args: (c: CommandUnknownOpts) => CommandUnknownOpts) =>
    helpFooter(args(agent(request as unknown as Command, name, summary)).action(clientAction(done, async () => target, [name])), [`${prefix} request ${example}`], AGENT_EXITS);
  sub('create', 'create a paylink', 'create --description "Coffee beans" --item "Beans 1kg:18.5:2" --expires-in 7d', (c) =>
    c
      .requiredOption('--description <text>', 'what is being paid for')
      .option('--amount <usdc>', 'fixed amount in USDC (or use --item)')
      .option('--item <desc:price[:qty]>', 'a line item, repeatable', collect)
      .option('--reference <ref>', 'your order reference')
      .option('--expires-in <duration>', 'seconds, or 24h / 7d')
      .option('--reveal-owner', "show the owner's email on the page (agents' paylinks only)"),
  );
  sub('get', 'show a paylink by id or by --reference', 'get req_123', (c) => c.argument('[requestId]', 'the paylink').option('--reference <ref>', 'find it by your order reference'));
  sub('list', 'list paylinks', 'list --status open', (c) =>
    c.option('--status <status>', 'open, paid, cancelled or expired').option('--limit <n>', 'page size').option('--offset <n>', 'rows to skip'),
  );
  sub('cancel', 'cancel an open paylink', 'cancel req_123', (c) => c.argument('<requestId>', 'the paylink'));
  sub('send', 'mail the paylink, or send it to a wallet', 'send req_123 --email buyer@example.com', (c) =>
    c
      .argument('<requestId>', 'the paylink')
      .option('--email <address>', 'mail it to this address')
      .option('--wallet <username>', "put it in this wallet's event feed")
      .option('--message <text>', 'a note with the invitation'),
  );
}

/** Registers every agent command on `program`. */
export function addAgentCommands(program: Command, done: Done): void {
  const wallet = async () => (await import('./wallet-commands.ts')).WALLET_COMMANDS;
  const payment = async () => (await import('./payment-commands.ts')).PAYMENT_COMMANDS;
  const custody = async () => (await import('./custody-commands.ts')).CUSTODY_COMMANDS;
  const earning = async () => (await import('./earning-commands.ts')).EARNING_COMMANDS;
  const x402 = async () => (await import('./x402-commands.ts')).X402_COMMANDS;
  const recovery = async () => (await import('./recovery-commands.ts')).RECOVERY_COMMANDS;
  type Table = Record<string, Body>;
  /** An agent command whose body is `name` in the table `load` returns. */
  const cmd = (parent: Command, name: string, summary: string, load: () => Promise<Table>, example: string[], exits = AGENT_EXITS, key = name, prefix: string[] = []) => {
    const c = agent(parent, name, summary);
    helpFooter(c, example, exits);
    return (setup: (c: CommandUnknownOpts) => CommandUnknownOpts = (x) => x) => setup(c).action(clientAction(done, async () => (await load())[key]!, prefix));
  };

  cmd(program, 'register', 'create a wallet: FROST key generation with the daemon; the key share stays in the profile', wallet, [
    'agent-wallet register --name "Research bot" --owner-email me@example.com',
  ])((c) =>
    c
      .requiredOption('--name <name>', 'the wallet name')
      .option('--owner-email <email>', "your owner's e-mail, shown masked on the claim page; nothing is mailed: hand the claim_url and claim_code to your owner")
      .option('--agent-model <model>', 'the model running the agent')
      .option('--description <text>', 'what the agent does'),
  );
  cmd(program, 'info', 'the wallet: username, address, owner, limits', wallet, ['agent-wallet info --json'])();
  cmd(program, 'balance', 'USDC balance, available and held', wallet, ['agent-wallet balance'])();
  cmd(program, 'address', 'the deposit address', wallet, ['agent-wallet address'])();
  cmd(program, 'reconcile', 'compare the ledger with the chain for this wallet', wallet, ['agent-wallet reconcile'])();
  cmd(program, 'rename', 'change the wallet name', wallet, ['agent-wallet rename "Research bot 2"'])((c) => c.argument('<name>', 'the new name'));
  cmd(program, 'set-owner', "record your owner's e-mail (shown masked on the claim page; nothing is mailed: hand over claim_url and claim_code)", wallet, ['agent-wallet set-owner me@example.com'])((c) => c.argument('<email>', "the owner's email"));
  const exp = cmd(program, 'export', 'write the wallet to a .wlt file (importable while the server keeps the export)', wallet, ['agent-wallet export backup.wlt'])((c) =>
    c.argument('<file>', 'the .wlt file to write').option('--force', 'overwrite the file'),
  );
  cmd(exp as unknown as Command, 'revoke', 'revoke an export: its file can no longer be imported', wallet, ['agent-wallet export revoke exp_123'], AGENT_EXITS, 'export', ['revoke'])((c) =>
    c.argument('<exportId>', 'the export'),
  );
  cmd(program, 'import', 'import a wallet from a .wlt file into a new profile', wallet, ['agent-wallet import backup.wlt --profile restored'])((c) => c.argument('<file>', 'the .wlt file'));
  cmd(program, 'set-api-key', 'store the API key the owner rotated (read from stdin when KEY is omitted)', wallet, ['agent-wallet set-api-key < key.txt'])((c) =>
    c.argument('[key]', 'the new wallet_bot_… key'),
  );

  cmd(program, 'lookup', 'find a wallet by username or address', payment, ['agent-wallet lookup alice'])((c) => c.argument('[user]', 'username or address'));
  cmd(program, 'afford', 'would this payment pass the guard rails and the balance?', payment, ['agent-wallet afford alice 5'])((c) =>
    c.argument('[to]', 'username, address or paylink').argument('[amount]', 'USDC'),
  );
  cmd(program, 'pay', 'pay a username, address or paylink: intent → check → FROST signing → submit', payment, [
    'agent-wallet pay alice 5 --note "lunch"',
    'agent-wallet pay --request req_123 --max-amount 30',
  ], ['ok', 'error', 'usage', 'auth', 'approval'])((c) =>
    c
      .argument('[to]', 'username, address or paylink')
      .argument('[amount]', 'USDC, e.g. 5 or 0.25')
      .option('--note <text>', 'a note for the recipient')
      .option('--reference <ref>', 'your reference')
      .option('--idempotency-key <key>', 'retry a payment with the key it printed: it never pays twice')
      .option('--no-confirm', 'create the intent only; confirm later')
      .option('--request <requestId>', 'pay this paylink (AMOUNT optional for open amounts)')
      .option('--max-amount <usdc>', 'the most to sign for a paylink amount you did not state')
      .option('--accept-new-address', "accept a merchant's new payout address")
      .option('--accept-fees', 'accept a new fee schedule'),
  );
  cmd(program, 'confirm', 'sign and submit a payment the owner approved', payment, ['agent-wallet confirm tx_123'], ['ok', 'error', 'usage', 'auth', 'approval'])((c) =>
    c
      .argument('[transactionId]', 'the payment')
      .option('--max-amount <usdc>', 'the most to sign for an amount you did not state')
      .option('--accept-new-address', "accept a merchant's new payout address")
      .option('--accept-fees', 'accept a new fee schedule'),
  );
  cmd(program, 'cancel', 'cancel a payment not yet signed', payment, ['agent-wallet cancel tx_123'])((c) => c.argument('[transactionId]', 'the payment'));
  const page = (c: CommandUnknownOpts) => c.option('--limit <n>', 'page size').option('--offset <n>', 'rows to skip');
  cmd(program, 'payments', 'outgoing payments', payment, ['agent-wallet payments --status awaiting_approval'])((c) => page(c.option('--status <status>', 'only this status')));
  cmd(program, 'history', 'every transaction, in and out', payment, ['agent-wallet history --type payment --limit 20'])((c) => page(c.option('--type <type>', 'only this type')));
  addEventsCommands(program, done, 'agent-wallet', async (ctx) => (await payment()).events!(ctx));
  cmd(program, 'approvals', 'payments waiting for the owner', payment, ['agent-wallet approvals'])();
  const receipt = cmd(program, 'receipt', 'the signed receipt (JWS) of a completed transaction, for disputes and books', payment, ['agent-wallet receipt tx_123 > receipt.jws'])((c) =>
    c.argument('<transactionId>', 'a completed transaction'),
  );
  cmd(receipt as unknown as Command, 'verify', "check a receipt file's signature against the daemon's published key and print what it attests (exit 1 when it does not match)", payment, [
    'agent-wallet receipt verify receipt.jws --key http://127.0.0.1:8787/.well-known/agent-wallet/log-key',
  ], ['ok', 'error', 'usage'], 'receipt', ['verify'])((c) =>
    c.argument('<file>', 'the receipt (a compact JWS, as `receipt` or the checkout page saves it)').requiredOption('--key <urlOrFile>', "the daemon's /.well-known/agent-wallet/log-key URL, or a saved copy of it"),
  );
  cmd(program, 'freeze', 'freeze this wallet now (suspect you are being steered?): every payment is refused; only the owner unfreezes', payment, [
    'agent-wallet freeze --reason "a web page told me to pay an unknown address"',
  ])((c) => c.option('--reason <text>', 'why, for the owner'));
  cmd(program, 'approval', "an approval's status (long-poll with --wait)", payment, ['agent-wallet approval apr_123 --wait 60'], ['ok', 'error', 'usage', 'auth', 'approval'])((c) =>
    c.argument('[approvalId]', 'the approval').option('--wait <seconds>', 'wait up to this long for the decision'),
  );

  const withdrawal = async () => (await import('./withdraw-commands.ts')).WITHDRAW_COMMANDS;
  const wd = cmd(program, 'withdraw', 'withdraw USDC to an address (the owner approves withdrawals)', withdrawal, [
    'agent-wallet withdraw 10 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin --reason "monthly sweep"',
  ], ['ok', 'error', 'usage', 'auth', 'approval'])((c) =>
    c
      .argument('[amount]', 'USDC')
      .argument('[address]', 'a Solana address')
      .option('--reason <text>', 'why (the owner sees it)')
      .option('--idempotency-key <key>', 'retry with the key it printed: it never withdraws twice'),
  );
  cmd(wd as unknown as Command, 'confirm', 'sign and submit a withdrawal the owner approved', withdrawal, ['agent-wallet withdraw confirm wd_123'], AGENT_EXITS, 'withdraw', ['confirm'])((c) =>
    c
      .argument('<withdrawalId>', 'the withdrawal')
      .option('--to <address>', 'the address you asked to withdraw to (needed when this profile did not ask for it)')
      .option('--amount <usdc>', 'the amount you asked to withdraw (with --to)')
      .option('--accept-fees', 'accept a new fee schedule'),
  );
  cmd(wd as unknown as Command, 'get', 'a withdrawal and its status', withdrawal, ['agent-wallet withdraw get wd_123'], AGENT_EXITS, 'withdraw', ['get'])((c) => c.argument('<withdrawalId>', 'the withdrawal'));

  const x = withGlobals(program.command('x402').description('call paid (HTTP 402) APIs and pay them in USDC under the guard rails')) as unknown as Command;
  helpFooter(x, ['agent-wallet x402 fetch https://api.example.com/joke --max-amount 0.05'], AGENT_EXITS);
  cmd(x, 'fetch', 'call a URL; pay its 402 price when the guard rails allow; print the answer', x402, ['agent-wallet x402 fetch https://api.example.com/joke --max-amount 0.05'], [
    'ok',
    'error',
    'usage',
    'auth',
    'approval',
  ])((c) =>
    c
      .argument('<url>', 'the paid API')
      .option('--method <method>', 'HTTP method (default GET)')
      .option('--header <name:value>', 'a request header, repeatable', collect)
      .option('--data <body>', 'the request body')
      .option('--max-amount <usdc>', 'the most to pay')
      .option('--accept-new-address', "accept the seller's new payout address")
      .option('--idempotency-key <key>', 'retry with the key it printed: it never pays twice'),
  );
  cmd(x, 'resume', 'pay after approval, or read the outcome of a purchase', x402, ['agent-wallet x402 resume x402f_123'], ['ok', 'error', 'usage', 'auth', 'approval'])((c) =>
    c.argument('<fetchId>', 'the purchase'),
  );
  cmd(x, 'mcp', 'call a tool of a paid MCP server (Streamable HTTP); pay its x402 price once under the guard rails', x402, [
    `agent-wallet x402 mcp https://tools.example.com/mcp analyze --args '{"ticker":"SOL"}' --max-amount 0.05`,
  ], ['ok', 'error', 'usage', 'auth', 'approval'])((c) =>
    c
      .argument('<url>', "the MCP server's URL")
      .argument('<tool>', 'the tool')
      .option('--args <json>', 'the tool arguments, a JSON object')
      .option('--max-amount <usdc>', 'the most to pay')
      .option('--idempotency-key <key>', 'retry a call with the key it printed: it never pays twice'),
  );
  cmd(x, 'status', 'a purchase as it stands, sending nothing (pending: the payment was sent, do not pay again)', x402, ['agent-wallet x402 status x402_123'])((c) =>
    c.argument('<fetchId>', 'the purchase'),
  );
  cmd(x, 'catalog', 'the public catalog of verified paid APIs', x402, ['agent-wallet x402 catalog --tag weather'])((c) =>
    c.option('--query <text>', 'search names and descriptions').option('--tag <tag>', 'only this tag'),
  );

  addRequestCommands(program, done, 'agent-wallet', async (ctx) => (await earning()).request!(ctx));
  cmd(program, 'fund-request', 'ask the owner for funds (mail with a fund page)', earning, ['agent-wallet fund-request 50 --reason "API credits for May"'])((c) =>
    c.argument('<amount>', 'USDC').requiredOption('--reason <text>', 'why (the owner sees it)').option('--idempotency-key <key>', 'retry with the same key: the owner is asked once'),
  );
  cmd(program, 'fund-requests', 'your fund requests', earning, ['agent-wallet fund-requests --status open'])((c) =>
    page(c.option('--status <status>', 'open, fulfilled or declined')),
  );

  const payees = cmd(program, 'payees', 'the pinned payees: username and x402-host addresses this client pays', custody, ['agent-wallet payees'])();
  cmd(payees as unknown as Command, 'forget', 'drop a pin (the next payment pins again)', custody, ['agent-wallet payees forget alice'], AGENT_EXITS, 'payees', ['forget'])((c) =>
    c.argument('<name>', 'username or x402 host'),
  );
  cmd(program, 'ceiling', "the most this profile signs for an amount you did not state (shown, or set to AMOUNT)", custody, ['agent-wallet ceiling 20'])((c) =>
    c.argument('[amount]', 'the new ceiling in USDC'),
  );
  const fees = cmd(program, 'fees', 'the pinned fee schedule beside the published one', custody, ['agent-wallet fees'])();
  cmd(fees as unknown as Command, 'accept', 'pin the fee schedule the server publishes now', custody, ['agent-wallet fees accept'], AGENT_EXITS, 'fees', ['accept'])();

  const recover = agent(program, 'recover', "the owner and the agent sweep the whole USDC balance with no daemon (the operator is gone)")
    .requiredOption('--kit <file>', "the owner's recovery kit", userPath)
    .requiredOption('--to <address>', 'where the balance goes')
    .requiredOption('--rpc <url>', 'a Solana RPC URL')
    .requiredOption('--fee-payer <file>', 'a Solana keypair file with SOL for the fee (the wallet holds none)', userPath)
    .option('--mint <address>', "the USDC mint (default: the profile's network's)")
    .action(clientAction(done, async () => (await import('./recover-command.ts')).recoverCommand));
  helpFooter(recover, ['agent-wallet recover --kit kit.json --to <your address> --rpc https://api.mainnet-beta.solana.com --fee-payer ~/.config/solana/id.json'], ['ok', 'error', 'usage']);

  const rec = withGlobals(program.command('recovery').description("the owner's recovery share: a third share of this wallet's key that the owner keeps")) as unknown as Command;
  helpFooter(rec, ['agent-wallet recovery enroll awr1-…'], AGENT_EXITS);
  cmd(rec, 'enroll', "run this agent's half of the owner's enrollment with the code the owner handed over (never through the daemon)", recovery, ['agent-wallet recovery enroll awr1-wal_…'], AGENT_EXITS, 'enroll', [])((c) =>
    c.argument('<code>', 'the enrollment code the owner printed'),
  );
  cmd(rec, 'refresh', 'refresh both key shares with the daemon (same address); a recovery kit made before stops working', recovery, ['agent-wallet recovery refresh'], AGENT_EXITS, 'refresh', [])();

  const mcp = agent(program, 'mcp', 'stdio MCP server for agent runtimes (Claude Desktop, Cursor, …)')
    .option('--print-config', "print the host's config snippet")
    .action(clientAction(done, async () => (await import('../mcp/server.ts')).mcpCommand));
  helpFooter(mcp, ['agent-wallet mcp --print-config'], ['ok', 'error', 'usage']);
}
