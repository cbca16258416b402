/**
 * Entry point: argv → subcommand, nothing else. Exports nothing (a `--bytecode` compiled entry
 * that exports crashes at start).
 */
import { parseArgs } from 'node:util';
import { ConfigError } from './config.ts';
import { DatabaseOpenError } from './db/open.ts';
import { SecretFileError } from './secret-files.ts';
import { HELP, UsageError, parsePort } from './cli/usage.ts';
import { VERSION } from './version.ts';

async function serve(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { config: { type: 'string' }, 'data-dir': { type: 'string' }, port: { type: 'string' }, host: { type: 'string' } },
    strict: true,
  });
  const { serveCommand } = await import('./daemon/serve.ts');
  return serveCommand({ configFile: values.config, dataDir: values['data-dir'], port: parsePort('--port', values.port), host: values.host });
}

/** Runs an agent command: global flags parsed, errors printed with their exit code; null when `name` is none. */
async function runClient(name: string, argv: string[]): Promise<number | null> {
  const { CLIENT_COMMANDS } = await import('./cli/commands.ts');
  const command = CLIENT_COMMANDS[name];
  if (!command) return null;
  const { cliContext } = await import('./cli/context.ts');
  const { printError } = await import('./cli/output.ts');
  const ctx = cliContext(argv);
  try {
    return await command(ctx);
  } catch (err) {
    return printError(ctx, err);
  }
}

/** `admin …`: local administration on the data directory. */
async function admin(argv: string[]): Promise<number> {
  const { adminCommand } = await import('./cli/admin.ts');
  return adminCommand(argv);
}

/** `merchant …`: merchant account calls with the key of a merchant profile (DESIGN §11). */
async function merchant(argv: string[]): Promise<number> {
  const { merchantCommand } = await import('./cli/merchant-commands.ts');
  return merchantCommand(argv);
}

/** `mcp [--print-config]`: the stdio MCP server over the client (DESIGN §11). */
async function mcp(argv: string[]): Promise<number> {
  const { mcpCommand } = await import('./mcp/server.ts');
  return mcpCommand(argv);
}

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  serve,
  admin,
  merchant,
  mcp,
  simnet: async (argv) => (await import('./cli/simnet-command.ts')).simnetCommand(argv),
  version: async () => {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  },
  help: async () => {
    process.stdout.write(HELP);
    return 0;
  },
};

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '--version' || first === '-v') return COMMANDS.version!([]);
  if (first === undefined || first === '--help' || first === '-h') return COMMANDS.help!([]);
  const command = COMMANDS[first];
  if (command) return command(rest);
  const code = await runClient(first, rest);
  if (code === null) throw new UsageError(`unknown command "${first}"; run "agent-wallet help"`);
  return code;
}

// A reader that went away (`agent-wallet history | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
});

// No top-level await: --bytecode compiles to CommonJS.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const known = err instanceof ConfigError || err instanceof SecretFileError || err instanceof DatabaseOpenError;
    const usage = err instanceof UsageError || (err as { code?: string })?.code?.startsWith?.('ERR_PARSE_ARGS');
    process.stderr.write(`agent-wallet: ${(err as Error).message}\n`);
    if (!known && !usage) process.stderr.write(`${(err as Error).stack ?? ''}\n`);
    process.exitCode = usage ? 2 : 1;
  },
);
