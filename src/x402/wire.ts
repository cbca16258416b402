/**
 * The x402 wire formats, read and written by hand (the official packages are test-only here):
 *
 * - v2: the 402 carries `PAYMENT-REQUIRED: base64(JSON {x402Version: 2, resource, accepts: [...]})`,
 *   each option `{scheme, network (CAIP-2), amount (atomic string), asset, payTo, maxTimeoutSeconds,
 *   extra: {feePayer, memo?, …}}` (a blockhash the seller suggests is not used: the buyer builds on
 *   its own view of the chain, so expiry is its own to judge); the buyer retries with
 *   `PAYMENT-SIGNATURE: base64(JSON {x402Version: 2, resource, accepted, payload: {transaction}})`
 *   where `accepted` is the option exactly as offered; the seller answers `PAYMENT-RESPONSE`.
 * - v1: the 402 body is `{x402Version: 1, accepts: [...]}` with `maxAmountRequired` and network
 *   names (`solana`, `solana-devnet`); the buyer retries with `X-PAYMENT: base64(JSON
 *   {x402Version: 1, scheme, network, payload: {transaction}})`; the answer is `X-PAYMENT-RESPONSE`.
 *
 * Everything here is pure: no I/O, no clock. A seller is untrusted input, so every field used to
 * move money is checked before it is used, and refusals say what was offered.
 */
import { getBase58Encoder, isAddress } from '@solana/kit';
import { isObject } from '../domain/json.ts';

export type X402Version = 1 | 2;

/** One payment option of a 402, with the fields this service uses, and the option as offered. */
export interface X402Option {
  scheme: string;
  network: string;
  /** Atomic units (USDC: micro-USDC), as a decimal string. */
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number | null;
  extra: Record<string, unknown>;
  /** The option exactly as the seller sent it (v2 `accepted` must be this object). */
  raw: Record<string, unknown>;
}

/** A parsed 402 challenge. */
export interface PaymentRequired {
  version: X402Version;
  /** v2 `resource` (an object with `url`, …); v1: the first option's `resource` string, if any. */
  resource: unknown;
  error: string | null;
  options: X402Option[];
  /** The decoded challenge as the seller sent it (stored with the purchase). */
  raw: Record<string, unknown>;
}

/** What this service can pay: the `exact` scheme on its own network, in its USDC mint. */
export interface PayableTarget {
  /** CAIP-2 id for v2 (null: x402 v2 not possible on this network). */
  caip2: string | null;
  /** v1 network name (null: x402 v1 not possible on this network). */
  v1Network: string | null;
  mint: string;
}

/** The option chosen to pay, checked: amount positive u64, addresses valid, fee payer given. */
export interface ChosenOption extends X402Option {
  amountAtomic: bigint;
  feePayer: string;
  /** The seller's memo the transfer must carry (extra.memo), if any. */
  memo: string | null;
}

const U64_MAX = (1n << 64n) - 1n;
/** The reference client refuses a seller memo longer than this. */
export const MAX_MEMO_BYTES = 256;

/** Decodes base64(JSON) as the packages write it; throws when it is not. */
export function decodeBase64Json(value: string): unknown {
  const trimmed = value.trim();
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(trimmed)) throw new Error('not base64');
  return JSON.parse(Buffer.from(trimmed, 'base64').toString('utf8'));
}

/** base64(JSON) as the packages write it (standard alphabet, padded). */
export function encodeBase64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** A base58 string that decodes to exactly 32 bytes. */
export function isAddress32(value: unknown): value is string {
  if (typeof value !== 'string' || !isAddress(value)) return false;
  return getBase58Encoder().encode(value).length === 32;
}

/** A base58 transaction signature (64 bytes). */
export function isSignature(value: unknown): value is string {
  if (typeof value !== 'string' || value.length < 64 || value.length > 90) return false;
  try {
    return getBase58Encoder().encode(value).length === 64;
  } catch {
    return false;
  }
}

