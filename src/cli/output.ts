/**
 * How the client prints results and errors. With --json: the API `data` object, or the error
 * envelope, as JSON on stdout; without: readable lines. Diagnostics and progress go to stderr.
 * Exit codes (DESIGN §11): 0 ok, 1 error, 2 bad usage, 4 not authenticated, 5 waiting for owner approval.
 */
import { ApiError } from '../client/api.ts';
import { ProfileError } from '../client/profile.ts';
import { CLIENT_ERRORS, clientEnvelope } from '../client/errors.ts';
import type { CliContext } from './context.ts';
import { UsageError } from './usage.ts';

export const EXIT = { ok: 0, error: 1, usage: 2, auth: 4, awaitingApproval: 5 } as const;

function human(value: unknown, indent = ''): string {
  if (value === null || value === undefined) return '-';
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '(none)';
    return `\n${value.map((v) => `${indent}  - ${human(v, `${indent}    `).trimStart()}`).join('\n')}`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  return `\n${entries.map(([k, v]) => `${indent}  ${k}: ${human(v, `${indent}  `)}`).join('\n')}`;
}

/** The fields shown for each row of a list, in this order, when present. */
const LIST_FIELDS = ['created_at', 'transaction_id', 'event_id', 'approval_id', 'request_id', 'type', 'direction', 'status', 'amount', 'fee', 'to', 'from', 'reason', 'description'];

/** One line per item: the list fields it has, separated by two spaces. */
function listLines(items: Record<string, unknown>[], fields: readonly string[]): string {
  return items
    .map((item) => {
      const parts = fields.filter((k) => item[k] !== undefined && item[k] !== null && typeof item[k] !== 'object').map((k) => `${k}=${String(item[k])}`);
      return `  ${parts.length ? parts.join('  ') : JSON.stringify(item)}`;
    })
    .join('\n');
}

/** Prints a successful result; a list's rows show `fields` (default LIST_FIELDS) as far as present. */
export function printData(ctx: CliContext, data: unknown, headline?: string, fields: readonly string[] = LIST_FIELDS): void {
  if (ctx.json) {
    ctx.out(`${JSON.stringify(data, null, 2)}\n`);
    return;
  }
  if (headline) ctx.out(`${headline}\n`);
  const items = (data as { items?: unknown } | null)?.items;
  if (Array.isArray(items)) {
    ctx.out(items.length ? `${listLines(items as Record<string, unknown>[], fields)}\n` : '  (none)\n');
    const rest = Object.entries(data as Record<string, unknown>).filter(([k]) => k !== 'items');
    const meta = rest.map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
    if (meta.length) ctx.out(`${meta.join('  ')}\n`);
    return;
  }
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    for (const [k, v] of Object.entries(data as Record<string, unknown>)) ctx.out(`${k}: ${human(v)}\n`);
  } else {
    ctx.out(`${human(data)}\n`);
  }
}

/** A progress line on stderr (never on stdout, which scripts parse). */
export function progress(ctx: CliContext, step: string): void {
  ctx.err(`… ${step}\n`);
}

/** Prints an error and returns the exit code for it. */
/** A refused key, said as a CLI user fixes it (the API's words speak of HTTP headers). */
const REFUSED_KEY: Partial<Record<string, string>> = {
  bot: "This profile's API key was refused: the owner may have rotated it (or a recovery sweep revoked it). Store the new key with: agent-wallet set-api-key (it reads the key from stdin).",
  owner: 'The owner token was refused: mint a new one on /dashboard/tokens (or agent-wallet admin owner-token EMAIL) and pass it with --owner-token or AGENT_WALLET_OWNER_TOKEN.',
};

export function printError(ctx: Pick<CliContext, 'json' | 'out' | 'err'>, err: unknown): number {
  if (err instanceof ApiError) {
    const howToFix =
      (err.errorCode === 'UNAUTHORIZED' && err.endpoint && REFUSED_KEY[err.endpoint]) ||
      (err.errorCode === 'WALLET_NOT_CLAIMED' ? 'Your owner claims the wallet at its claim URL with the claim code (agent-wallet info shows both); until then only agent-wallet info, rename and set-owner work.' : null) ||
      err.howToFix;
    if (ctx.json) ctx.out(`${JSON.stringify({ success: false, error: { ...err.envelope().error, how_to_fix: howToFix } }, null, 2)}\n`);
    else {
      ctx.err(`error ${err.errorCode}: ${err.message}\n`);
      if (howToFix) ctx.err(`how to fix: ${howToFix}\n`);
      for (const [k, v] of Object.entries(err.details)) ctx.err(`${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}\n`);
    }
    if (err.errorCode === 'UNAUTHORIZED') return EXIT.auth;
    if (err.errorCode === 'AWAITING_APPROVAL') return EXIT.awaitingApproval;
    return EXIT.error;
  }
  const envelope = clientEnvelope(err, (e) => (e instanceof UsageError ? { code: 'CLIENT_USAGE', howToFix: CLIENT_ERRORS.CLIENT_USAGE } : null));
  if (ctx.json) ctx.out(`${JSON.stringify(envelope, null, 2)}\n`);
  else {
    const { code: _code, message, how_to_fix, ...details } = envelope.error;
    ctx.err(`error: ${message}\n`);
    if (!(err instanceof UsageError)) ctx.err(`how to fix: ${how_to_fix}\n`);
    for (const [k, v] of Object.entries(details)) ctx.err(`${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}\n`);
  }
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof ProfileError) return EXIT.auth;
  return EXIT.error;
}
