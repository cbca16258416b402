/** Client commands for spending and history: pay, confirm, cancel, payments, history, events, approvals, receipt (and receipt verify), lookup, afford. */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { ed25519 } from '@noble/curves/ed25519.js';
import { ConnectionError } from '../client/api.ts';
import type { ApiClient } from '../client/api.ts';
import { recordIntent, usernameOf } from '../client/custody.ts';
import { pinsOf, updatePins } from '../client/pins.ts';
import { AgentRound, completePay, confirmSignSubmit, expectationOf, intentOf, type Expectation } from '../client/sign.ts';
import { saver } from './custody-commands.ts';
import { commandFlags, profileClient, type CliContext } from './context.ts';
import { EXIT, printData, progress } from './output.ts';
import { UsageError, usdcArg } from './usage.ts';
import { userPath, userPathOrUrl } from './paths.ts';
import { approvalNextStep, paymentNextStep, withNextStep } from './next-steps.ts';

type Command = (ctx: CliContext) => Promise<number>;

const micro = (value: unknown): bigint => usdcArg('amount', value);

function intFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

/** Prints a transaction (its next step as the command to run) and maps its status to the exit code (5 while the owner must approve). */
function finish(ctx: CliContext, tx: Record<string, unknown>, headline: string): number {
  printData(ctx, withNextStep(tx, paymentNextStep(tx)), headline);
  if (tx.status === 'awaiting_approval') return EXIT.awaitingApproval;
  return tx.status === 'completed' || tx.status === 'pending' || tx.status === 'pre_approved' || tx.status === 'approved' ? EXIT.ok : EXIT.error;
}

/** `events [read …]` for an agent's (/bot) or a merchant's (/merchant) feed. */
export async function eventsCommand(ctx: CliContext, target: { endpoint: 'bot' | 'merchant'; prefix: string; api: () => ApiClient }): Promise<number> {
  const { flags, positional } = commandFlags(ctx, { unread: 'boolean', since: 'string', wait: 'string', type: 'strings', limit: 'string', all: 'boolean' });
  if (positional[0] === 'read') {
    const ids = positional.slice(1);
    if (!flags.all && ids.length === 0) throw new UsageError(`usage: ${target.prefix} events read EVENT_ID… | --all`);
    printData(ctx, await target.api().call(target.endpoint, 'mark_read', flags.all ? { all: true } : { event_ids: ids }));
    return EXIT.ok;
  }
  if (positional.length > 0) throw new UsageError(`usage: ${target.prefix} events [--unread] [--since ID|TIME] [--wait S] [--type T]… | events read IDS…|--all`);
  printData(
    ctx,
    await target.api().call(target.endpoint, 'events', { unread_only: flags.unread, since: flags.since, wait_seconds: intFlag('wait', flags.wait), types: flags.type, limit: intFlag('limit', flags.limit) }),
  );
  return EXIT.ok;
}

/** The receipt type the daemon signs (src/evidence/receipts.ts). */
const RECEIPT_TYPE = 'agent-wallet-receipt+jwt';

type Jwk = { kty?: string; crv?: string; x?: string; kid?: string };

/** The Ed25519 keys of a JWKS (the daemon's /.well-known/agent-wallet/log-key), from its URL or a saved file. */
async function receiptKeys(source: string): Promise<Jwk[]> {
  let jwks: unknown;
  if (/^https?:\/\//.test(source)) {
    const res = await fetch(source, { signal: AbortSignal.timeout(10_000) }).catch((err: Error) => {
      throw new ConnectionError(`could not fetch the key from ${source}: ${err.message}`);
    });
    if (!res.ok) throw new ConnectionError(`the key at ${source} answered HTTP ${res.status}`);
    jwks = await res.json().catch(() => null);
  } else {
    if (!existsSync(source)) throw new UsageError(`--key ${source}: no such file (pass the daemon's /.well-known/agent-wallet/log-key URL or a saved copy)`);
    try {
      jwks = JSON.parse(readFileSync(source, 'utf8'));
    } catch {
      jwks = null;
    }
  }
  const keys = ((jwks as { keys?: Jwk[] } | null)?.keys ?? []).filter((k) => k?.kty === 'OKP' && k.crv === 'Ed25519' && typeof k.x === 'string');
  if (keys.length === 0) throw new UsageError(`${source} holds no Ed25519 key (a JWKS {"keys":[{"kty":"OKP","crv":"Ed25519","x":…}]})`);
  return keys;
}

