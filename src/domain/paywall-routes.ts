/**
 * The paywall's priced routes (`agent-wallet merchant gate --route "GET /api/*=0.01"`): a method
 * (or `*` for any), a path where `*` stands for any run of characters, and a USDC price. Pure:
 * parsed once at start, matched per request; the first route that matches prices the request.
 *
 * Routes match the routing path (routingPath), not the path as sent: upstreams route many
 * spellings of one path to the same handler (Express ignores case and a trailing slash, Hono
 * decodes escapes), and every spelling must pay. Folding more spellings together than an upstream
 * does can only price a free path; a spelling that upstreams read in different ways is refused.
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
  const pattern = routingPath(m[2]!);
  if (!pattern.ok) return { ok: false, reason: `the path "${m[2]}" ${pattern.reason}` };
  return { ok: true, route: { method, pattern: pattern.path, price: price.micro, text: `${method} ${m[2]}=${m[3]}` } };
}

export type RoutingPath = { ok: true; path: string } | { ok: false; reason: string };

/** Escapes whose byte ends or splits a path segment, or decodes again, differently from one upstream to the next. */
const AMBIGUOUS_ESCAPE = /%(2f|5c|25|[01][0-9a-f]|7f)/i;

/**
 * The path as routers read it: escapes decoded, lower case, `.` and `..` segments resolved, empty
 * segments (a doubled or trailing slash) dropped. Refused: an escaped `/`, `\` or `%`, a control
 * character, a `%` that starts no escape, escapes that are not UTF-8.
 */
export function routingPath(path: string): RoutingPath {
  const badEscape = /%(?![0-9a-f]{2})/i.exec(path);
  if (badEscape) return { ok: false, reason: `has a "%" at position ${badEscape.index} that starts no %XX escape` };
  const ambiguous = AMBIGUOUS_ESCAPE.exec(path);
  if (ambiguous) return { ok: false, reason: `has the escape "${ambiguous[0]}" (an escaped slash, backslash, percent sign or control character), which upstreams read differently` };
  if (/[\x00-\x1f\x7f\\]/.test(path)) return { ok: false, reason: 'has a backslash or a control character' };
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return { ok: false, reason: 'has escapes that are not UTF-8' };
  }
  const segments: string[] = [];
  for (const segment of decoded.toLowerCase().split('/')) {
    if (segment === '..') segments.pop();
    else if (segment !== '' && segment !== '.') segments.push(segment);
  }
  return { ok: true, path: `/${segments.join('/')}` };
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

/**
 * The first route pricing `method path` (`path` a routingPath); null: the request is free. HEAD is
 * priced as GET. A path matches with or without a trailing slash: `/api/` routes where `/api/*` does.
 */
export function priceOf(routes: readonly PricedRoute[], method: string, path: string): PricedRoute | null {
  const m = method.toUpperCase();
  const slashed = path === '/' ? path : `${path}/`;
  return routes.find((r) => (r.method === '*' || r.method === m || (m === 'HEAD' && r.method === 'GET')) && (patternMatches(r.pattern, path) || patternMatches(r.pattern, slashed))) ?? null;
}
