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

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey?: string,
    private readonly timeoutMs = 60_000,
  ) {}

  /** A client for the same service with another key. */
  withKey(apiKey: string): ApiClient {
    return new ApiClient(this.baseUrl, apiKey, this.timeoutMs);
  }

  /** Calls `action` on `endpoint`; resolves to `data` or throws ApiError / ConnectionError. */
  async call<T = Record<string, unknown>>(endpoint: Endpoint, action: string, params: Record<string, unknown> = {}, opts: CallOptions = {}): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (opts.idempotencyKey) headers['x-idempotency-key'] = opts.idempotencyKey;
    const url = `${this.baseUrl.replace(/\/+$/, '')}/${endpoint}`;
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ action, ...params }), signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      throw new ConnectionError(`cannot reach ${url}: ${(err as Error).message}; is the daemon running (agent-wallet serve) and --server right?`);
    }
    let body: { success?: boolean; data?: unknown; error?: Record<string, unknown> };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new ConnectionError(`${url} answered HTTP ${res.status} without a JSON envelope; check --server (it must end in /v1)`);
    }
    if (body.success === true) return body.data as T;
    const e = body.error ?? {};
    const { code, message, how_to_fix, ...details } = e;
    throw new ApiError((code as ErrorCode) ?? 'INTERNAL_ERROR', String(message ?? 'request failed'), String(how_to_fix ?? ''), res.status, details);
  }
}
