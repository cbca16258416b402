/**
 * The paywall's priced routes (`agent-wallet merchant gate --route "GET /api/*=0.01"`): a method
 * (or `*` for any), a path where `*` stands for any run of characters, and a USDC price. Pure:
 * parsed once at start, matched per request; the first route that matches prices the request.
 */
import { parseUsdc } from './money.ts';

export interface PricedRoute {
  /** Upper-case method, or `*` for any. */
  method: string;
  pattern: string;
  /** Micro-USDC, > 0. */
  price: bigint;
  /** The route as given, for messages and the 402's description. */
  text: string;
}

export type RouteParse = { ok: true; route: PricedRoute } | { ok: false; reason: string };

const METHOD = /^(\*|GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)$/;

/** Parses "METHOD /path*=price"; the reason says what is wrong with the text. */
export function parseRoute(text: string): RouteParse {
  const m = /^\s*(\S+)\s+(\/\S*)\s*=\s*(\S+)\s*$/.exec(text);
  if (!m) return { ok: false, reason: `"${text}" is not METHOD /path=PRICE, e.g. "GET /api/*=0.01"` };
  const method = m[1]!.toUpperCase();
  if (!METHOD.test(method)) return { ok: false, reason: `"${m[1]}" is not an HTTP method (GET, POST, … or * for any)` };
  const price = parseUsdc(m[3]);
  if (!price.ok) return { ok: false, reason: `the price "${m[3]}" ${price.reason}` };
  if (price.micro === 0n) return { ok: false, reason: 'the price must be greater than 0 (leave a free path out of the routes)' };
  return { ok: true, route: { method, pattern: m[2]!, price: price.micro, text: `${method} ${m[2]}=${m[3]}` } };
}

function patternMatches(pattern: string, path: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === path;
  if (!path.startsWith(parts[0]!) || !path.endsWith(parts.at(-1)!)) return false;
  let at = parts[0]!.length;
  const end = path.length - parts.at(-1)!.length;
  for (const part of parts.slice(1, -1)) {
    const found = path.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return at <= end;
}

/** The first route pricing `method path`; null: the request is free. HEAD is priced as GET. */
export function priceOf(routes: readonly PricedRoute[], method: string, path: string): PricedRoute | null {
  const m = method.toUpperCase();
  return routes.find((r) => (r.method === '*' || r.method === m || (m === 'HEAD' && r.method === 'GET')) && patternMatches(r.pattern, path)) ?? null;
}
