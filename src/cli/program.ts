/**
 * The command tree of `agent-wallet` on commander (DESIGN §11): help on every command and
 * `help COMMAND` (stdout, exit 0), "did you mean" on a mistyped command or flag (exit 2),
 * `completion bash|zsh|fish`, `--version`. Bodies are imported by the command that runs.
 */
import { Command, CommanderError, Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { VERSION } from '../version.ts';
import { addAdminCommands } from './admin-program.ts';
import { addAgentCommands } from './agent-program.ts';
import { EXIT_CODES, GLOBAL_FLAGS, helpFooter, onlyTree, withGlobals } from './define.ts';
import { addMerchantCommands } from './merchant-program.ts';
import { addOwnerCommands } from './owner-program.ts';
import { userPath } from './paths.ts';
import { parsePort, UsageError } from './usage.ts';

const ALL_EXITS = Object.keys(EXIT_CODES) as (keyof typeof EXIT_CODES)[];

/**
 * Builds the program; `done` receives the exit code of the command that ran. Only the top-level
 * commands `wants` names are declared in full (see onlyTree); the others by name and summary.
 */
export function buildProgram(done: (code: number) => void, json: boolean, wants: (name: string) => boolean = () => true): Command {
  const program = new Command('agent-wallet')
    .description('USDC wallets on Solana for AI agents, under 2-of-2 FROST custody.\nAgent, merchant and owner commands take --server URL, --profile NAME, --json and --home DIR before or after their name.')
    .version(VERSION, '-v, --version', 'print the version')
    // Flags after a command name belong to that command (`withdraw confirm ID --json`).
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({
      writeOut: (t) => void process.stdout.write(t),
      writeErr: (t) => void process.stderr.write(t),
      // With --json the error goes out as the envelope on stdout instead (runProgram).
      outputError: (t, write) => {
        if (!json) write(t);
      },
    });
  // The global flags before the command (`agent-wallet --profile shop info`): parsed here, read by
  // the command (clientAction, inputOf walk up to it); one the command does not take is a usage error.
  withGlobals(program);
  program.hook('preAction', (root, action) => {
    for (const flag of GLOBAL_FLAGS) {
      if (root.getOptionValueSource(flag) !== 'cli') continue;
      let declared = false;
      for (let c = action as CommandUnknownOpts | null; c && c !== (root as CommandUnknownOpts); c = c.parent) declared ||= c.options.some((o) => o.long === `--${flag}`);
      if (!declared) root.error(`error: --${flag} does not apply to '${commandPath(action as CommandUnknownOpts)}'`, { code: 'agent-wallet.globalFlag', exitCode: 2 });
    }
  });
  const tree = onlyTree(program, wants);
  helpFooter(program, ['agent-wallet serve', 'agent-wallet register --name "Research bot" --owner-email me@example.com', 'agent-wallet pay alice 5', 'agent-wallet help pay'], ALL_EXITS);

  const serve = tree
    .command('serve')
    .description('run the daemon: HTTP API, web pages, jobs, FROST coordinator, SQLite ledger (default: simnet, 127.0.0.1:8787, ./data)')
    .option('--config <file>', 'config file (env AGENT_WALLET_CONFIG; default <data-dir>/config.toml)', userPath)
    .option('--data-dir <dir>', 'data directory (env AGENT_WALLET_DATA_DIR; default ./data)', userPath)
    .option('--port <n>', 'listen port (0: any free port)')
    .option('--host <host>', 'listen address')
    .option('--simnet-port <n>', "the embedded chain's RPC port (default 8899; 0: any free port)")
    .action(async (opts) => {
      const [{ serveCommand }, { DataDirBusyError }] = await Promise.all([import('../daemon/serve.ts'), import('../daemon/lock.ts')]);
      try {
        done(await serveCommand({ configFile: opts.config, dataDir: opts.dataDir, port: parsePort('--port', opts.port), host: opts.host, simnetPort: parsePort('--simnet-port', opts.simnetPort) }));
      } catch (err) {
        // Another daemon holds the data dir: its message says what to do; no stack trace.
        if (!(err instanceof DataDirBusyError)) throw err;
        process.stderr.write(`agent-wallet: ${err.message}\n`);
        done(1);
      }
    });
  helpFooter(serve, ['agent-wallet serve --data-dir /var/lib/agent-wallet --port 8787'], ['ok', 'error', 'usage']);

  addAgentCommands(tree, done);
  addMerchantCommands(tree, done);
  addAdminCommands(tree, done);
  addOwnerCommands(tree, done);

  const simnet = tree
    .command('simnet')
    .description('the embedded Solana chain alone (JSON-RPC, USDC at the devnet mint); the fault flags make it act as a hosted provider on a busy mainnet')
    .option('--port <n>', 'RPC port (default 8899)')
    .option('--data-dir <dir>', 'keeps the chain state in <dir>/simnet (default ./data)', userPath)
    .option('--slot-ms <ms>', 'slot time (default 400, at least 10)')
    .option('--congestion-floor <microLamports>', 'the lowest priority fee that lands')
    .option('--rate-limit <rps>', 'answer 429 above this many requests a second')
    .addOption(new Option('--no-retry-after', 'no Retry-After header on 429 (needs --rate-limit)'))
    .option('--status-lag-slots <n>', 'signature statuses lag this many slots')
    .action(async (opts) => {
      const { simnetCommand } = await import('./simnet-command.ts');
      done(await simnetCommand(opts));
    });
  helpFooter(simnet, ['agent-wallet simnet --port 8899 --rate-limit 10 --congestion-floor 1000'], ['ok', 'error', 'usage']);

  const version = tree
    .command('version')
    .description('print the version (also --version)')
    .action(() => {
      process.stdout.write(`${VERSION}\n`);
      done(0);
    });
  helpFooter(version, ['agent-wallet version'], ['ok']);

  const completion = tree
    .command('completion')
    .description('print a shell completion script')
    .addArgument(program.createArgument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish'] as const))
    .action(async (shell) => {
      const { completionScript } = await import('./completion.ts');
      process.stdout.write(completionScript(program, shell));
      done(0);
    });
  helpFooter(completion, ['source <(agent-wallet completion bash)', 'agent-wallet completion fish > ~/.config/fish/completions/agent-wallet.fish'], ['ok', 'usage']);
  return program;
}

/** `owner recover status` for that command. */
function commandPath(cmd: CommandUnknownOpts): string {
  const names: string[] = [];
  for (let c: CommandUnknownOpts | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The command line without the global flags before the command (`--profile shop info` → `info`). */
function afterGlobals(argv: string[]): string[] {
  let i = 0;
  while (i < argv.length) {
    const word = argv[i]!;
    const name = word.startsWith('--') ? word.slice(2).split('=')[0]! : '';
    if (!(GLOBAL_FLAGS as readonly string[]).includes(name)) break;
    i += name === 'json' || word.includes('=') ? 1 : 2;
  }
  return argv.slice(i);
}

/** The top-level commands this command line can run: all for the overview and completion, none for --version. */
function wanted(argv: string[]): (name: string) => boolean {
  const [first, second] = afterGlobals(argv);
  if (first === '--version' || first === '-v') return () => false;
  if (first === undefined || first.startsWith('-') || first === 'completion' || (first === 'help' && second === undefined)) return () => true;
  const name = first === 'help' ? second : first;
  return (n) => n === name;
}

/** Runs `agent-wallet ARGV`; resolves to the exit code. Usage errors are exit 2 (with --json: the envelope). */
export async function runProgram(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  let code = 0;
  const program = buildProgram(
    (c) => {
      code = c;
    },
    json,
    wanted(argv),
  );
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.exitCode === 0) return 0;
    if (json) {
      const { printError } = await import('./output.ts');
      const out = { json, out: (t: string) => void process.stdout.write(t), err: (t: string) => void process.stderr.write(t) };
      return printError(out, new UsageError(err.message.replace(/^error: /, '')));
    }
    return 2;
  }
}
