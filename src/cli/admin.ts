/**
 * `agent-wallet admin mail` and `admin owner-token` (DESIGN §11), and the error handling every
 * admin command shares. Commands open the ledger the data dir's config names (withLedger): its
 * `wallet.db` directly (busy_timeout makes that safe while the daemon runs) or [database] url. The command tree (flags, help) is in admin-program.ts.
 */
import type { Store } from '../db/store.ts';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, type Config } from '../config.ts';
import { newId } from '../contract/ids.ts';
import { listMail, type MailLink } from '../db/mail.ts';
import { receivables } from '../db/sale-fees.ts';
import { formatUsdc } from '../domain/money.ts';
import { ledgerPath, openLedger } from '../db/ledger.ts';
import { ensureOwner, insertOwnerToken } from '../db/owners.ts';
import { newApiKey } from '../domain/api-keys.ts';
import { checkEmail, checkName } from '../domain/identity.ts';
import { AdminError, dataDirEnv } from './admin-network.ts';
import { commandFlags, type CommandInput } from './context.ts';
import { UsageError } from './usage.ts';
import { FaucetError } from './admin-faucet.ts';
import { BackupError } from '../ops/backup.ts';
import { CopyLedgerError } from '../db/copy-ledger.ts';
import { DatabaseOpenError } from '../db/open.ts';

interface AdminIo {
  out: (text: string) => void;
  env: Record<string, string | undefined>;
}

/** Runs `fn` on the ledger the data dir's config names (SQLite in the data dir, or [database] url), then closes it. */
export async function withLedger<T>(dataDirFlag: string | undefined, env: AdminIo['env'], fn: (db: Store, config: Config) => Promise<T> | T): Promise<T> {
  const dataDir = resolve(dataDirFlag ?? env.AGENT_WALLET_DATA_DIR ?? './data');
  const config = loadConfig({ dataDir }, dataDirEnv(dataDir, env));
  const path = ledgerPath(dataDir);
  if (!config.database.url && !existsSync(path)) throw new AdminError(`no ledger at ${path}; pass the --data-dir the daemon runs with (default ./data)`);
  const ledger = await openLedger(config);
  try {
    return await fn(ledger.store, config);
  } finally {
    await ledger.close();
  }
}

const iso = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** `admin sale-fees`: what each merchant's x402 sales owe the operator, and its open invoice. */
export async function saleFeesCommand(input: CommandInput, io: AdminIo): Promise<number> {
  const { flags } = commandFlags(input, { 'data-dir': 'string', json: 'boolean', limit: 'string' });
  const limit = flags.limit === undefined ? 100 : Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
  const { rows, credit } = await withLedger(flags['data-dir'], io.env, async (db, config) => ({ rows: await receivables(db, limit), credit: config.money.saleCredit }));
  let total = 0n;
  const items = rows.map((r) => {
    const owed = r.accrued > r.paid ? r.accrued - r.paid : 0n;
    total += owed;
    return {
      merchant_id: r.merchant_id,
      username: r.username,
      accrued: formatUsdc(r.accrued),
      paid: formatUsdc(r.paid),
      owed: formatUsdc(owed),
      sales_refused: owed >= credit,
      open_invoice: r.invoice_id === null ? null : { invoice_id: r.invoice_id, amount: formatUsdc(r.invoice_amount ?? 0n) },
      updated_at: iso(r.updated_at),
    };
  });
  if (flags.json) {
    io.out(`${JSON.stringify({ items, total_owed: formatUsdc(total), credit_limit: formatUsdc(credit) }, null, 2)}\n`);
    return 0;
  }
  if (items.length === 0) io.out('No merchant has sold through the facilitator yet.\n');
  for (const i of items) {
    io.out(`@${i.username}  owes ${i.owed} USDC (accrued ${i.accrued}, paid ${i.paid})${i.sales_refused ? '  SALES REFUSED' : ''}${i.open_invoice ? `  invoice ${i.open_invoice.invoice_id} for ${i.open_invoice.amount}` : ''}\n`);
  }
  if (items.length) io.out(`Owed in all: ${formatUsdc(total)} USDC; each merchant may owe ${formatUsdc(credit)} before its sales are refused.\n`);
  return 0;
}

export async function mailCommand(input: CommandInput, io: AdminIo): Promise<number> {
  const { flags } = commandFlags(input, { 'data-dir': 'string', json: 'boolean', limit: 'string' });
  const limit = flags.limit === undefined ? 50 : Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
  const items = await withLedger(flags['data-dir'], io.env, async (db) =>
    (await listMail(db, limit)).map((m) => ({
      mail_id: m.mail_id,
      kind: m.kind,
      to: m.to_addr,
      subject: m.subject,
      text: m.body,
      links: JSON.parse(m.links) as MailLink[],
      status: m.status,
      channel: m.channel,
      attempts: Number(m.attempts),
      last_error: m.last_error,
      created_at: iso(m.created_at),
      sent_at: iso(m.sent_at),
    })),
  );
  if (flags.json) {
    io.out(`${JSON.stringify({ items, total: items.length }, null, 2)}\n`);
    return 0;
  }
  if (items.length === 0) io.out('The outbox is empty.\n');
  for (const m of items) {
    io.out(`${m.created_at}  ${m.status}${m.channel ? ` (${m.channel})` : ''}  to ${m.to}\n  ${m.subject}\n`);
    for (const l of m.links) io.out(`  ${l.label}: ${l.url}\n`);
    if (m.last_error) io.out(`  last error: ${m.last_error}\n`);
    io.out('\n');
  }
  return 0;
}

export async function ownerTokenCommand(input: CommandInput, io: AdminIo): Promise<number> {
  const { flags, positional } = commandFlags(input, { 'data-dir': 'string', json: 'boolean', label: 'string' });
  const email = checkEmail(positional[0]!);
  if (!email.ok) throw new UsageError(`EMAIL ${email.reason}`);
  const label = checkName(flags.label ?? 'admin owner-token');
  if (!label.ok) throw new UsageError(`--label ${label.reason}`);
  const key = newApiKey('owner');
  const tokenId = newId('ownerToken');
  const now = Date.now();
  const result = await withLedger(flags['data-dir'], io.env, async (db) =>
    await db
      .transaction(async () => {
        const { owner, created } = await ensureOwner(db, email.value, newId('owner'), now);
        await insertOwnerToken(db, { token_id: tokenId, owner_id: owner.owner_id, token_hash: key.hash, label: label.value, now });
        return { owner_id: owner.owner_id, email: owner.email, owner_created: created };
      }),
  );
  const data = { ...result, token_id: tokenId, token: key.key, label: label.value };
  if (flags.json) io.out(`${JSON.stringify(data, null, 2)}\n`);
  else {
    io.out(`Owner token for ${data.email}${data.owner_created ? ' (new owner)' : ''} (${tokenId}); shown once:\n${key.key}\n`);
    io.out('Use it as "Authorization: Bearer <token>" on POST /v1/owner; list and revoke tokens with the tokens / revoke_token actions.\n');
  }
  return 0;
}

/** Runs an admin command: a data dir it cannot work on is exit code 1 with the message. */
export async function runAdmin(command: () => number | Promise<number>, io: { err: (text: string) => void }): Promise<number> {
  try {
    return await command();
  } catch (err) {
    if (err instanceof AdminError || err instanceof FaucetError || err instanceof BackupError || err instanceof CopyLedgerError || err instanceof DatabaseOpenError) {
      io.err(`agent-wallet admin: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