/** Why a compact JWS is not a receipt signed by one of `keys`, or its header and claims. */
function checkReceipt(jws: string, keys: Jwk[]): { ok: true; kid: string | null; claims: Record<string, any> } | { ok: false; reason: string } {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p))) return { ok: false, reason: 'the file is not a compact JWS (three base64url parts joined by dots)' };
  const [h, p, sig] = parts as [string, string, string];
  let header: Record<string, unknown>;
  let claims: Record<string, any>;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'the header or the claims are not JSON' };
  }
  if (header.alg !== 'EdDSA') return { ok: false, reason: `the receipt is signed with ${String(header.alg)}, not EdDSA` };
  if (header.typ !== RECEIPT_TYPE) return { ok: false, reason: `the JWS is of type ${String(header.typ)}, not an Agent Wallet receipt (${RECEIPT_TYPE})` };
  const signature = Buffer.from(sig, 'base64url');
  const candidates = typeof header.kid === 'string' && keys.some((k) => k.kid === header.kid) ? keys.filter((k) => k.kid === header.kid) : keys;
  const signed = new TextEncoder().encode(`${h}.${p}`);
  const key = signature.length === 64 ? candidates.find((k) => {
    const pub = Buffer.from(k.x!, 'base64url');
    try {
      return pub.length === 32 && ed25519.verify(signature, signed, pub);
    } catch {
      return false;
    }
  }) : undefined;
  if (!key) {
    const named = typeof header.kid === 'string' && !keys.some((k) => k.kid === header.kid) ? ` (the receipt names key ${header.kid}, which the key source does not hold)` : '';
    return { ok: false, reason: `the signature does not match the key${named}: the receipt was changed after it was signed, or another key signed it` };
  }
  return { ok: true, kid: key.kid ?? null, claims };
}

/** What a receipt attests, in one sentence. */
function attests(c: Record<string, any>): string {
  const who = (p: Record<string, any> | null | undefined) => [p?.username ? `@${p.username}` : null, p?.address ?? null].filter(Boolean).join(' ') || 'unknown';
  const fee = c.fee_micro && c.fee_micro !== '0' ? ` + fee ${c.fee} ${c.currency}` : '';
  const what = c.memo ? ` for "${c.memo}"` : '';
  const ref = c.reference ? ` (reference ${c.reference})` : '';
  return `${c.amount} ${c.currency}${fee} paid by ${who(c.from)} to ${who(c.to)}${what}${ref}, ${c.status} at ${c.completed_at ?? 'an unrecorded time'} on ${c.network}; Solana transaction ${c.signature ?? '-'}${c.slot !== null && c.slot !== undefined ? ` (slot ${c.slot})` : ''}; receipt of ${c.sub}, issued by ${c.iss}.`;
}

/** `receipt verify FILE --key URL|FILE`: checks a saved receipt against the daemon's published key, offline but for the key. */
async function verifyReceipt(ctx: CliContext, args: string[], keySource: string | undefined): Promise<number> {
  if (args.length !== 1) throw new UsageError('usage: agent-wallet receipt verify FILE --key URL|FILE');
  if (!keySource) throw new UsageError("--key is required: the daemon's /.well-known/agent-wallet/log-key URL (or a saved copy); a receipt is only as good as the key it is checked against");
  const file = userPath(args[0]!);
  if (!existsSync(file)) throw new UsageError(`${file}: no such file`);
  const key = userPathOrUrl(keySource);
  const result = checkReceipt(readFileSync(file, 'utf8').trim(), await receiptKeys(key));
  if (!result.ok) {
    printData(ctx, { valid: false, file, key, reason: result.reason }, `BAD: ${file}: ${result.reason}.`);
    return EXIT.error;
  }
  printData(ctx, { valid: true, file, key, kid: result.kid, claims: result.claims }, `OK: signed by key ${result.kid ?? '(unnamed)'} from ${key}. It attests: ${attests(result.claims)}`);
  return EXIT.ok;
}

