/**
 * The one outbound HTTP client (x402 probes and settlements, merchant webhooks), built so that a
 * URL chosen by an agent or a merchant cannot reach the operator's network (DESIGN §8):
 *
 * - the host is resolved ONCE and every address it resolves to must pass {@link isAllowedTarget};
 * - the socket is opened by this module to that checked address (`node:net` / `node:tls`
 *   handed to `node:http` as `createConnection`), so nothing re-resolves the name later (no
 *   DNS rebinding window) and no `HTTP(S)_PROXY` variable or shared pool is consulted. Bun
 *   silently ignores `createConnection` when `agent: false` is set, so no agent option is
 *   passed; the request's `host` is the checked address too, so even then nothing else is
 *   reached. Each request uses its own connection (`Connection: close`);
 * - for https the original host name is kept as SNI and as the name the certificate is checked
 *   against (`servername`), so TLS verification is unchanged;
 * - redirects are never followed (`node:http` has no redirect logic: a 3xx comes back as is);
 * - the connect phase (TCP, and the TLS handshake for https) has its own deadline, the whole
 *   exchange a total one, and the body is cut at `maxBytes`.
 *
 * Limits: the body is returned as the server sent it (no decompression, and no `Accept-Encoding`
 * is added, so servers answer uncompressed unless the caller asks otherwise); an operator who
 * needs an egress proxy must provide it at the network level; ports are not restricted.
 */
import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { classifyIp, canonicalIp, isAllowedTarget, parseTargetUrl, type TargetUrl } from './address-policy.ts';

/**
 * Why a request failed. `bad_url`, `bad_request` (method or headers that cannot be sent),
 * `refused_address`, `dns_failed`, `connect_failed` and `tls_failed` happen before any byte of
 * the request can reach the server; `timeout` and `network_error` may happen after (see
 * {@link OutboundError.maybeSent}).
 */
export type OutboundErrorKind =
  | 'bad_url'
  | 'bad_request'
  | 'refused_address'
  | 'dns_failed'
  | 'connect_failed'
  | 'tls_failed'
  | 'timeout'
  | 'network_error';

/**
 * The only error {@link Outbound.request} rejects with. The category is `kind`, never a property
 * named `code` (Elysia's `onError` reads `error.code`). `maybeSent` is true once a connection
 * was established: the server may then have received and acted on the request, so a caller
 * paying over x402 MUST treat the outcome as unknown, never as failed.
 */
export class OutboundError extends Error {
  override readonly name = 'OutboundError';

