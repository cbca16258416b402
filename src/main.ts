/**
 * Entry point: argv → subcommand (src/cli/program.ts), nothing else. Exports nothing (a
 * `--bytecode` compiled entry that exports crashes at start).
 */
// First: @simplewebauthn/server's certificate code (@peculiar/x509 → tsyringe) needs the Reflect
// metadata polyfill loaded before it, and a bundle evaluates its modules in another order than Bun
// does from source, so the entry loads it before anything else.
import 'reflect-metadata';
import { ConfigError } from './config.ts';
import { DatabaseOpenError } from './db/open.ts';
import { SecretFileError } from './secret-files.ts';
import { runProgram } from './cli/program.ts';
import { UsageError } from './cli/usage.ts';
import { PortInUseError } from './daemon/port-in-use.ts';
import { DataDirBusyError } from './daemon/lock.ts';

// A reader that went away (`agent-wallet history | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
});

// No top-level await: --bytecode compiles to CommonJS.
runProgram(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const known = err instanceof ConfigError || err instanceof SecretFileError || err instanceof DatabaseOpenError || err instanceof PortInUseError || err instanceof DataDirBusyError;
    const usage = err instanceof UsageError;
    process.stderr.write(`agent-wallet: ${(err as Error).message}\n`);
    if (!known && !usage) process.stderr.write(`${(err as Error).stack ?? ''}\n`);
    process.exitCode = usage ? 2 : 1;
  },
);
