/**
 * The agent's typed HTTP client for the action endpoints. It speaks only the wire contract
 * (envelopes and error codes from src/contract) and never the server's internals.
 */
import type { Endpoint } from '../contract/action.ts';
import type { ErrorCode } from '../contract/errors.ts';

/** A failure envelope from the service, as an exception. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly errorCode: ErrorCode,
    message: string,
    readonly howToFix: string,
    readonly status: number,
    readonly details: Record<string, unknown>,
    /** The endpoint that answered (the CLI words an UNAUTHORIZED by whose key was refused). */
    readonly endpoint?: Endpoint,
  ) {
    super(message);
  }

  /** The envelope as the service sent it (for --json output). */
  envelope(): { success: false; error: Record<string, unknown> } {
    return { success: false, error: { ...this.details, code: this.errorCode, message: this.message, how_to_fix: this.howToFix } };
  }
}

/** The service could not be reached or answered something that is not an envelope. */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
}

export interface CallOptions {
  idempotencyKey?: string;
}

/** How many "still running" answers a keyed call waits out before giving up. */
const MAX_RUNNING_WAITS = 30;
/** A proxy's answers of its own when its upstream failed: the daemon never answers these without an envelope. */
const PROXY_FAILURES = new Set([502, 503, 504]);
/** Attempts of a keyed call answered by a proxy alone, and the growing wait between them. */
const MAX_PROXY_RETRIES = 4;
const PROXY_RETRY_MS = 250;

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private apiKey?: string,
    private readonly timeoutMs = 60_000,
  ) {}

  /** Speaks with `apiKey` from now on: a key refresh rotated the bot key this client used. */
  rekey(apiKey: string): void {
    this.apiKey = apiKey;
  }

  /** A client for the same service with another key. */
  withKey(apiKey: string): ApiClient {
    return new ApiClient(this.baseUrl, apiKey, this.timeoutMs);
  }

  /**
   * Calls `action` on `endpoint`; resolves to `data` or throws ApiError / ConnectionError. A call
   * with an idempotency key also waits out "still running" answers (409 with Retry-After), resends
   * once after a reset connection, and resends a few times when a balancer answered for a node
   * that died with the request: the service never acts twice for one key.
   */
  async call<T = Record<string, unknown>>(endpoint: Endpoint, action: string, params: Record<string, unknown> = {}, opts: CallOptions = {}): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (opts.idempotencyKey) headers['x-idempotency-key'] = opts.idempotencyKey;
    const url = `${this.baseUrl.replace(/\/+$/, '')}/${endpoint}`;
    const send = () => fetch(url, { method: 'POST', headers, body: JSON.stringify({ action, ...params }), signal: AbortSignal.timeout(this.timeoutMs) });
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await send();
      } catch (err) {
        // A dropped connection may or may not have reached the service: only a keyed request is safe to resend.
        if (!opts.idempotencyKey || (err as { code?: string }).code !== 'ECONNRESET' || attempt > 1) {
          const advice = opts.idempotencyKey ? 'retry with the same idempotency key, never a new one' : 'is the daemon running (agent-wallet serve) and --server right?';
          throw new ConnectionError(`cannot reach ${url}: ${(err as Error).message}; ${advice}`);
        }
        continue;
      }
      let body: { success?: boolean; data?: unknown; error?: Record<string, unknown> } | null;
      try {
        body = (await res.json()) as typeof body;
      } catch {
        body = null;
      }
      if (body === null || typeof body !== 'object') {
        // A balancer's own 502/503/504 (a node died with the request, or none is ready): a keyed request is safe to send again.
        if (opts.idempotencyKey && PROXY_FAILURES.has(res.status) && attempt < MAX_PROXY_RETRIES) {
          await Bun.sleep(PROXY_RETRY_MS * attempt);
          continue;
        }
        const advice = opts.idempotencyKey && PROXY_FAILURES.has(res.status) ? 'retry with the same idempotency key, never a new one' : 'check --server (it must end in /v1)';
        throw new ConnectionError(`${url} answered HTTP ${res.status} without a JSON envelope; ${advice}`);
      }
      if (body.success === true) return body.data as T;
      const e = body.error ?? {};
      const stillRunning = res.status === 409 && e.code === 'IDEMPOTENCY_CONFLICT' && opts.idempotencyKey;
      if (stillRunning && attempt < MAX_RUNNING_WAITS) {
        await Bun.sleep(Math.min(5, Number(res.headers.get('retry-after') ?? 1)) * 1000);
        continue;
      }
      throw apiErrorOf(e, res.status, endpoint);
    }
  }

  /** GET `path` (under the base URL) as a stream, for exports; an error answer throws as call does. */
  async fetchRaw(path: string): Promise<Response> {
    const url = `${this.baseUrl.replace(/\/+$/, '')}${path}`;
    let res: Response;
    try {
      res = await fetch(url, { headers: this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {} });
    } catch (err) {
      throw new ConnectionError(`cannot reach ${url}: ${(err as Error).message}; is the daemon running (agent-wallet serve) and --server right?`);
    }
    if (res.ok && res.body) return res;
    const body = (await res.json().catch(() => null)) as { error?: Record<string, unknown> } | null;
    if (!body?.error) throw new ConnectionError(`${url} answered HTTP ${res.status} without a JSON envelope; check --server (it must end in /v1)`);
    throw apiErrorOf(body.error, res.status, 'owner');
  }
}

/** The ApiError an error envelope's `error` object stands for. */
function apiErrorOf(e: Record<string, unknown>, status: number, endpoint: Endpoint): ApiError {
  const { code, message, how_to_fix, ...details } = e;
  return new ApiError((code as ErrorCode) ?? 'INTERNAL_ERROR', String(message ?? 'request failed'), String(how_to_fix ?? ''), status, details, endpoint);
}
