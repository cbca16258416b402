/**
 * `agent-wallet admin catalog …` (DESIGN §11): the operator curates the public x402 catalog on
 * the data directory's ledger, SQLite or [database] url (admin.ts's withLedger). Every entry is probed
 * through the outbound client with the daemon's config (its allow_hosts and timeouts) and stored
 * only when it answers 402 with a Solana exact USDC option for this network.
 *
 *   admin catalog add URL --name N --description D [--tag T]… [--method M] [--json] [--data-dir DIR]
 *   admin catalog list [--all] [--json] [--data-dir DIR]
 *   admin catalog remove URL|ENTRY_ID [--data-dir DIR]
 *   admin catalog verify [--json] [--data-dir DIR]      re-verify every entry now (the daily job's pass)
 */
import { AppError } from '../errors.ts';
import { DatabaseOpenError } from '../db/open.ts';
import { listCatalog, removeCatalogEntry } from '../db/x402.ts';
import { checkName } from '../domain/identity.ts';
import { addEntry, catalogView, normaliseTags, reverifyCatalog } from '../x402/catalog.ts';
import { AdminError } from './admin-network.ts';
import { withLedger } from './admin.ts';
import { commandFlags, type CommandInput } from './context.ts';
import { UsageError } from './usage.ts';

interface CatalogIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: Record<string, string | undefined>;
}

class CatalogError extends Error {
  override readonly name = 'CatalogError';
}

function print(io: CatalogIo, json: boolean | undefined, data: unknown, human: () => void): void {
  if (json) io.out(`${JSON.stringify(data, null, 2)}\n`);
  else human();
}

function line(e: Awaited<ReturnType<typeof catalogView>> & { status?: string; last_error?: string | null }): string {
  const tags = e.tags.length ? `  [${e.tags.join(', ')}]` : '';
  const state = e.status && e.status !== 'verified' ? `  (${e.status}: ${e.last_error ?? 'no reason'})` : '';
  return `${e.name}  ${e.price} USDC  ${e.method} ${e.url}${state}\n  ${e.description}${tags}\n`;
}

export const CATALOG_COMMANDS: Record<'add' | 'list' | 'remove' | 'verify', (input: CommandInput, io: CatalogIo) => Promise<number>> = {
  add: async (input, io) => {
    const { flags, positional } = commandFlags(input, { 'data-dir': 'string', json: 'boolean', name: 'string', description: 'string', tag: 'strings', method: 'string' });
    const name = checkName(flags.name!);
    if (!name.ok) throw new UsageError(`--name ${name.reason}`);
    if (flags.description!.length > 500) throw new UsageError('--description must be at most 500 characters');
    let tags: string[];
    try {
      tags = normaliseTags(flags.tag ?? []);
    } catch (err) {
      throw new UsageError(`--tag: ${(err as Error).message}`);
    }
    const row = await withLedger(flags['data-dir'], io.env, (db, config) =>
      addEntry(config, db, { url: positional[0]!, method: flags.method, name: name.value, description: flags.description!, tags }),
    );
    const view = catalogView(row);
    print(io, flags.json, view, () => io.out(`Verified and listed:\n${line(view)}`));
    return 0;
  },

  list: async (input, io) => {
    const { flags } = commandFlags(input, { 'data-dir': 'string', json: 'boolean', all: 'boolean' });
    const items = await withLedger(flags['data-dir'], io.env, async (db) =>
      (await listCatalog(db, { includeHidden: flags.all })).map((r) => ({ entry_id: r.entry_id, status: r.status, last_error: r.last_error, checked_at: new Date(Number(r.checked_at)).toISOString(), ...catalogView(r) })),
    );
    print(io, flags.json, { items, total: items.length }, () => {
      if (items.length === 0) io.out(flags.all ? 'The catalog is empty.\n' : 'No verified entries (use --all to see hidden ones).\n');
      for (const e of items) io.out(line(e));
    });
    return 0;
  },

  remove: async (input, io) => {
    const { flags, positional } = commandFlags(input, { 'data-dir': 'string' });
    const removed = await withLedger(flags['data-dir'], io.env, async (db) => await db.transaction(async () => await removeCatalogEntry(db, positional[0]!)));
    if (!removed) throw new CatalogError(`no catalog entry ${positional[0]}`);
    io.out(`Removed ${positional[0]}.\n`);
    return 0;
  },

  verify: async (input, io) => {
    const { flags } = commandFlags(input, { 'data-dir': 'string', json: 'boolean' });
    const result = await withLedger(flags['data-dir'], io.env, (db, config) => reverifyCatalog(config, db));
    print(io, flags.json, result, () => io.out(`${result.verified} verified, ${result.hidden} hidden.\n`));
    return 0;
  },
};

/** Runs `agent-wallet admin catalog NAME`; a refused entry is exit code 1 with the message. */
export async function runCatalog(name: keyof typeof CATALOG_COMMANDS, input: CommandInput, io: CatalogIo): Promise<number> {
  try {
    return await CATALOG_COMMANDS[name](input, io);
  } catch (err) {
    if (err instanceof CatalogError || err instanceof AppError || err instanceof AdminError || err instanceof DatabaseOpenError) {
      io.err(`agent-wallet admin catalog: ${err.message}\n`);
      if (err instanceof AppError && err.howToFix) io.err(`how to fix: ${err.howToFix}\n`);
      return 1;
    }
    throw err;
  }
}

/** Runs `agent-wallet admin catalog ARGV` in this process with `io`; returns the exit code. */
export async function catalogCommand(argv: string[], io: CatalogIo): Promise<number> {
  const [{ Command, CommanderError }, { addCatalogCommands }] = await Promise.all([import('@commander-js/extra-typings'), import('./admin-program.ts')]);
  let code = 0;
  const catalog = new Command('catalog').exitOverride().configureOutput({ writeOut: io.out, writeErr: io.err });
  addCatalogCommands(catalog, (c) => {
    code = c;
  }, io);
  try {
    await catalog.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.exitCode === 0) return 0;
    throw new UsageError(`${err.message.replace(/^error: /, '')}; usage: agent-wallet admin catalog --help`);
  }
  return code;
}
