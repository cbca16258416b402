/**
 * The command tree of `agent-wallet` on commander (DESIGN §11): help on every command and
 * `help COMMAND` (stdout, exit 0), "did you mean" on a mistyped command or flag (exit 2),
 * `completion bash|zsh|fish`, `--version`. Bodies are imported by the command that runs.
 */
import { Command, CommanderError, Option } from '@commander-js/extra-typings';
import { VERSION } from '../version.ts';
import { addAdminCommands } from './admin-program.ts';
import { addAgentCommands } from './agent-program.ts';
import { EXIT_CODES, helpFooter, onlyTree } from './define.ts';
import { addMerchantCommands } from './merchant-program.ts';
import { addOwnerCommands } from './owner-program.ts';
import { parsePort, UsageError } from './usage.ts';

const ALL_EXITS = Object.keys(EXIT_CODES) as (keyof typeof EXIT_CODES)[];

/**
 * Builds the program; `done` receives the exit code of the command that ran. Only the top-level
 * commands `wants` names are declared in full (see onlyTree); the others by name and summary.
 */
export function buildProgram(done: (code: number) => void, json: boolean, wants: (name: string) => boolean = () => true): Command {
  const program = new Command('agent-wallet')
    .description('USDC wallets on Solana for AI agents, under 2-of-2 FROST custody.\nAgent commands take --server URL, --profile NAME, --json and --home DIR after their name.')
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
  const tree = onlyTree(program, wants);
  helpFooter(program, ['agent-wallet serve', 'agent-wallet register --name "Research bot" --owner-email me@example.com', 'agent-wallet pay alice 5', 'agent-wallet help pay'], ALL_EXITS);

  const serve = tree
    .command('serve')
    .description('run the daemon: HTTP API, web pages, jobs, FROST coordinator, SQLite ledger (default: simnet, 127.0.0.1:8787, ./data)')
    .option('--config <file>', 'config file (env AGENT_WALLET_CONFIG; default <data-dir>/config.toml)')
    .option('--data-dir <dir>', 'data directory (env AGENT_WALLET_DATA_DIR; default ./data)')
    .option('--port <n>', 'listen port (0: any free port)')
    .option('--host <host>', 'listen address')
    .option('--simnet-port <n>', "the embedded chain's RPC port (default 8899; 0: any free port)")
    .action(async (opts) => {
      const { serveCommand } = await import('../daemon/serve.ts');
      done(await serveCommand({ configFile: opts.config, dataDir: opts.dataDir, port: parsePort('--port', opts.port), host: opts.host, simnetPort: parsePort('--simnet-port', opts.simnetPort) }));
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
    .option('--data-dir <dir>', 'keeps the chain state in <dir>/simnet (default ./data)')
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

/** The top-level commands this command line can run: all for the overview and completion, none for --version. */
function wanted(argv: string[]): (name: string) => boolean {
  const [first, second] = argv;
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
