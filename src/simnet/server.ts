/**
 * The HTTP side of simnet: JSON-RPC 2.0 framing (single and batch requests, the standard
 * -32700/-32600/-32601/-32603 errors) over Bun.serve, plus the fault switch reliability tests
 * use to make the "chain" fail (HTTP 503) or stall until the fault is cleared.
 */
import type { Server } from 'bun';
import { encodeJson } from './json.ts';
import { METHODS, type RpcContext } from './rpc.ts';
import { RpcError } from './rpc-error.ts';

/** A fault injected into every RPC call: 'error' → HTTP 503, 'hang' → wait until cleared. */
export type FaultMode = 'error' | 'hang' | null;

/** The listening RPC endpoint. */
export interface RpcServer {
  readonly url: string;
  readonly port: number;
  setFault(mode: FaultMode): void;
  /** Stops listening, closes open connections and releases calls held by a 'hang' fault. */
  stop(): Promise<void>;
}

/** Options of `serveRpc`; `context` builds the per-request handler context. */
export interface ServeOptions {
  host: string;
  port: number;
  context: (loopback: boolean) => RpcContext;
  log: (entry: Record<string, unknown>) => void;
}

const MAX_BODY_BYTES = 1024 * 1024;

function isLoopback(ip: string | undefined): boolean {
  if (ip === undefined) return false;
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}

function failure(id: unknown, code: number, message: string, data?: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', error: data === undefined ? { code, message } : { code, message, data }, id: id ?? null };
}

async function answerOne(request: unknown, ctx: RpcContext): Promise<Record<string, unknown>> {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return failure(null, -32600, 'Invalid request');
  const { id, method, params, jsonrpc } = request as Record<string, unknown>;
  if (jsonrpc !== '2.0' || typeof method !== 'string') return failure(id, -32600, 'Invalid request');
  if (params !== undefined && params !== null && !Array.isArray(params)) return failure(id, -32602, 'Invalid params: expected an array');
  const handler = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
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
async function answerRpc(body: string, ctx: RpcContext): Promise<string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return encodeJson(failure(null, -32700, 'Parse error'));
  }
  if (!Array.isArray(parsed)) return encodeJson(await answerOne(parsed, ctx));
  if (parsed.length === 0) return encodeJson(failure(null, -32600, 'Invalid request'));
  const answers: Record<string, unknown>[] = [];
  for (const request of parsed) answers.push(await answerOne(request, ctx));
  return encodeJson(answers);
}

/** Starts the JSON-RPC endpoint (port 0 picks a free port). */
export function serveRpc(opts: ServeOptions): RpcServer {
  let fault: FaultMode = null;
  let stopped = false;
  let releaseHeld: () => void = () => {};
  let held = Promise.resolve();
  const unavailable = () => new Response('Service Unavailable', { status: 503 });

  const server: Server<undefined> = Bun.serve({
    hostname: opts.host,
    port: opts.port,
    maxRequestBodySize: MAX_BODY_BYTES,
    async fetch(req, srv) {
      while (fault !== null && !stopped) {
        if (fault === 'error') return unavailable();
        srv.timeout(req, 0);
        opts.log({ event: 'simnet.rpc_held' });
        await held;
      }
      if (stopped) return unavailable();
      const url = new URL(req.url);
      if (req.method === 'GET' && url.pathname === '/health') return new Response('ok');
      if (req.method !== 'POST') return new Response('Method Not Allowed', { status: 405, headers: { allow: 'POST' } });
      const ctx = opts.context(isLoopback(srv.requestIP(req)?.address));
      return new Response(await answerRpc(await req.text(), ctx), { headers: { 'content-type': 'application/json' } });
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
    async stop() {
      stopped = true;
      releaseHeld();
      await server.stop(true);
    },
  };
}