  constructor(
    readonly kind: OutboundErrorKind,
    message: string,
    readonly maybeSent = false,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Settings of {@link createOutbound}; `allowHosts` as in {@link isAllowedTarget}. */
export interface OutboundOptions {
  allowHosts: readonly string[];
  /** Deadline for TCP connect plus TLS handshake, in ms (DESIGN §8: 5 s). */
  connectTimeoutMs?: number;
  /** Deadline for the whole request, DNS to last body byte, in ms (DESIGN §8: 15 s). */
  totalTimeoutMs?: number;
  /** Resolves a host name to all its addresses; default `dns.lookup(host, {all: true})`. */
  resolve?: (host: string) => Promise<string[]>;
}

/** One request. `maxBytes` caps the response body: reading stops at the first chunk past it. */
export interface OutboundRequestInit {
  method?: string;
  headers?: HeadersInit;
  body?: string | Uint8Array;
  maxBytes: number;
}

/** A response as received, 3xx included. `truncated` says the server sent more than `maxBytes`. */
export interface OutboundResponse {
  status: number;
  headers: Headers;
  body: Uint8Array;
  truncated: boolean;
}

/** The outbound client: one method, safe to share. */
export interface Outbound {
  request(url: string, init: OutboundRequestInit): Promise<OutboundResponse>;
}

async function systemResolve(host: string): Promise<string[]> {
  const records = await lookup(host, { all: true, verbatim: true });
  return records.map((r) => r.address);
}

/** Rejects with `onAbort()` when `signal` fires first; always removes its listener. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal, onAbort: () => OutboundError): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(onAbort());
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * The address to connect to: the host itself when it is an IP literal, else the first address
 * of ONE resolution. Every resolved address must be allowed, so a name that also points inside
 * the network is refused even if its first answer is public.
 */
async function checkedAddress(
  target: TargetUrl,
  allowHosts: readonly string[],
  resolve: (host: string) => Promise<string[]>,
  deadline: AbortSignal,
  totalTimeoutMs: number,
): Promise<string> {
  let addresses: string[];
  if (isIP(target.host) !== 0) {
    addresses = [target.host];
  } else {
    const timedOut = () => new OutboundError('timeout', `resolving ${target.host} took longer than ${totalTimeoutMs} ms`);
    try {
      addresses = await raceAbort(resolve(target.host), deadline, timedOut);
    } catch (err) {
      if (err instanceof OutboundError) throw err;
      throw new OutboundError('dns_failed', `could not resolve ${target.host}`, false, { cause: err });
    }
    if (addresses.length === 0) throw new OutboundError('dns_failed', `${target.host} has no address`);
  }
  for (const address of addresses) {
    if (canonicalIp(address) === null || !isAllowedTarget(target.host, address, allowHosts)) {
      const what = isIP(target.host) !== 0 ? 'is' : 'resolves to';
      throw new OutboundError(
        'refused_address',
        `refusing to contact ${target.host}: it ${what} an address of class ${classifyIp(address)}; ` +
          'only public addresses are reachable unless the operator allows the host',
      );
    }
  }
  return canonicalIp(addresses[0] as string) as string;
}

const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const OWNED_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding']);

/**
 * The headers actually sent: the caller's, minus the ones this module owns (`Host` from the URL,
 * `Content-Length` from the body, `Connection: close`, and no caller `Transfer-Encoding`, which
 * could contradict the length). Throws `bad_request` for a method
 * or header that is not valid HTTP, before anything is resolved or sent.
 */
function requestHeaders(target: TargetUrl, init: OutboundRequestInit): Record<string, string> {
  if (init.method !== undefined && !METHOD.test(init.method)) {
    throw new OutboundError('bad_request', `invalid HTTP method ${JSON.stringify(init.method)}`);
  }
  let given: Headers;
  try {
    given = new Headers(init.headers);
  } catch (err) {
    throw new OutboundError('bad_request', `invalid request headers: ${(err as Error).message}`, false, { cause: err });
  }
  const out: Record<string, string> = {};
  for (const [name, value] of given) {
    if (!OWNED_HEADERS.has(name)) out[name] = value;
  }
  out.host = target.url.host;
  out.connection = 'close';
  if (init.body !== undefined) out['content-length'] = String(Buffer.byteLength(init.body));
  return out;
}

function responseHeaders(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
  }
  return headers;
}

interface ExchangeLimits {
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  deadline: AbortSignal;
}

/** Sends the request over a socket opened to `ip` and reads the response within the limits. */
function exchange(
  target: TargetUrl,
  ip: string,
  headers: Record<string, string>,
  init: OutboundRequestInit,
  limits: ExchangeLimits,
): Promise<OutboundResponse> {
  const https = target.url.protocol === 'https:';
  return new Promise<OutboundResponse>((resolve, reject) => {
    let connected = false;
    let tcpConnected = false;
    let connectTimer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    const settle = (outcome: OutboundResponse | OutboundError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      limits.deadline.removeEventListener('abort', onDeadline);
      if (outcome instanceof OutboundError) {
        req.destroy();
        reject(outcome);
      } else {
        resolve(outcome);
      }
    };
    const onDeadline = (): void =>
      settle(new OutboundError('timeout', `${target.host} did not answer within ${limits.totalTimeoutMs} ms`, connected));

    const openSocket = (): Socket => {
      const socket = https
        ? tlsConnect({ host: ip, port: target.port, ...(isIP(target.host) === 0 ? { servername: target.host } : {}) })
        : netConnect({ host: ip, port: target.port });
      socket.once('connect', () => (tcpConnected = true));
      socket.once(https ? 'secureConnect' : 'connect', () => {
        connected = true;
        clearTimeout(connectTimer);
      });
      connectTimer = setTimeout(
        () => settle(new OutboundError('timeout', `could not connect to ${target.host} within ${limits.connectTimeoutMs} ms`)),
        limits.connectTimeoutMs,
      );
      return socket;
    };

    const send = https ? httpsRequest : httpRequest;
    const req = send({
      host: ip,
      port: target.port,
      method: init.method ?? 'GET',
      path: `${target.url.pathname}${target.url.search}`,
      headers,
      createConnection: openSocket,
    });

    req.on('error', (err) => {
      if (connected) settle(new OutboundError('network_error', `connection to ${target.host} failed: ${err.message}`, true, { cause: err }));
      else if (https && tcpConnected) settle(new OutboundError('tls_failed', `TLS with ${target.host} failed: ${err.message}`, false, { cause: err }));
      else settle(new OutboundError('connect_failed', `could not connect to ${target.host}:${target.port}`, false, { cause: err }));
    });

    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let received = 0;
      const done = (truncated: boolean): void => {
        const body = new Uint8Array(Buffer.concat(chunks).subarray(0, init.maxBytes));
        settle({ status: res.statusCode ?? 0, headers: responseHeaders(res), body, truncated });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (received > init.maxBytes) {
          done(true);
          res.destroy();
        }
      });
      res.on('end', () => done(false));
      res.on('error', (err) =>
        settle(new OutboundError('network_error', `reading the answer of ${target.host} failed: ${err.message}`, true, { cause: err })),
      );
      res.on('close', () => {
        if (!res.complete) settle(new OutboundError('network_error', `${target.host} closed the connection mid-answer`, true));
      });
    });

    limits.deadline.addEventListener('abort', onDeadline, { once: true });
    if (limits.deadline.aborted) onDeadline();
    req.end(init.body);
  });
}

/**
 * Creates the outbound client. Every request: parse ({@link parseTargetUrl}), resolve once,
 * refuse any non-public address the operator did not allow, connect to the checked address,
 * send, and return the first `maxBytes` of the answer without following redirects.
 * Every failure of the target rejects with {@link OutboundError}; a `maxBytes` that is not a
 * non-negative integer is a caller bug and throws `RangeError`.
 */
export function createOutbound(options: OutboundOptions): Outbound {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const totalTimeoutMs = options.totalTimeoutMs ?? 15000;
  const resolve = options.resolve ?? systemResolve;
  const allowHosts = [...options.allowHosts];
  return {
    async request(url, init) {
      if (!Number.isSafeInteger(init.maxBytes) || init.maxBytes < 0) {
        throw new RangeError(`maxBytes must be a non-negative integer, got ${init.maxBytes}`);
      }
      const target = parseTargetUrl(url);
      if (!target.ok) throw new OutboundError('bad_url', target.reason);
      const headers = requestHeaders(target, init);
      const deadline = AbortSignal.timeout(totalTimeoutMs);
      const ip = await checkedAddress(target, allowHosts, resolve, deadline, totalTimeoutMs);
      return exchange(target, ip, headers, init, { connectTimeoutMs, totalTimeoutMs, deadline });
    },
  };
}
