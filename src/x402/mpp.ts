/**
 * MPP, the `Payment` HTTP authentication scheme (tempoxyz/mpp-specs: draft-httpauth-payment-00,
 * and draft-solana-charge-00 for method `solana`, intent `charge`), read and written by hand: no
 * official SDK covers Solana (`mppx` 0.11 does not).
 *
 * - Challenge: a 402 with `WWW-Authenticate: Payment id=…, realm=…, method="solana",
 *   intent="charge", request=<base64url(JCS JSON)>[, expires=…]`; the request names `amount`
 *   (base units), `currency` (the mint), `recipient` (the owner of the destination token account),
 *   `externalId` (→ the memo) and `methodDetails` {network, decimals, tokenProgram, feePayer,
 *   feePayerKey, splits}.
 * - Credential (pull mode): `Authorization: Payment <base64url(JCS {challenge, source, payload:
 *   {type: "transaction", transaction}})>`; the server co-signs as fee payer and sends.
 * - Receipt: `Payment-Receipt: <base64url(JCS {status, method, timestamp, reference})>`, the
 *   reference being the transaction signature.
 *
 * A charge is paid like an x402 `exact` option — the same transfer layout (compute budget, one
 * transferChecked to the recipient's token account, a memo), the same guard rails and FROST path —
 * so it is read into the same option shape. Only what that shape can pay is accepted: USDC of this
 * network through the Token Program, the seller paying the fee (`feePayer: true`, as x402
 * facilitators do), no splits. Pure: no I/O, no clock but the `now` given.
 */
import type { NetworkName } from '../solana/networks.ts';
import { isAddress32, type PaymentRequired, type PaymentResponse, type X402Option } from './wire.ts';
import { isObject } from '../domain/json.ts';

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
/** The MPP network names each of our networks answers to (simnet holds devnet's USDC). */
const MPP_NETWORKS: Record<NetworkName, readonly string[]> = { mainnet: ['mainnet-beta'], devnet: ['devnet'], simnet: ['devnet', 'localnet'], custom: [] };
/** Our memo limit for a seller's reference (the x402 client's); the spec allows up to 566 bytes. */
const MAX_EXTERNAL_ID_BYTES = 256;

/** RFC 8785 JSON canonicalization for the JSON this scheme carries (objects, arrays, strings, numbers, booleans, null). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

function decodeBase64url(value: string): unknown {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(value)) throw new Error('not base64url');
  return JSON.parse(Buffer.from(value.replace(/=+$/, ''), 'base64url').toString('utf8'));
}

/**
 * The auth-params of each `Payment` challenge in a `WWW-Authenticate` value (RFC 9110 §11.6.1:
 * `scheme param=value, param="quoted", …, OtherScheme …`). Parameter names are lower-cased.
 */
