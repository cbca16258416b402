/**
 * `agent-wallet x402 …` (DESIGN §11): buy pay-per-request APIs and browse the public catalog.
 *
 *   x402 fetch URL [--method M] [--header K:V]… [--data BODY] [--max-amount A] [--idempotency-key K]
 *       probe, pay when the guard rails allow it (FROST round with the client-side message check)
 *       and print the seller's answer: the body on stdout, progress on stderr; with --json the
 *       outcome, the payment and the answer. Exit 0 when answered 2xx/3xx, 5 while the owner must
 *       approve (resume with `x402 resume FETCH_ID`), 1 otherwise.
 *   x402 resume FETCH_ID       pay (after approval) or read the outcome of a purchase
 *   x402 status FETCH_ID       the purchase as it stands, sending nothing (pending: do not pay again)
 *   x402 mcp URL TOOL [--args JSON] [--max-amount A] [--idempotency-key K]
 *       call a tool of a paid MCP server (Streamable HTTP at URL); a payment request is paid once
 *       under the guard rails (the URL's host is the rails' host) and the call repeated with it
 *   x402 catalog [--query Q] [--tag T]   the public catalog of verified paid APIs
 */
import { randomUUID } from 'node:crypto';
import { ApiClient } from '../client/api.ts';
import { x402Fetch, x402Resume, type X402Result } from '../client/x402.ts';
import { x402CallTool } from '../client/x402-mcp.ts';
import { parseUsdc } from '../domain/money.ts';
import { commandFlags, DEFAULT_SERVER, profileClient, type CliContext } from './context.ts';
import { EXIT, printData, progress } from './output.ts';
import { UsageError } from './usage.ts';
import { saver } from './custody-commands.ts';

type Command = (ctx: CliContext) => Promise<number>;

