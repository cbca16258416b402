/**
 * The pure rules of earning (DESIGN §8), with no I/O: expiry parsing, itemised totals, paylink
 * short codes, the Solana Pay transfer-request URL, and the verdict on a transaction that carries
 * a paylink's reference key. The paylink job and the actions do the I/O around them.
 */
import { getAddressDecoder, type Address } from '@solana/kit';
import { base32 } from '../contract/ids.ts';
import type { PaylinkStatus, RejectionReason } from '../db/paylinks.ts';
import { formatUsdc, parseUsdc } from '../domain/money.ts';
import type { TokenDelta } from '../solana/port.ts';

/** A paylink lives 7 days unless `expires_in` says otherwise; at most 90 days. */
export const DEFAULT_EXPIRES_IN_SECONDS = 7 * 24 * 3600;
export const MAX_EXPIRES_IN_SECONDS = 90 * 24 * 3600;

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/** `expires_in` as seconds: a whole number of seconds, or "90s", "30m", "24h", "7d", "2w"; 1 s … 90 days. */
export function parseExpiresIn(value: number | string): Parsed<number> {
  let seconds: number;
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return { ok: false, reason: 'must be a whole number of seconds or a duration like "24h" or "7d"' };
    seconds = value;
  } else {
    const m = /^\s*([0-9]{1,9})\s*([smhdw]?)\s*$/i.exec(value);
    if (!m) return { ok: false, reason: `"${value.slice(0, 32)}" is not a duration; use seconds or a number with s, m, h, d or w (e.g. "24h", "7d")` };
    seconds = Number(m[1]) * UNIT_SECONDS[(m[2] || 's').toLowerCase()]!;
  }
  if (seconds < 1) return { ok: false, reason: 'must be at least 1 second' };
  if (seconds > MAX_EXPIRES_IN_SECONDS) return { ok: false, reason: `must be at most ${MAX_EXPIRES_IN_SECONDS / 86_400} days` };
  return { ok: true, value: seconds };
}

/** One line of an itemised paylink, in micro-USDC. */
export interface Item {
  description: string;
  price: bigint;
  quantity: number;
}

/** Items as they arrive on the wire. */
export interface ItemInput {
  description: string;
  price: number | string;
  quantity?: number;
}

/** Validates items and sums price × quantity. Errors name the item (JSON pointer). */
export function priceItems(items: readonly ItemInput[]): { ok: true; items: Item[]; total: bigint } | { ok: false; field: string; reason: string } {
  const out: Item[] = [];
  let total = 0n;
  for (const [i, item] of items.entries()) {
    const description = item.description.trim();
    if (description === '') return { ok: false, field: `/items/${i}/description`, reason: 'must not be empty' };
    const price = parseUsdc(item.price);
    if (!price.ok) return { ok: false, field: `/items/${i}/price`, reason: price.reason };
    if (price.micro <= 0n) return { ok: false, field: `/items/${i}/price`, reason: 'must be greater than 0' };
    const quantity = item.quantity ?? 1;
    out.push({ description, price: price.micro, quantity });
    total += price.micro * BigInt(quantity);
  }
  return { ok: true, items: out, total };
}

/** Items as stored (prices as micro-USDC strings: JSON has no bigint). */
export function itemsToJson(items: readonly Item[]): string {
  return JSON.stringify(items.map((i) => ({ description: i.description, price: i.price.toString(), quantity: i.quantity })));
}

export function itemsFromJson(json: string | null): Item[] {
  if (json === null) return [];
  return (JSON.parse(json) as { description: string; price: string; quantity: number }[]).map((i) => ({ description: i.description, price: BigInt(i.price), quantity: i.quantity }));
}

/** Characters of a short code: 10 of lower-case Crockford base32 (50 bits; no i, l, o, u). */
export const SHORT_CODE_LENGTH = 10;

/** A fresh random short code such as `k7qm4tzp2x`. */
export function newShortCode(random: Uint8Array = crypto.getRandomValues(new Uint8Array(7))): string {
  return base32(random).slice(0, SHORT_CODE_LENGTH);
}

/**
 * A short code as a human may type it: case, dashes and spaces ignored, and the look-alikes
 * Crockford base32 maps (i, l → 1; o → 0). Null when it cannot be a short code.
 */
export function normalizeShortCode(raw: string): string | null {
  const code = raw.toLowerCase().replace(/[\s-]/g, '').replace(/[il]/g, '1').replace(/o/g, '0');
  return new RegExp(`^[0-9a-hjkmnp-tv-z]{${SHORT_CODE_LENGTH}}$`).test(code) ? code : null;
}