export const PAYMENT_COMMANDS: Record<string, Command> = {
  pay: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, {
      note: 'string', reference: 'string', 'idempotency-key': 'string', 'no-confirm': 'boolean', request: 'string',
      'max-amount': 'string', 'accept-new-address': 'boolean', 'accept-fees': 'boolean',
    });
    let params: Record<string, unknown>;
    // What the agent asked for, in its own words: the client holds the server's message to it.
    let expect: Expectation;
    if (flags.request) {
      if (positional.length > 1) throw new UsageError('usage: agent-wallet pay --request REQ_ID [AMOUNT] [--max-amount A]');
      params = { payment_request_id: flags.request, ...(positional[0] ? { amount: positional[0] } : {}) };
      expect = positional[0] ? { amount: micro(positional[0]) } : flags['max-amount'] ? { maxAmount: micro(flags['max-amount']) } : {};
    } else {
      if (positional.length !== 2) throw new UsageError('usage: agent-wallet pay TO AMOUNT [--note N] [--reference R] [--idempotency-key K] [--no-confirm] [--accept-new-address] [--accept-fees]');
      const username = usernameOf(positional[0]!);
      expect = { amount: micro(positional[1]), ...(username ? { username } : { recipientAddress: positional[0]!.trim() }) };
      params = { to: positional[0], amount: positional[1] };
    }
    if (flags['accept-new-address']) expect.acceptNewAddress = true;
    expect.createdAt = new Date().toISOString();
    if (flags.note) params.note = flags.note;
    if (flags.reference) params.reference = flags.reference;
    const { profile, api } = profileClient(ctx);
    const save = saver(ctx);
    await pinsOf(api, profile, save);
    // A key per logical payment: a retry of this command with the same key never pays twice.
    const idempotencyKey = flags['idempotency-key'] ?? randomUUID();
    progress(ctx, `created payment intent (idempotency key ${idempotencyKey})`);
    // Round one rides on pay (two round trips): a pre_approved answer opens the signing round.
    const round = flags['no-confirm'] ? null : new AgentRound(profile);
    const intent = await api.call<Record<string, any>>('bot', 'pay', round ? { ...params, commitments: round.commitments } : params, { idempotencyKey });
    // Kept until signed, so a confirm after the owner's approval holds the server to the same words.
    updatePins(profile, save, (p) => {
      recordIntent(p, intent.transaction_id, intentOf(expect), new Date());
    });
    if (intent.status !== 'pre_approved' || !round) return finish(ctx, intent, `Payment ${intent.status}.`);
    const result = await completePay(api, profile, intent, round, { expect, acceptNewFees: flags['accept-fees'], save, progress: (s) => progress(ctx, s), cancelOnRefusal: true });
    if (result.status === 'completed') progress(ctx, 'completed');
    return finish(ctx, result, `Payment ${result.status}.`);
  },

  confirm: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { 'max-amount': 'string', 'accept-new-address': 'boolean', 'accept-fees': 'boolean' });
    if (positional.length !== 1) throw new UsageError('usage: agent-wallet confirm TX_ID [--max-amount A] [--accept-new-address] [--accept-fees]');
    const { profile, api } = profileClient(ctx);
    const save = saver(ctx);
    const recorded = (await pinsOf(api, profile, save)).intents[positional[0]!];
    const expect: Expectation = {
      ...(recorded ? expectationOf(recorded) : {}),
      ...(flags['max-amount'] ? { maxAmount: micro(flags['max-amount']) } : {}),
      ...(flags['accept-new-address'] ? { acceptNewAddress: true } : {}),
    };
    const result = await confirmSignSubmit(api, profile, positional[0]!, { expect, acceptNewFees: flags['accept-fees'], save, progress: (s) => progress(ctx, s) });
    return finish(ctx, result, `Payment ${result.status}.`);
  },

  cancel: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    if (positional.length !== 1) throw new UsageError('usage: agent-wallet cancel TX_ID');
    const { api } = profileClient(ctx);
    printData(ctx, await api.call('bot', 'cancel_payment', { transaction_id: positional[0] }), 'Payment cancelled.');
    return EXIT.ok;
  },

  payments: async (ctx) => {
    const { flags } = commandFlags(ctx, { status: 'string', limit: 'string', offset: 'string' });
    const { api } = profileClient(ctx);
    printData(ctx, await api.call('bot', 'list_payments', { status: flags.status, limit: intFlag('limit', flags.limit), offset: intFlag('offset', flags.offset) }));
    return EXIT.ok;
  },

  history: async (ctx) => {
    const { flags } = commandFlags(ctx, { type: 'string', limit: 'string', offset: 'string' });
    const { api } = profileClient(ctx);
    printData(ctx, await api.call('bot', 'transactions', { type: flags.type, limit: intFlag('limit', flags.limit), offset: intFlag('offset', flags.offset) }));
    return EXIT.ok;
  },

  events: (ctx) => eventsCommand(ctx, { endpoint: 'bot', prefix: 'agent-wallet', api: () => profileClient(ctx).api }),

  approvals: async (ctx) => {
    const { api } = profileClient(ctx);
    printData(ctx, await api.call('bot', 'pending_approvals'));
    return EXIT.ok;
  },

  receipt: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { key: 'string' });
    if (positional[0] === 'verify') return verifyReceipt(ctx, positional.slice(1), flags.key);
    if (positional.length !== 1) throw new UsageError('usage: agent-wallet receipt TX_ID | receipt verify FILE --key URL');
    const { api } = profileClient(ctx);
    const r = await api.call<{ receipt: string; claims: Record<string, unknown>; key_url: string }>('bot', 'get_receipt', { transaction_id: positional[0] });
    if (ctx.json) printData(ctx, r);
    else ctx.out(`${r.receipt}\n`);
    progress(ctx, `a JWS (EdDSA); verify it with any JOSE library against ${r.key_url}`);
    return EXIT.ok;
  },

  freeze: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { reason: 'string' });
    if (positional.length !== 0) throw new UsageError('usage: agent-wallet freeze [--reason TEXT]');
    const { api } = profileClient(ctx);
    printData(ctx, await api.call('bot', 'freeze', flags.reason === undefined ? {} : { reason: flags.reason }));
    return EXIT.ok;
  },

  approval: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { wait: 'string' });
    if (positional.length !== 1) throw new UsageError('usage: agent-wallet approval APPROVAL_ID [--wait S]');
    const { api } = profileClient(ctx);
    const res = await api.call<Record<string, unknown>>('bot', 'approval_status', { approval_id: positional[0], wait_seconds: intFlag('wait', flags.wait) });
    printData(ctx, withNextStep(res, approvalNextStep(res)));
    return res.status === 'pending' ? EXIT.awaitingApproval : EXIT.ok;
  },

  lookup: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    if (positional.length !== 1) throw new UsageError('usage: agent-wallet lookup USERNAME|ADDRESS');
    const { api } = profileClient(ctx);
    const res = await api.call<Record<string, unknown>>('bot', 'lookup', { username: positional[0] });
    printData(ctx, res);
    return res.found ? EXIT.ok : EXIT.error;
  },

  afford: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    if (positional.length !== 2) throw new UsageError('usage: agent-wallet afford TO AMOUNT');
    const { api } = profileClient(ctx);
    printData(ctx, await api.call('bot', 'can_i_afford', { to: positional[0], amount: positional[1] }));
    return EXIT.ok;
  },
};