function headerFlags(values: string[] | undefined): Record<string, string> | undefined {
  if (!values?.length) return undefined;
  const out: Record<string, string> = {};
  for (const h of values) {
    const i = h.indexOf(':');
    if (i <= 0) throw new UsageError(`--header "${h}" must be NAME:VALUE`);
    out[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  return out;
}

/** Prints the outcome and maps it to the exit code. */
function finish(ctx: CliContext, r: X402Result): number {
  const view = (r.settled ?? r.prepared) as Record<string, any>;
  const response = r.response as { status: number; body: string; body_encoding: string; truncated: boolean } | null;
  if (ctx.json) {
    printData(ctx, { outcome: r.outcome, ...view, response });
  } else {
    if (r.outcome === 'awaiting_approval') progress(ctx, `waiting for the owner's approval (approval_id ${view.approval_id}); then run: agent-wallet x402 resume ${r.fetch_id}`);
    else if (r.outcome === 'rejected') progress(ctx, `rejected by the guard rails: ${view.decision?.reason ?? 'no reason given'}`);
    else if (r.outcome === 'failed') progress(ctx, `payment failed: ${view.error ?? view.decision?.reason ?? 'no reason given'}`);
    else if (r.outcome === 'pending') progress(ctx, `pending: the paid request was sent and its settlement is not on chain yet; do not pay again; check with: agent-wallet x402 status ${r.fetch_id}`);
    else if (r.outcome === 'completed') progress(ctx, `paid ${view.amount} USDC (signature ${view.signature})`);
    else if (r.outcome === 'signed_in') progress(ctx, `signed in to ${view.host}: bought before, nothing paid`);
    if (response) {
      progress(ctx, `HTTP ${response.status}${response.truncated ? ' (body truncated)' : ''}`);
      if (response.body_encoding === 'base64') progress(ctx, 'the body is binary: printed as base64');
      ctx.out(response.body);
      if (!response.body.endsWith('\n')) ctx.out('\n');
    }
  }
  if (r.outcome === 'awaiting_approval') return EXIT.awaitingApproval;
  if ((r.outcome === 'completed' || r.outcome === 'not_required' || r.outcome === 'signed_in') && response && response.status < 400) return EXIT.ok;
  return EXIT.error;
}

export const X402_COMMANDS: Record<string, Command> = {
  fetch: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { method: 'string', header: 'strings', data: 'string', 'max-amount': 'string', 'idempotency-key': 'string', 'accept-new-address': 'boolean' });
    if (flags['max-amount'] !== undefined && !parseUsdc(flags['max-amount']).ok) throw new UsageError(`--max-amount ${flags['max-amount']} is not a USDC amount`);
    const { profile, api } = profileClient(ctx);
    const idempotencyKey = flags['idempotency-key'] ?? randomUUID();
    const result = await x402Fetch(
      api,
      profile,
      {
        url: positional[0]!,
        ...(flags.method ? { method: flags.method } : {}),
        ...(flags.header ? { headers: headerFlags(flags.header) } : {}),
        ...(flags.data !== undefined ? { body: flags.data } : {}),
        ...(flags['max-amount'] ? { max_amount: flags['max-amount'] } : {}),
      },
      { idempotencyKey, acceptNewAddress: flags['accept-new-address'], save: saver(ctx), progress: (s) => progress(ctx, s) },
    );
    return finish(ctx, result);
  },

  resume: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const { profile, api } = profileClient(ctx);
    return finish(ctx, await x402Resume(api, profile, positional[0]!, (s) => progress(ctx, s), saver(ctx)));
  },

  mcp: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { args: 'string', 'max-amount': 'string', 'idempotency-key': 'string' });
    if (positional.length !== 2) throw new UsageError('usage: agent-wallet x402 mcp URL TOOL [--args JSON] [--max-amount A] [--idempotency-key K]');
    const [url, tool] = positional as [string, string];
    let args: Record<string, unknown> | undefined;
    if (flags.args !== undefined) {
      try {
        args = JSON.parse(flags.args) as Record<string, unknown>;
      } catch {
        throw new UsageError('--args must be a JSON object, e.g. \'{"ticker":"SOL"}\'');
      }
    }
    if (flags['max-amount'] !== undefined && !parseUsdc(flags['max-amount']).ok) throw new UsageError(`--max-amount ${flags['max-amount']} is not a USDC amount`);
    const { profile, api } = profileClient(ctx);
    const idempotencyKey = flags['idempotency-key'] ?? randomUUID();
    const r = await x402CallTool(
      api,
      profile,
      { name: url, url },
      { tool, ...(args ? { arguments: args } : {}), ...(flags['max-amount'] ? { maxAmount: flags['max-amount'] } : {}), idempotencyKey },
      { progress: (s) => progress(ctx, s), save: saver(ctx) },
    );
    if (ctx.json) printData(ctx, { ...r, idempotency_key: idempotencyKey });
    else {
      if (r.outcome === 'completed') progress(ctx, `paid ${r.purchase?.amount} USDC (signature ${r.purchase?.signature})`);
      else if (r.outcome === 'pending') progress(ctx, `pending: the payment was sent with the call and is not on chain yet; do not pay again; check with: agent-wallet x402 status ${r.fetch_id}`);
      else if (r.outcome !== 'not_required') progress(ctx, `${r.outcome}: ${r.purchase?.decision?.reason ?? r.purchase?.error ?? 'see --json'}`);
      for (const c of (r.result.content as { type: string; text?: string }[] | undefined) ?? []) if (c.type === 'text' && c.text) ctx.out(`${c.text}\n`);
    }
    return r.outcome === 'awaiting_approval' ? EXIT.awaitingApproval : r.outcome === 'completed' || r.outcome === 'not_required' ? (r.result.isError ? EXIT.error : EXIT.ok) : EXIT.error;
  },

  status: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    if (positional.length !== 1) throw new UsageError('usage: agent-wallet x402 status FETCH_ID');
    const { api } = profileClient(ctx);
    const view = await api.call<Record<string, any>>('bot', 'x402_status', { fetch_id: positional[0] });
    if (ctx.json) printData(ctx, view);
    else {
      ctx.out(`${view.fetch_id}  ${view.purchase_status}  ${view.amount} USDC to ${view.host}${view.signature ? `  ${view.signature}` : ''}\n`);
      if (view.next_step) progress(ctx, view.next_step);
    }
    return EXIT.ok;
  },

  catalog: async (ctx) => {
    const { flags } = commandFlags(ctx, { query: 'string', tag: 'string' });
    let server = ctx.server;
    if (server === DEFAULT_SERVER) {
      try {
        server = profileClient(ctx).profile.server_url;
      } catch {
        // No profile: the catalog needs none; use the default server.
      }
    }
    const res = await new ApiClient(server).call<{ items: Record<string, unknown>[]; total: number }>('public', 'x402_catalog', { ...(flags.query ? { query: flags.query } : {}), ...(flags.tag ? { tag: flags.tag } : {}) });
    if (ctx.json) printData(ctx, res);
    else if (res.items.length === 0) ctx.out('The catalog has no matching entries.\n');
    else for (const e of res.items) ctx.out(`${e.name}  ${e.price} USDC  ${e.method} ${e.url}\n  ${e.description}${(e.tags as string[]).length ? `  [${(e.tags as string[]).join(', ')}]` : ''}\n`);
    return EXIT.ok;
  },
};
