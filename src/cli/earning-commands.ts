/**
 * Earning and funding commands (DESIGN §11): `request create|get|list|cancel|send`,
 * `fund-request AMOUNT --reason R`, `fund-requests`. Paying a paylink is `pay --request REQ_ID`.
 */
import { randomUUID } from 'node:crypto';
import type { ApiClient } from '../client/api.ts';
import { parseUsdc } from '../domain/money.ts';
import { commandFlags, profileClient, type CliContext } from './context.ts';
import { EXIT, printData } from './output.ts';
import { UsageError } from './usage.ts';
import { paylinkNextStep, withNextStep } from './next-steps.ts';
import { paylinkText } from './paylink-text.ts';

type Command = (ctx: CliContext) => Promise<number>;

/** Who runs `request …`: an agent (/bot, its wallet profile) or a merchant (/merchant, its merchant profile). */
export interface RequestTarget {
  endpoint: 'bot' | 'merchant';
  /** The command as typed before `request`, e.g. "agent-wallet" or "agent-wallet merchant". */
  prefix: string;
  api: () => ApiClient;
}

function intFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

/**
 * `--item "desc:price[:qty]"`: read from the right, so a description may itself contain colons
 * ("Room 4: cleaning:25:2" is 2 × 25 USDC for "Room 4: cleaning").
 */
export function parseItem(raw: string): { description: string; price: string; quantity?: number } {
  const parts = raw.split(':');
  const last = parts[parts.length - 1]!.trim();
  const beforeLast = parts.length >= 3 ? parts[parts.length - 2]!.trim() : undefined;
  if (beforeLast !== undefined && /^\d+$/.test(last) && parseUsdc(beforeLast).ok) {
    const description = parts.slice(0, -2).join(':').trim();
    if (description !== '') return { description, price: beforeLast, quantity: Number(last) };
  }
  const description = parts.slice(0, -1).join(':').trim();
  if (parts.length < 2 || description === '' || !parseUsdc(last).ok) {
    throw new UsageError(`--item "${raw}" must look like "description:price" or "description:price:quantity", e.g. "Coffee beans 1kg:18.5:2"`);
  }
  return { description, price: last };
}

/** `--expires-in`: whole seconds go as a number, durations ("24h") as text. */
function expiresIn(value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** A paylink as JSON with --json, else as a short table (paylink-text.ts). */
function printPaylink(ctx: CliContext, p: Record<string, unknown>, headline: string): void {
  if (ctx.json) printData(ctx, p);
  else ctx.out(`${paylinkText(p, headline).join('\n')}\n`);
}

/** `request create|get|list|cancel|send` for an agent's or a merchant's paylinks. */
export async function requestCommand(ctx: CliContext, target: RequestTarget): Promise<number> {
  const { flags, positional } = commandFlags(ctx, {
    description: 'string',
    amount: 'string',
    item: 'strings',
    reference: 'string',
    'expires-in': 'string',
    'reveal-owner': 'boolean',
    status: 'string',
    limit: 'string',
    offset: 'string',
    email: 'string',
    wallet: 'string',
    message: 'string',
  });
  const [sub, id] = positional;
  const { endpoint } = target;
  switch (sub) {
    case 'create': {
      if (flags['reveal-owner'] && endpoint !== 'bot') throw new UsageError("--reveal-owner is for agents' paylinks (a merchant has no owner)");
      const params: Record<string, unknown> = { description: flags.description };
      if (flags.amount) params.amount = flags.amount;
      if (flags.item?.length) params.items = flags.item.map(parseItem);
      if (flags.reference) params.reference = flags.reference;
      if (flags['expires-in']) params.expires_in = expiresIn(flags['expires-in']);
      if (flags['reveal-owner']) params.reveal_owner = true;
      const res = await target.api().call<Record<string, unknown>>(endpoint, 'create_payment_request', params);
      printPaylink(ctx, withNextStep(res, paylinkNextStep(res, target.prefix)), `Payment request created: ${String(res.request_id)}`);
      return EXIT.ok;
    }
    case 'get': {
      if ((id === undefined) === (flags.reference === undefined)) throw new UsageError(`give the paylink as REQUEST_ID or --reference R (one of them): ${target.prefix} request get --help`);
      const got = await target.api().call<Record<string, unknown>>(endpoint, 'get_payment_request', id !== undefined ? { request_id: id } : { reference: flags.reference });
      printPaylink(ctx, withNextStep(got, paylinkNextStep(got, target.prefix)), `Payment request ${String(got.request_id)}`);
      return EXIT.ok;
    }
    case 'list': {
      printData(ctx, await target.api().call(endpoint, 'list_payment_requests', { status: flags.status, limit: intFlag('limit', flags.limit), offset: intFlag('offset', flags.offset) }));
      return EXIT.ok;
    }
    case 'cancel': {
      printData(ctx, await target.api().call(endpoint, 'cancel_payment_request', { request_id: id }), 'Payment request cancelled.');
      return EXIT.ok;
    }
    case 'send': {
      if ((flags.email === undefined) === (flags.wallet === undefined)) throw new UsageError(`send to --email ADDRESS or --wallet USERNAME (one of them): ${target.prefix} request send --help`);
      const params: Record<string, unknown> = { request_id: id, ...(flags.email ? { to_email: flags.email } : { to_wallet: flags.wallet }) };
      if (flags.message) params.message = flags.message;
      printData(ctx, await target.api().call(endpoint, 'send_paylink_invitation', params), 'Invitation sent.');
      return EXIT.ok;
    }
    default:
      throw new Error(`no request command "${sub}"`);
  }
}

export const EARNING_COMMANDS: Record<string, Command> = {
  // The next step names the profile it was run with: `request send` under the default one would send another wallet's paylink.
  request: (ctx) => requestCommand(ctx, { endpoint: 'bot', prefix: ctx.profileName === 'default' ? 'agent-wallet' : `agent-wallet --profile ${ctx.profileName}`, api: () => profileClient(ctx).api }),

  'fund-request': async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { reason: 'string', 'idempotency-key': 'string' });
    const { api } = profileClient(ctx);
    // A key per logical request: a retry of this command never asks the owner twice.
    const res = await api.call<Record<string, unknown>>('bot', 'request_funds', { amount: positional[0], reason: flags.reason }, { idempotencyKey: flags['idempotency-key'] ?? randomUUID() });
    printData(ctx, res, `Fund request sent to the owner: ${String(res.fund_url)}`);
    return EXIT.ok;
  },

  'fund-requests': async (ctx) => {
    const { flags } = commandFlags(ctx, { status: 'string', limit: 'string', offset: 'string' });
    const { api } = profileClient(ctx);
    printData(ctx, await api.call('bot', 'list_fund_requests', { status: flags.status, limit: intFlag('limit', flags.limit), offset: intFlag('offset', flags.offset) }));
    return EXIT.ok;
  },
};