export function paymentChallenges(header: string): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  let current: Record<string, string> | null = null;
  let i = 0;
  const skip = (chars: RegExp) => {
    while (i < header.length && chars.test(header[i]!)) i++;
  };
  const token = () => {
    const start = i;
    while (i < header.length && /[A-Za-z0-9!#$%&'*+.^_`|~-]/.test(header[i]!)) i++;
    return header.slice(start, i);
  };
  while (i < header.length) {
    skip(/[\s,]/);
    const name = token();
    if (!name) {
      i++;
      continue;
    }
    skip(/[ \t]/);
    if (header[i] !== '=') {
      // A scheme name: the params that follow are its own.
      current = name.toLowerCase() === 'payment' ? {} : null;
      if (current) out.push(current);
      continue;
    }
    i++;
    skip(/[ \t]/);
    let value = '';
    if (header[i] === '"') {
      for (i++; i < header.length && header[i] !== '"'; i++) value += header[i] === '\\' ? header[++i] ?? '' : header[i];
      i++;
    } else {
      const start = i;
      while (i < header.length && header[i] !== ',') i++;
      value = header.slice(start, i).trim();
    }
    if (current) current[name.toLowerCase()] = value;
  }
  return out;
}

/** A Solana charge read from a 402: the challenge as sent (echoed in the credential) and the decoded request. */
export interface MppCharge {
  challenge: Record<string, string>;
  request: Record<string, unknown>;
}

/**
 * Reads a Solana charge from a 402's `WWW-Authenticate` and returns it as a payment requirement of
 * one `exact` option on `caip2` — or `{refused}` naming why this wallet cannot pay what is offered,
 * or null when the answer carries no Payment challenge at all.
 */
export function parseMppCharge(headers: Headers, target: { network: NetworkName; caip2: string | null; mint: string }, now: Date): PaymentRequired | { refused: string } | null {
  const header = headers.get('www-authenticate');
  if (!header) return null;
  const challenges = paymentChallenges(header);
  if (challenges.length === 0) return null;
  const offered = challenges.map((c) => `${c.method ?? '?'}/${c.intent ?? '?'}`).join(', ');
  const challenge = challenges.find((c) => c.method === 'solana' && c.intent === 'charge');
  if (!challenge) return { refused: `MPP offers ${offered}; this wallet pays method solana, intent charge` };
  if (!challenge.id || !challenge.request) return { refused: 'the MPP challenge has no id or no request' };
  if (challenge.expires && !(Date.parse(challenge.expires) > now.getTime())) return { refused: `the MPP challenge expired at ${challenge.expires}` };
  let request: unknown;
  try {
    request = decodeBase64url(challenge.request);
  } catch {
    return { refused: 'the MPP request is not base64url JSON' };
  }
  if (!isObject(request)) return { refused: 'the MPP request is not a JSON object' };
  const details = isObject(request.methodDetails) ? request.methodDetails : {};
  const network = typeof details.network === 'string' ? details.network : 'mainnet-beta';
  if (!MPP_NETWORKS[target.network].includes(network) || target.caip2 === null) return { refused: `the MPP charge is on ${network}; this wallet pays on ${target.network}` };
  if (request.currency !== target.mint) return { refused: `the MPP charge is in ${String(request.currency).slice(0, 64)}; this wallet pays USDC (${target.mint})` };
  if (details.decimals !== 6) return { refused: `the MPP charge names ${String(details.decimals)} decimals for USDC, which has 6` };
  if (details.tokenProgram !== undefined && details.tokenProgram !== TOKEN_PROGRAM) return { refused: `the MPP charge names token program ${String(details.tokenProgram).slice(0, 64)}; USDC is the Token Program's` };
  if (Array.isArray(details.splits) && details.splits.length > 0) return { refused: 'the MPP charge splits the payment; this wallet pays one recipient' };
  if (details.feePayer !== true || !isAddress32(details.feePayerKey)) return { refused: 'the MPP charge does not sponsor the fee (methodDetails.feePayer with feePayerKey); this wallet pays sellers that do, as x402 facilitators do' };
  if (typeof request.amount !== 'string') return { refused: 'the MPP charge has no amount string' };
  const externalId = request.externalId;
  if (externalId !== undefined && (typeof externalId !== 'string' || Buffer.byteLength(externalId) > MAX_EXTERNAL_ID_BYTES)) {
    return { refused: `the MPP externalId is not a string of at most ${MAX_EXTERNAL_ID_BYTES} bytes` };
  }
  // The x402 v2 option shape, so the one payment path (checks, message, signing) pays it.
  const raw: Record<string, unknown> = {
    scheme: 'exact',
    network: target.caip2,
    amount: request.amount,
    asset: request.currency,
    payTo: request.recipient,
    maxTimeoutSeconds: null,
    extra: { feePayer: details.feePayerKey, ...(externalId ? { memo: externalId } : {}) },
  };
  const option: X402Option = {
    scheme: 'exact',
    network: target.caip2,
    amount: request.amount,
    asset: String(request.currency),
    payTo: typeof request.recipient === 'string' ? request.recipient : '',
    maxTimeoutSeconds: null,
    extra: raw.extra as Record<string, unknown>,
    raw,
  };
  const description = typeof request.description === 'string' ? request.description.slice(0, 256) : undefined;
  return { version: 2, resource: description ? { description } : undefined, error: null, options: [option], raw: { mpp: { challenge, request } satisfies MppCharge } };
}

/** The stored charge of a purchase's requirements, when it was an MPP one. */
export function mppChargeOf(requirements: Record<string, unknown>): MppCharge | null {
  const mpp = requirements.mpp;
  return isObject(mpp) && isObject(mpp.challenge) && isObject(mpp.request) ? (mpp as unknown as MppCharge) : null;
}

/** The `Authorization: Payment` credential for the charge: the challenge echoed, our partially signed transaction. */
export function mppCredential(charge: MppCharge, transaction: string, source: string): { name: string; value: string } {
  const echo: Record<string, string> = {};
  for (const k of ['id', 'realm', 'method', 'intent', 'request', 'expires', 'digest', 'opaque']) if (charge.challenge[k] !== undefined) echo[k] = charge.challenge[k]!;
  return { name: 'Authorization', value: `Payment ${base64url(canonicalJson({ challenge: echo, source, payload: { type: 'transaction', transaction } }))}` };
}

/** The seller's `Payment-Receipt`, as the receipt the x402 path believes only against the chain. */
export function parseMppReceipt(headers: Headers): PaymentResponse | null {
  const header = headers.get('payment-receipt');
  if (!header) return null;
  let decoded: unknown;
  try {
    decoded = decodeBase64url(header.trim());
  } catch {
    return null;
  }
  if (!isObject(decoded)) return null;
  const reference = typeof decoded.reference === 'string' && decoded.reference.length <= 128 ? decoded.reference : null;
  return { success: decoded.status === 'success', transaction: reference, network: null, payer: null, errorReason: decoded.status === 'success' ? null : String(decoded.status ?? 'no status').slice(0, 100) };
}
