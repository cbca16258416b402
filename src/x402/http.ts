/**
 * x402 requests to sellers, always through the one outbound client (src/net/outbound.ts: SSRF
 * rules, no redirects, connect/total deadlines, byte caps), and how their answers are shown to
 * the agent: status, an allowlist of headers, and the body (UTF-8 text or base64, capped, with a
 * `truncated` flag).
 */
import { AppError, invalid } from '../errors.ts';
import type { Config } from '../config.ts';
import { createOutbound, OutboundError, type Outbound, type OutboundResponse } from '../net/outbound.ts';

/** A probe (x402_prepare, catalog checks) reads at most this much (DESIGN §8: 64 KiB). */
export const PROBE_MAX_BYTES = 64 * 1024;
/** The paid answer (x402_settle) is kept and returned up to this size. */
export const PAID_MAX_BYTES = 1024 * 1024;

/** Response headers passed on to the agent; everything else (cookies included) is dropped. */
const PASSED_HEADERS = [
  'content-type',
  'content-length',
  'content-language',
  'content-disposition',
  'cache-control',
  'etag',
  'last-modified',
  'date',
  'expires',
  'retry-after',
  'location',
  'link',
  'x-request-id',
  'payment-required',
  'payment-response',
  'x-payment-response',
];

/** Request headers the agent may not set: this module owns them, or they carry a payment. */
const FORBIDDEN_REQUEST_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'payment-signature', 'x-payment']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const MAX_HEADERS = 30;

/** What is sent to the seller, and repeated with the payment header at settle time. */
export interface UpstreamRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

const clients = new WeakMap<Config['outbound'], Outbound>();

/** The outbound client for the daemon's config (one per config object). */
export function outboundFor(config: Pick<Config, 'outbound'>): Outbound {
  let client = clients.get(config.outbound);
  if (!client) {
    client = createOutbound({ allowHosts: config.outbound.allow_hosts, connectTimeoutMs: config.outbound.connect_timeout_ms, totalTimeoutMs: config.outbound.total_timeout_ms });
    clients.set(config.outbound, client);
  }
  return client;
}

/** Checks and normalises the agent's request; VALIDATION_ERROR naming the field otherwise. */
export function upstreamRequest(p: { url: string; method?: string; headers?: Record<string, string>; body?: string }): UpstreamRequest {
  let url: URL;
  try {
    url = new URL(p.url);
  } catch {
    throw invalid('/url', 'is not an absolute URL', 'Send the full URL of the paid API, e.g. https://api.example.com/joke.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('/url', `scheme ${url.protocol} is not http or https`);
  if (url.username || url.password) throw invalid('/url', 'must not carry credentials', 'Send credentials in headers instead.');
  const method = (p.method ?? (p.body === undefined ? 'GET' : 'POST')).toUpperCase();
  if (!/^[A-Z]{1,16}$/.test(method)) throw invalid('/method', `"${method.slice(0, 20)}" is not an HTTP method`);
  if ((method === 'GET' || method === 'HEAD') && p.body !== undefined) throw invalid('/body', `is not allowed with ${method}`, 'Use POST (or PUT/PATCH) to send a body.');
  const headers: Record<string, string> = {};
  const entries = Object.entries(p.headers ?? {});
  if (entries.length > MAX_HEADERS) throw invalid('/headers', `more than ${MAX_HEADERS} headers`);
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (!TOKEN.test(name)) throw invalid(`/headers/${name.slice(0, 64)}`, 'is not a valid header name');
    if (FORBIDDEN_REQUEST_HEADERS.has(lower)) throw invalid(`/headers/${name}`, 'cannot be set by the caller (the service sets it)');
    if (/[\r\n\0]/.test(value)) throw invalid(`/headers/${name}`, 'contains a line break or NUL');
    headers[lower] = value;
  }
  return { url: url.href, method, headers, ...(p.body === undefined ? {} : { body: p.body }) };
}

/** The upstream answer as the agent sees it. */
export interface UpstreamView {
  status: number;
  headers: Record<string, string>;
  /** UTF-8 text, or base64 when `body_encoding` says so. */
  body: string;
  body_encoding: 'utf8' | 'base64';
  body_bytes: number;
  truncated: boolean;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Renders a response: allowlisted headers, the (already capped) body as text or base64. */
export function upstreamView(res: Pick<OutboundResponse, 'status' | 'headers' | 'body' | 'truncated'>): UpstreamView {
  const headers: Record<string, string> = {};
  for (const name of PASSED_HEADERS) {
    const v = res.headers.get(name);
    if (v !== null) headers[name] = v.slice(0, 8192);
  }
  let body: string;
  let encoding: 'utf8' | 'base64' = 'utf8';
  try {
    // A truncated body may end inside a multi-byte character: drop at most 3 trailing bytes.
    let bytes = res.body;
    for (let cut = 0; ; cut++) {
      try {
        body = UTF8.decode(bytes);
        break;
      } catch (err) {
        if (!res.truncated || cut >= 3 || bytes.length === 0) throw err;
        bytes = bytes.subarray(0, bytes.length - 1);
      }
    }
  } catch {
    body = Buffer.from(res.body).toString('base64');
    encoding = 'base64';
  }
  return { status: res.status, headers, body: body!, body_encoding: encoding, body_bytes: res.body.length, truncated: res.truncated };
}

/**
 * An outbound failure as the API reports it. Before anything could reach the seller the message
 * says nothing was sent; `timeout` / `network_error` with `maybeSent` are for the caller to judge.
 */
export function outboundFailure(err: OutboundError, config: Pick<Config, 'outbound'>, what: string): AppError {
  switch (err.kind) {
    case 'bad_url':
      return invalid('/url', err.message, 'Send an http(s) URL with a host name or a public IP address.');
    case 'bad_request':
      return invalid('/headers', err.message);
    case 'refused_address':
      return invalid('/url', err.message, 'Use a URL on the public internet; an operator can allow a host with outbound.allow_hosts for local development.');
    case 'timeout':
      return new AppError('SERVICE_UNAVAILABLE', `${what}: ${err.message}`, {
        status: 504,
        howToFix: `The seller did not answer within ${config.outbound.total_timeout_ms} ms (outbound.total_timeout_ms); retry later.`,
        details: { reason: 'timeout' },
      });
    default:
      return new AppError('SERVICE_UNAVAILABLE', `${what}: ${err.message}`, {
        status: 502,
        howToFix: 'The seller could not be reached; check the URL and retry later.',
        details: { reason: err.kind },
      });
  }
}

/** Sends `req` (plus `extraHeaders`) through the outbound client. Throws OutboundError. */
export function sendUpstream(outbound: Outbound, req: UpstreamRequest, maxBytes: number, extraHeaders: Record<string, string> = {}): Promise<OutboundResponse> {
  return outbound.request(req.url, {
    method: req.method,
    headers: { accept: 'application/json, */*;q=0.5', 'user-agent': 'agent-wallet-x402', ...req.headers, ...extraHeaders },
    ...(req.body === undefined ? {} : { body: req.body }),
    maxBytes,
  });
}

export { OutboundError };
