/**
 * The HTTP side of simnet: JSON-RPC 2.0 framing (single and batch requests, the standard
 * -32700/-32600/-32601/-32603 errors) over Bun.serve, plus what a hosted provider does at its
 * edge: count every call, refuse calls over the rate limit with HTTP 429, and the outage
 * faults reliability tests use (HTTP 503, or calls held until the fault is cleared).
 * Loopback control calls (`simnet_stats`, `simnet_setFaults`, …) pass every fault uncounted,
 * so a test can always read the counters and clear the faults of a standalone simnet.
 */
import type { Server } from 'bun';
import { CONTROL_METHODS } from './control.ts';
import type { FaultMode, RateLimit } from './faults.ts';
import { encodeJson } from './json.ts';
import { RateLimiter } from './rate-limit.ts';
import { METHODS, type RpcContext } from './rpc.ts';
import { RpcError } from './rpc-error.ts';
import type { CallStats } from './stats.ts';

/** The listening RPC endpoint. */
export interface RpcServer {
  readonly url: string;
  readonly port: number;
  setFault(mode: FaultMode): void;
  setRateLimit(limit: RateLimit | null): void;
  /** Stops listening, closes open connections and releases calls held by a 'hang' fault. */
  stop(): Promise<void>;
}

/** Options of `serveRpc`; `context` builds the per-request handler context. */
export interface ServeOptions {
  host: string;
  port: number;
  context: (loopback: boolean) => RpcContext;
  stats: CallStats;
  log: (entry: Record<string, unknown>) => void;
}

const MAX_BODY_BYTES = 1024 * 1024;
/** What hosted providers answer over their rate limit (status 429, a JSON-RPC error with no id). */
const TOO_MANY_REQUESTS = '{"jsonrpc":"2.0","error":{"code":429,"message":"Too many requests for a specific RPC call"},"id":null}';
const JSON_HEADERS = { 'content-type': 'application/json' };

/** A request body: parsed JSON, or the marker of a body that is not JSON. */
type Body = { ok: true; value: unknown } | { ok: false };

function isLoopback(ip: string | undefined): boolean {
  if (ip === undefined) return false;
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}

function failure(id: unknown, code: number, message: string, data?: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', error: data === undefined ? { code, message } : { code, message, data }, id: id ?? null };
}

function isControl(request: unknown, loopback: boolean): boolean {
  if (!loopback || typeof request !== 'object' || request === null) return false;
  const method = (request as { method?: unknown }).method;
  return typeof method === 'string' && Object.hasOwn(CONTROL_METHODS, method);
}

/** How many billable calls the body carries: one per element of a batch, control calls excepted. */
function billable(body: Body, loopback: boolean): number {
  if (!body.ok || !Array.isArray(body.value) || body.value.length === 0) return isControl(body.ok ? body.value : null, loopback) ? 0 : 1;
  let n = 0;
  for (const request of body.value) if (!isControl(request, loopback)) n++;
  return n;
}

async function answerOne(request: unknown, ctx: RpcContext): Promise<Record<string, unknown>> {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return failure(null, -32600, 'Invalid request');
  const { id, method, params, jsonrpc } = request as Record<string, unknown>;
  if (jsonrpc !== '2.0' || typeof method !== 'string') return failure(id, -32600, 'Invalid request');
  const control = ctx.loopback && Object.hasOwn(CONTROL_METHODS, method);
  if (!control) ctx.stats.call(method);
  if (params !== undefined && params !== null && !Array.isArray(params)) return failure(id, -32602, 'Invalid params: expected an array');
  const handler = Object.hasOwn(METHODS, method) ? METHODS[method] : Object.hasOwn(CONTROL_METHODS, method) ? CONTROL_METHODS[method] : undefined;
  if (handler === undefined) return failure(id, -32601, 'Method not found');
  try {
    const result = await handler((params ?? []) as unknown[], ctx);
    return { jsonrpc: '2.0', result, id: id ?? null };
  } catch (e) {
    if (e instanceof RpcError) return failure(id, e.rpcCode, e.message, e.data);
    ctx.log({ event: 'simnet.rpc_error', method, error: (e as Error).message });
    return failure(id, -32603, 'Internal error');
  }
}

