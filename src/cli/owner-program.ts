/**
 * The owner's commands (DESIGN §4.1, §7), run on the owner's own machine with an owner API token:
 * the parts of owning a wallet that must not run in a page the daemon serves.
 */
import type { Command, CommandUnknownOpts } from '@commander-js/extra-typings';
import { clientAction, type Done } from './agent-program.ts';
import { AGENT_EXITS, helpFooter, withGlobals } from './define.ts';
import { userPath, userPathOrUrl } from './paths.ts';

/** The owner group's flags: the agent's globals (--server, --json, --home) and the owner token. */
function ownerGlobals<C extends CommandUnknownOpts>(cmd: C) {
  return withGlobals(cmd).option('--owner-token <token>', 'an owner API token, wallet_owner_… (env AGENT_WALLET_OWNER_TOKEN; mint one on /dashboard/tokens)');
}

export function addOwnerCommands(program: Command, done: Done): void {
  const recovery = async () => (await import('./owner-recovery-commands.ts')).OWNER_RECOVERY_COMMANDS;
  const owner = ownerGlobals(program.command('owner').description("the owner's commands, on the owner's own machine: the API key, fund requests, the recovery kit, the sweep, the decision log")) as unknown as Command;
  helpFooter(owner, ['agent-wallet owner recovery start wal_…', 'agent-wallet owner recover sweep --kit kit.json --to <your address>'], AGENT_EXITS);
  const rec = ownerGlobals(owner.command('recovery').description('your recovery kit: a third share of the wallet key, made on this machine')) as unknown as Command;
  helpFooter(rec, ['agent-wallet owner recovery start wal_…'], AGENT_EXITS);
  const sub = (name: string, summary: string, example: string, setup: (c: CommandUnknownOpts) => CommandUnknownOpts) =>
    helpFooter(setup(ownerGlobals(rec.command(name).description(summary)) as unknown as CommandUnknownOpts).action(clientAction(done, async () => (await recovery())[name]!)), [example], AGENT_EXITS);
  sub('start', "start an enrollment: prints the code to hand to the agent's machine", 'agent-wallet owner recovery start wal_…', (c) => c.argument('<walletId>', 'the wallet'));
  sub('finish', "collect both halves, check them against the wallet's key and write the passphrase-sealed kit", 'agent-wallet owner recovery finish rce_… --out kit.json --wait 300', (c) =>
    c.argument('<enrollmentId>', 'from owner recovery start').option('--out <file>', 'where to write the kit (never over a file)', userPath).option('--wait <seconds>', "wait this long for the agent's half"),
  );
  sub('status', 'whether the wallet has an enrolled kit, its fingerprint and date', 'agent-wallet owner recovery status wal_…', (c) => c.argument('<walletId>', 'the wallet'));
  sub('allow-refresh', "let the agent refresh the key shares once within the hour, superseding your kit (when it leaked)", 'agent-wallet owner recovery allow-refresh wal_…', (c) => c.argument('<walletId>', 'the wallet'));

  const evidence = async () => (await import('./owner-evidence-commands.ts')).OWNER_EVIDENCE_COMMANDS;
  const evidenceSub = (name: string, summary: string, example: string, setup: (c: CommandUnknownOpts) => CommandUnknownOpts) =>
    helpFooter(setup(ownerGlobals(owner.command(name).description(summary)) as unknown as CommandUnknownOpts).action(clientAction(done, async () => (await evidence())[name]!)), [example], AGENT_EXITS);
  evidenceSub('export-log', "write a wallet's hash-chained decision log (JSONL, ends at a signed head)", 'agent-wallet owner export-log wal_… --out log.jsonl', (c) =>
    c.argument('<walletId>', 'the wallet').option('--out <file>', 'where to write it (never over a file)', userPath).option('--from <isoTime>', 'rows at or after this time').option('--to <isoTime>', 'rows before this time'),
  );
  evidenceSub('verify-log', 'check an exported decision log offline: the chain of hashes, the signed heads and the signed range; names the first bad row', 'agent-wallet owner verify-log log.jsonl --key https://wallet.example.com/.well-known/agent-wallet/log-key', (c) =>
    c.argument('<file>', 'the exported log').option('--key <fileOrUrl>', "the daemon's log key (JWKS): its /.well-known/agent-wallet/log-key URL or a saved copy; without it nothing is checked against the daemon's key (exit 1)", userPathOrUrl).option('--rpc <url>', 'a Solana RPC: also check each completed payment on chain: what the payee and the fee account were credited, and what left the wallet'),
  );

  const wallets = async () => (await import('./owner-wallet-commands.ts')).OWNER_WALLET_COMMANDS;
  const walletSub = (name: string, summary: string, example: string, setup: (c: CommandUnknownOpts) => CommandUnknownOpts) =>
    helpFooter(setup(ownerGlobals(owner.command(name).description(summary)) as unknown as CommandUnknownOpts).action(clientAction(done, async () => (await wallets())[name]!)), [example], AGENT_EXITS);
  walletSub('rotate-key', "give the wallet's agent a new API key: the old key and every export are refused from now on; prints the key once and how the agent stores it", 'agent-wallet owner rotate-key wal_…', (c) =>
    c.argument('<walletId>', 'the wallet'),
  );
  const fundRequests = walletSub('fund-requests', "your agents' fund requests, newest first, each with its fund page; decline one with fund-requests decline", 'agent-wallet owner fund-requests --status open', (c) =>
    c
      .argument('[walletId]', 'only this wallet')
      .option('--status <status>', 'open, fulfilled or declined')
      .option('--limit <n>', 'page size')
      .option('--offset <n>', 'rows to skip'),
  );
  helpFooter(
    ownerGlobals((fundRequests as unknown as Command).command('decline').description('decline an open fund request; the agent gets a fund_request.declined event with your reason'))
      .argument('<fundRequestId>', 'the request (fr_…)')
      .option('--reason <text>', 'why, in a line (1–200 characters): the agent reads it')
      .action(clientAction(done, async () => (await wallets())['fund-requests decline']!)),
    ['agent-wallet owner fund-requests decline fr_… --reason "Use the credits you have first"'],
    AGENT_EXITS,
  );

  walletSub('paylinks', "your agents' paylinks, newest first, each with its checkout page", 'agent-wallet owner paylinks --status open', (c) =>
    c
      .argument('[walletId]', 'only this wallet')
      .option('--status <status>', 'open, paid, cancelled or expired')
      .option('--limit <n>', 'page size')
      .option('--offset <n>', 'rows to skip'),
  );

  const recoverBodies = async () => (await import('./owner-recovery-commands.ts')).OWNER_RECOVER_COMMANDS;
  const recover = ownerGlobals(owner.command('recover').description("sweep a wallet with your kit and the daemon when the agent's key is lost")) as unknown as Command;
  helpFooter(recover, ['agent-wallet owner recover sweep --kit kit.json --to <your address>'], AGENT_EXITS);
  const sweepSub = (name: string, summary: string, example: string, exits: typeof AGENT_EXITS, setup: (c: CommandUnknownOpts) => CommandUnknownOpts) =>
    helpFooter(setup(ownerGlobals(recover.command(name).description(summary)) as unknown as CommandUnknownOpts).action(clientAction(done, async () => (await recoverBodies())[name]!)), [example], exits);
  sweepSub('sweep', "announce a sweep of the whole balance to your address (the agent's key is revoked; signable after the delay), or sign it once the delay passed", 'agent-wallet owner recover sweep --kit kit.json --to <your address>', ['ok', 'error', 'usage', 'auth', 'approval'], (c) =>
    c.option('--kit <file>', 'your recovery kit', userPath).option('--to <address>', 'where the balance goes'),
  );
  sweepSub('cancel', 'cancel a sweep not signed yet', 'agent-wallet owner recover cancel rsw_…', AGENT_EXITS, (c) => c.argument('<sweepId>', 'the sweep'));
  sweepSub('status', "the wallet's sweeps", 'agent-wallet owner recover status wal_…', AGENT_EXITS, (c) => c.argument('<walletId>', 'the wallet'));
}