/** A fresh Solana Pay reference key: 32 random bytes as a base58 address (never an account on chain). */
export function newReferenceKey(random: Uint8Array = crypto.getRandomValues(new Uint8Array(32))): Address {
  return getAddressDecoder().decode(random);
}

/**
 * The Solana Pay transfer-request URL (https://docs.solanapay.com/spec):
 * `solana:<recipient>?amount=<decimal>&spl-token=<mint>&reference=<key>&label=<…>&message=<…>`.
 * `amount` is left out for an open-amount paylink (the wallet asks the payer), `reference` when
 * none is wanted; label and message are URL-encoded.
 */
export function solanaPayUrl(p: { recipient: string; amount: bigint | null; mint: string; reference: string | null; label: string; message: string }): string {
  const q: string[] = [];
  if (p.amount !== null) q.push(`amount=${formatUsdc(p.amount)}`);
  q.push(`spl-token=${p.mint}`);
  if (p.reference !== null) q.push(`reference=${p.reference}`);
  q.push(`label=${encodeURIComponent(p.label)}`, `message=${encodeURIComponent(p.message)}`);
  return `solana:${p.recipient}?${q.join('&')}`;
}

/** What a transaction carrying a paylink's reference key did for the paylink. */
export type PaymentVerdict =
  | { kind: 'paid'; amount: bigint; payer: string | null; from: 'open' | 'expired' }
  | { kind: 'rejected'; reason: RejectionReason; amount: bigint | null; mint: string | null; payer: string | null };

/**
 * Judges a landed transaction that carries the paylink's reference key, from its token balance
 * changes (`getTokenTransfersOf`). It pays the paylink only when it credits the payee's USDC token
 * account (right mint, right recipient) with at least the paylink amount (any amount for an
 * open-amount paylink), it landed no later than the expiry (block time; `nowMs` when the cluster
 * gives none), and the paylink is open — or expired by the time it is judged but paid in time.
 * Everything else is a rejection with its reason.
 */
export function judgePayment(
  paylink: { status: PaylinkStatus; amount: bigint | null; expiresAt: number },
  transfer: { deltas: readonly TokenDelta[]; blockTime: bigint | null },
  ctx: { usdcMint: string; payee: string; payeeTokenAccount: string; nowMs: number },
): PaymentVerdict {
  const credit = transfer.deltas.find((d) => d.account === ctx.payeeTokenAccount && d.mint === ctx.usdcMint && d.delta > 0n);
  if (!credit) {
    const other = transfer.deltas.find((d) => d.owner === ctx.payee && d.delta > 0n);
    const payer = other ? (transfer.deltas.find((d) => d.mint === other.mint && d.delta < 0n)?.owner ?? null) : null;
    return other
      ? { kind: 'rejected', reason: 'wrong_mint', amount: other.delta, mint: other.mint, payer }
      : { kind: 'rejected', reason: 'not_to_payee', amount: null, mint: null, payer: null };
  }
  const payer = transfer.deltas.find((d) => d.mint === ctx.usdcMint && d.delta < 0n)?.owner ?? null;
  const reject = (reason: RejectionReason): PaymentVerdict => ({ kind: 'rejected', reason, amount: credit.delta, mint: credit.mint, payer });
  if (paylink.status === 'cancelled') return reject('cancelled');
  if (paylink.status === 'paid') return reject('already_paid');
  const landedAt = transfer.blockTime === null ? ctx.nowMs : Number(transfer.blockTime) * 1000;
  if (landedAt > paylink.expiresAt) return reject('expired');
  if (paylink.amount !== null && credit.delta < paylink.amount) return reject('underpaid');
  return { kind: 'paid', amount: credit.delta, payer, from: paylink.status };
}

/** Why a rejection happened, in words for the payee. */
export const REJECTION_TEXT: Record<RejectionReason, string> = {
  underpaid: 'the amount was less than the paylink asks',
  wrong_mint: 'the payment was in another token, not USDC',
  not_to_payee: "the transaction carries the paylink's reference but pays nothing to the payee's USDC account",
  expired: 'the payment landed after the paylink expired',
  cancelled: 'the paylink had been cancelled',
  already_paid: 'the paylink was already paid',
};

/**
 * Which open fund requests a deposit of `amount` fulfils: oldest first, each one whose amount
 * still fits in what is left of the deposit.
 */
export function fundRequestsCovered<T extends { amount: bigint }>(open: readonly T[], amount: bigint): T[] {
  const out: T[] = [];
  let left = amount;
  for (const r of open) {
    if (r.amount <= left) {
      out.push(r);
      left -= r.amount;
    }
  }
  return out;
}
