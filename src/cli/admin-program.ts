/** `agent-wallet admin …` on commander (DESIGN §11); the bodies are in src/cli/admin*.ts. */
import type { Command, CommandUnknownOpts } from '@commander-js/extra-typings';
import type { CommandInput } from './context.ts';
import { collect, helpFooter, inputOf } from './define.ts';
import { userPath } from './paths.ts';
import type { Done } from './agent-program.ts';

export type AdminIo = { out: (text: string) => void; err: (text: string) => void; env: Record<string, string | undefined> };
type Body = (input: CommandInput, io: AdminIo) => number | Promise<number>;
type Sub = (parent: Command, name: string, summary: string, example: string, load: () => Promise<Body>, setup?: (c: CommandUnknownOpts) => CommandUnknownOpts) => void;

const PROCESS_IO: AdminIo = { out: (t) => void process.stdout.write(t), err: (t) => void process.stderr.write(t), env: process.env };

/** Declares the admin command `name` under `parent`: --data-dir, help, and its body run with `io`. */
function adminSub(done: Done, io: AdminIo): Sub {
  return (parent, name, summary, example, load, setup = (c) => c) => {
    const c = parent.command(name).description(summary).option('--data-dir <dir>', "the daemon's data directory (env AGENT_WALLET_DATA_DIR; default ./data)", userPath) as unknown as CommandUnknownOpts;
    helpFooter(setup(c), [`agent-wallet admin ${example}`], ['ok', 'error', 'usage']).action(async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as CommandUnknownOpts;
      const [body, { runAdmin }] = await Promise.all([load(), import('./admin.ts')]);
      done(await runAdmin(() => body(inputOf(cmd), io), io));
    });
  };
}

const json = (c: CommandUnknownOpts) => c.option('--json', 'print JSON on stdout');

export function addAdminCommands(program: Command, done: Done, io: AdminIo = PROCESS_IO): void {
  const admin = program.command('admin').description('local administration on the data directory (works while the daemon runs)');
  helpFooter(admin, ['agent-wallet admin mail --data-dir ./data'], ['ok', 'error', 'usage']);
  const sub = adminSub(done, io);
  const admin_ = async () => import('./admin.ts');
  sub(admin, 'mail', 'the mail outbox with its links (claim, sign-in, approval mails), newest first', 'mail --limit 5', async () => (await admin_()).mailCommand, (c) =>
    json(c.option('--limit <n>', 'at most this many mails (1–10000, default 50)')),
  );
  sub(admin, 'owner-token', 'mint an owner API token (creates the owner if missing)', 'owner-token me@example.com --label ci', async () => (await admin_()).ownerTokenCommand, (c) =>
    json(c.argument('<email>', "the owner's email").option('--label <label>', 'a name for the token')),
  );
  sub(admin, 'sale-fees', "what each merchant's x402 sales owe the operator, most owed first", 'sale-fees --json', async () => (await admin_()).saleFeesCommand, (c) =>
    json(c.option('--limit <n>', 'at most this many merchants (1–10000, default 100)')),
  );
  sub(admin, 'faucet', "simnet USDC (and SOL) from the running daemon's embedded chain", 'faucet 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin 100 --sol 1', async () => (await import('./admin-faucet.ts')).faucetCommand, (c) =>
    json(c.argument('<address>', 'a Solana address').argument('<amount>', 'USDC').option('--sol <sol>', 'SOL as well')),
  );
  const backup = async () => import('./admin-backup.ts');
  sub(admin, 'backup', 'a backup safe for custody (ledger, keys, config) into DIR', 'backup /srv/backups/today --encrypt', async () => (await backup()).backupCommand, (c) =>
    json(c.argument('<dir>', 'the backup directory').option('--encrypt', 'seal it under AGENT_WALLET_BACKUP_PASSPHRASE')),
  );
  sub(admin, 'restore', 'restore a backup into a new data directory (--data-dir is required)', 'restore /srv/backups/today --data-dir ./data-restored', async () => (await backup()).restoreCommand, (c) => {
    c.options.find((o) => o.long === '--data-dir')!.makeOptionMandatory();
    return json(c.argument('<dir>', 'the backup directory'));
  });
  sub(admin, 'mark-restored', 'mark a ledger that came back through Litestream as restored', 'mark-restored --backup-time 2026-01-31T12:00:00Z', async () => (await backup()).markRestoredCommand, (c) =>
    c.requiredOption('--backup-time <isoTime>', 'the time of the restored copy'),
  );
  sub(admin, 'copy-ledger', "copy a stopped daemon's SQLite ledger into an empty PostgreSQL database, verified", 'copy-ledger --data-dir ./data --to postgres://wallet@db:5432/wallet', async () => (await import('./admin-copy-ledger.ts')).copyLedgerCommand, (c) =>
    json(c.option('--to <url>', 'the empty PostgreSQL database (env AGENT_WALLET_DATABASE_URL)')),
  );
  sub(admin, 'doctor', 'health checks of the data dir, the chain and the daemon; exit 1 on any problem', 'doctor --json', async () => (await import('./admin-doctor.ts')).doctorCommand, json);

  const catalog = admin.command('catalog').description('the public x402 catalog (entries are probed and re-verified daily)');
  helpFooter(catalog, ['agent-wallet admin catalog list --all'], ['ok', 'error', 'usage']);
  addCatalogCommands(catalog as unknown as Command, done, io);
}

/** `admin catalog add|list|remove|verify` under `catalog`. */
export function addCatalogCommands(catalog: Command, done: Done, io: AdminIo): void {
  const sub = adminSub(done, io);
  const entry = (name: 'add' | 'list' | 'remove' | 'verify') => async (): Promise<Body> => {
    const { runCatalog } = await import('./admin-catalog.ts');
    return (input) => runCatalog(name, input, io);
  };
  sub(catalog, 'add', 'probe a paid API and list it when it answers 402 with a USDC option', 'catalog add https://api.example.com/joke --name Jokes --description "A joke per call" --tag fun', entry('add'), (c) =>
    json(
      c
        .argument('<url>', 'the paid API')
        .requiredOption('--name <name>', 'the listed name')
        .requiredOption('--description <text>', 'what it does (up to 500 characters)')
        .option('--tag <tag>', 'a tag, repeatable', collect)
        .option('--method <method>', 'HTTP method (default GET)'),
    ),
  );
  sub(catalog, 'list', 'the catalog entries', 'catalog list --all', entry('list'), (c) => json(c.option('--all', 'hidden entries as well')));
  sub(catalog, 'remove', 'remove an entry', 'catalog remove https://api.example.com/joke', entry('remove'), (c) => c.argument('<urlOrEntryId>', 'the entry'));
  sub(catalog, 'verify', 're-verify every entry now (the daily job)', 'catalog verify', entry('verify'), json);
}