/** Reads one offered option (v2 `amount`, v1 `maxAmountRequired`); null when it is not an object. */
export function readOption(raw: unknown, version: X402Version): X402Option | null {
  if (!isObject(raw)) return null;
  const amount = version === 2 ? raw.amount : raw.maxAmountRequired;
  return {
    scheme: typeof raw.scheme === 'string' ? raw.scheme : '',
    network: typeof raw.network === 'string' ? raw.network : '',
    amount: typeof amount === 'string' ? amount : typeof amount === 'number' ? String(amount) : '',
    asset: typeof raw.asset === 'string' ? raw.asset : '',
    payTo: typeof raw.payTo === 'string' ? raw.payTo : '',
    maxTimeoutSeconds: typeof raw.maxTimeoutSeconds === 'number' ? raw.maxTimeoutSeconds : null,
    extra: isObject(raw.extra) ? raw.extra : {},
    raw,
  };
}

function fromDecoded(decoded: unknown, version: X402Version): PaymentRequired | null {
  if (!isObject(decoded) || decoded.x402Version !== version || !Array.isArray(decoded.accepts)) return null;
  const options = decoded.accepts.map((o) => readOption(o, version)).filter((o): o is X402Option => o !== null);
  const firstResource = version === 1 && isObject(decoded.accepts[0]) ? decoded.accepts[0].resource : undefined;
  return {
    version,
    resource: version === 2 ? decoded.resource : firstResource,
    error: typeof decoded.error === 'string' ? decoded.error.slice(0, 500) : null,
    options,
    raw: decoded,
  };
}

/**
 * Reads the payment requirements of a 402 answer: the v2 `PAYMENT-REQUIRED` header first, then a
 * v1 body `{x402Version: 1, accepts}` (a v2 body is accepted too). Null when neither is there.
 */