/** Answers one HTTP body of JSON-RPC (a request or a batch) with the JSON text to send back. */
async function answerRpc(body: Body, ctx: RpcContext): Promise<string> {
  if (!body.ok) return encodeJson(failure(null, -32700, 'Parse error'));
  if (!Array.isArray(body.value)) return encodeJson(await answerOne(body.value, ctx));
  if (body.value.length === 0) return encodeJson(failure(null, -32600, 'Invalid request'));
  const answers: Record<string, unknown>[] = [];
  for (const request of body.value) answers.push(await answerOne(request, ctx));
  return encodeJson(answers);
}

function parseBody(text: string): Body {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Starts the JSON-RPC endpoint (port 0 picks a free port). */
export function serveRpc(opts: ServeOptions): RpcServer {
  const { stats } = opts;
  let fault: FaultMode = null;
  let limit: { limiter: RateLimiter; retryAfter: boolean } | null = null;
  let stopped = false;
  let releaseHeld: () => void = () => {};
  let held = Promise.resolve();
  const unavailable = () => new Response('Service Unavailable', { status: 503 });

  /** Applies the outage fault: a 503 response to send, or null once the call may proceed (after any hold). */
  const outage = async (req: Request, srv: Server<undefined>): Promise<Response | null> => {
    while (fault !== null && !stopped) {
      if (fault === 'error') return unavailable();
      srv.timeout(req, 0);
      opts.log({ event: 'simnet.rpc_held' });
      await held;
    }
    return stopped ? unavailable() : null;
  };

  const server: Server<undefined> = Bun.serve({
    hostname: opts.host,
    port: opts.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    async fetch(req, srv) {
      if (req.method !== 'POST') {
        stats.httpRequests++;
        const refused = await outage(req, srv);
        if (refused !== null) return refused;
        if (req.method === 'GET' && new URL(req.url).pathname === '/health') return new Response('ok');
        return new Response('Method Not Allowed', { status: 405, headers: { allow: 'POST' } });
      }
      const loopback = isLoopback(srv.requestIP(req)?.address);
      const body = parseBody(await req.text());
      const calls = billable(body, loopback);
      if (calls > 0) {
        stats.httpRequests++;
        const refused = await outage(req, srv);
        if (refused !== null) return refused;
        if (limit !== null && !limit.limiter.admit(calls, performance.now())) {
          stats.rateLimited += calls;
          return new Response(TOO_MANY_REQUESTS, { status: 429, headers: limit.retryAfter ? { ...JSON_HEADERS, 'retry-after': '1' } : JSON_HEADERS });
        }
      }
      return new Response(await answerRpc(body, opts.context(loopback)), { headers: JSON_HEADERS });
    },
  });

  const port = server.port ?? opts.port;
  return {
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`,
    port,
    setFault(mode) {
      if (mode === 'hang' && fault !== 'hang') held = new Promise((resolve) => (releaseHeld = resolve));
      if (mode !== 'hang') releaseHeld();
      fault = mode;
      opts.log({ event: 'simnet.fault', mode });
    },
    setRateLimit(next) {
      // A new limit starts with an empty window; changing only Retry-After keeps the window.
      limit = next === null ? null : { limiter: limit?.limiter.rps === next.rps ? limit.limiter : new RateLimiter(next.rps), retryAfter: next.retryAfter };
      opts.log({ event: 'simnet.rate_limit', rps: next?.rps ?? null, retry_after: next?.retryAfter ?? null });
    },
    async stop() {
      stopped = true;
      releaseHeld();
      await server.stop(true);
    },
  };
}