export function parsePaymentRequired(headers: Headers, body: Uint8Array): PaymentRequired | null {
  const header = headers.get('payment-required');
  if (header) {
    try {
      const parsed = fromDecoded(decodeBase64Json(header), 2);
      if (parsed) return parsed;
    } catch {
      // Fall through to the body.
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return null;
  }
  return fromDecoded(json, 1) ?? fromDecoded(json, 2);
}

/** How an option reads in an error message: "exact on solana:… in <asset> for 10000". */
export function describeOption(o: X402Option): string {
  return `${o.scheme || '(no scheme)'} on ${o.network || '(no network)'} in ${o.asset || '(no asset)'} for ${o.amount || '(no amount)'}`;
}

/**
 * Picks the Solana `exact` option for `target` (network and USDC mint) and checks it. Returns
 * the reason when nothing offered is payable here; the reason names every option offered.
 */
export function chooseOption(req: PaymentRequired, target: PayableTarget): { ok: true; option: ChosenOption } | { ok: false; reason: string } {
  const network = req.version === 2 ? target.caip2 : target.v1Network;
  const offered = req.options.map(describeOption).join('; ') || 'no options';
  if (network === null) return { ok: false, reason: `this service's Solana network has no x402 v${req.version} identifier; offered: ${offered}` };
  const candidates = req.options.filter((o) => o.scheme === 'exact' && o.network === network && o.asset === target.mint);
  if (candidates.length === 0) {
    return { ok: false, reason: `no "exact" option on ${network} in USDC (${target.mint}); offered: ${offered}` };
  }
  let problem = '';
  for (const o of candidates) {
    const checked = checkOption(o);
    if (checked.ok) return checked;
    problem = checked.reason;
  }
  return { ok: false, reason: `the USDC option on ${network} is not usable: ${problem}` };
}

function checkOption(o: X402Option): { ok: true; option: ChosenOption } | { ok: false; reason: string } {
  if (!/^[0-9]{1,20}$/.test(o.amount)) return { ok: false, reason: `amount "${o.amount.slice(0, 40)}" is not an atomic integer` };
  const amountAtomic = BigInt(o.amount);
  if (amountAtomic <= 0n || amountAtomic > U64_MAX) return { ok: false, reason: `amount ${o.amount} is out of range` };
  if (!isAddress32(o.payTo)) return { ok: false, reason: `payTo "${String(o.payTo).slice(0, 64)}" is not a Solana address` };
  const feePayer = o.extra.feePayer;
  if (!isAddress32(feePayer)) return { ok: false, reason: 'extra.feePayer (the facilitator that pays the fee) is missing or not a Solana address' };
  let memo: string | null = null;
  if (o.extra.memo !== undefined && o.extra.memo !== null && o.extra.memo !== '') {
    if (typeof o.extra.memo !== 'string') return { ok: false, reason: 'extra.memo is not a string' };
    if (Buffer.byteLength(o.extra.memo) > MAX_MEMO_BYTES) return { ok: false, reason: `extra.memo is longer than ${MAX_MEMO_BYTES} bytes` };
    memo = o.extra.memo;
  }
  return { ok: true, option: { ...o, amountAtomic, feePayer, memo } };
}

/**
 * The payment header for the retried request: v2 `PAYMENT-SIGNATURE` with `accepted` = the option
 * as offered; v1 `X-PAYMENT`. `transaction` is the base64 wire transaction (fee payer slot empty).
 */
export function paymentHeader(version: X402Version, resource: unknown, accepted: Record<string, unknown>, transaction: string, extensions?: Record<string, unknown>): { name: string; value: string } {
  if (version === 2) return { name: 'PAYMENT-SIGNATURE', value: encodeBase64Json(paymentPayloadV2(resource, accepted, transaction, extensions)) };
  return { name: 'X-PAYMENT', value: encodeBase64Json({ x402Version: 1, scheme: accepted.scheme, network: accepted.network, payload: { transaction } }) };
}

/** The extension a v2 seller declares to take a client idempotency key (`@x402/extensions` payment-identifier). */
export const PAYMENT_IDENTIFIER = 'payment-identifier';
/** A payment identifier: 16–128 letters, digits, - or _ (the extension's schema). */
export const PAYMENT_ID = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * The payment-identifier extension of a purchase's payload: the seller's declaration echoed with
 * our `id` added — null when the seller declared none (v1 has no extensions). The id names the
 * purchase, so every send of its one signed transfer carries the same one, and a seller that
 * deduplicates by it answers a retry with the first answer.
 */
export function paymentIdentifierExtension(challenge: Record<string, unknown>, id: string): Record<string, unknown> | null {
  const declared = isObject(challenge.extensions) ? challenge.extensions[PAYMENT_IDENTIFIER] : undefined;
  if (!isObject(declared) || !isObject(declared.info) || typeof declared.info.required !== 'boolean') return null;
  if (!PAYMENT_ID.test(id)) throw new Error(`payment identifier ${id} is not 16–128 letters, digits, - or _`);
  return { [PAYMENT_IDENTIFIER]: { ...declared, info: { ...declared.info, id } } };
}

/** The v2 `PaymentPayload` object (what PAYMENT-SIGNATURE carries base64-encoded, and MCP's `_meta["x402/payment"]` as is). */
export function paymentPayloadV2(resource: unknown, accepted: Record<string, unknown>, transaction: string, extensions?: Record<string, unknown>): Record<string, unknown> {
  return { x402Version: 2, ...(resource === undefined ? {} : { resource }), accepted, payload: { transaction }, ...(extensions ? { extensions } : {}) };
}

/** A v2 `PaymentRequired` given as an object (a paid MCP tool's `structuredContent`); null when it is not one. */
export function paymentRequiredFrom(decoded: unknown): PaymentRequired | null {
  return fromDecoded(decoded, 2);
}

/** The seller's settlement receipt (`PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE`), decoded. */
export interface PaymentResponse {
  success: boolean | null;
  /** The transaction signature, when it is one. */
  transaction: string | null;
  network: string | null;
  payer: string | null;
  errorReason: string | null;
}

/** Decodes the receipt header; null when there is none or it is unreadable. */
export function parsePaymentResponse(headers: Headers): PaymentResponse | null {
  const header = headers.get('payment-response') ?? headers.get('x-payment-response');
  if (!header) return null;
  let decoded: unknown;
  try {
    decoded = decodeBase64Json(header);
  } catch {
    return null;
  }
  return readPaymentResponse(decoded);
}

/** A receipt given as an object (MCP's `_meta["x402/payment-response"]`); null when it is not one. */
export function readPaymentResponse(decoded: unknown): PaymentResponse | null {
  if (!isObject(decoded)) return null;
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v.slice(0, 200) : null);
  return {
    success: typeof decoded.success === 'boolean' ? decoded.success : null,
    transaction: isSignature(decoded.transaction) ? decoded.transaction : null,
    network: str(decoded.network),
    payer: str(decoded.payer),
    errorReason: str(decoded.errorReason),
  };
}
