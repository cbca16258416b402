/**
 * The HTTP transport under the chain port, built for a hosted RPC provider that bills every call,
 * answers 429 above a request rate and sometimes fails: each call first takes a slot of the shared
 * request budget (agent calls before background ones); a 429 pauses that endpoint alone for its
 * Retry-After, honoured up to MAX_RETRY_AFTER_MS (or a growing backoff when the provider sends
 * none), and the call goes to the next endpoint of `solana.rpc_urls` that is not paused, or waits
 * for the first pause to end; a transient failure (network error, timeout, 5xx, a node that is
 * behind) is retried on the next endpoint — all within the call's deadline. Retrying is safe: every port call is a read
 * or a re-send of the same signed bytes. Each attempt is reported to `observe` for /metrics.
 */
import { createDefaultRpcTransport, isSolanaError, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, type RpcTransport } from '@solana/kit';
import { ChainUnavailableError } from './errors.ts';
import { RpcBudget, RpcBudgetExceeded } from './rpc-budget.ts';
import { currentPriority } from './rpc-priority.ts';

/** What became of one attempt: ok, a JSON-RPC error answer, the provider's 429, an outage, a timeout, or no budget left before the deadline. */
export type RpcOutcome = 'ok' | 'rpc_error' | 'rate_limited' | 'unavailable' | 'timeout' | 'budget_exhausted';

export type RpcObserver = (method: string, outcome: RpcOutcome, seconds: number) => void;

export interface ProviderTransportOptions {
  /** The primary endpoint first, then the ones to fail over to. */
  urls: string[];
  budget: RpcBudget;
  /** One attempt is abandoned after this long. */
  timeoutMs: number;
  /** How long a call may wait and retry in all, for agent-facing calls and for background jobs. */
  deadlineMs: { agent: number; background: number };
  observe?: RpcObserver;
  log?: (event: string, fields: Record<string, unknown>) => void;
}

/** JSON-RPC error codes that say "try again" rather than "no": rate limited, node behind/unhealthy, min context slot not reached, internal error. */
const TRANSIENT_RPC_CODES = new Set([429, -32005, -32016, -32603]);
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 4_000;
/** After failing over, the primary endpoint is tried again after this long. */
const PRIMARY_RETRY_MS = 60_000;
/**
 * The longest Retry-After honoured: one provider answering "come back in an hour" must not stop
 * every payment for an hour; after this the endpoint is tried again (and answers 429 again if it
 * meant it, at the cost of one call).
 */
export const MAX_RETRY_AFTER_MS = 30_000;

function methodOf(payload: unknown): string {
  const method = (payload as { method?: unknown } | null)?.method;
  return typeof method === 'string' ? method : 'batch';
}

/** Retry-After as seconds or an HTTP date, in ms; null when absent or unreadable. */
function retryAfterMs(headers: Headers | undefined): number | null {
  const value = headers?.get('retry-after');
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

export function createProviderTransport(opts: ProviderTransportOptions): RpcTransport {
  if (opts.urls.length === 0) throw new RangeError('at least one RPC URL is needed');
  const endpoints = opts.urls.map((url) => ({ url, send: createDefaultRpcTransport({ url }), pausedUntil: 0 }));
  let current = 0;
  let failedOverAt = 0;
  const observe = opts.observe ?? (() => {});
  const log = opts.log ?? (() => {});

  function failOver(from: number, why: string): void {
    if (endpoints.length < 2 || current !== from) return;
    current = (from + 1) % endpoints.length;
    failedOverAt = performance.now();
    log('rpc failover', { from: endpoints[from]!.url, to: endpoints[current]!.url, reason: why });
  }

  /** The provider at `index` said "too many": it alone is left alone for a while, and calls move on. */
  function pauseEndpoint(index: number, ms: number): void {
    const e = endpoints[index]!;
    e.pausedUntil = Math.max(e.pausedUntil, performance.now() + Math.min(MAX_RETRY_AFTER_MS, ms));
    failOver(index, 'HTTP 429');
  }

  /** The endpoint to call now (the current one unless it is paused), or how long until one is free. */
  function pick(now: number): { index: number } | { waitMs: number } {
    if (endpoints[current]!.pausedUntil <= now) return { index: current };
    for (let i = 1; i < endpoints.length; i++) {
      const j = (current + i) % endpoints.length;
      if (endpoints[j]!.pausedUntil <= now) {
        current = j;
        failedOverAt = now;
        return { index: j };
      }
    }
    return { waitMs: Math.min(...endpoints.map((e) => e.pausedUntil)) - now };
  }

  /**
   * Identical calls in flight share one request, so they take one slot of the budget (kit's own
   * coalescing sits below the budget and only merges calls made in the same tick).
   */
  const inflight = new Map<string, Promise<unknown>>();
  const shared = <T>(config: { payload: unknown; signal?: AbortSignal }): Promise<T> => {
    const p = config.payload as { method?: unknown; params?: unknown } | null;
    const key = `${String(p?.method)}:${JSON.stringify(p?.params ?? null, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`;
    const existing = inflight.get(key);
    if (existing) return existing as Promise<T>;
    const started = send<T>(config).finally(() => inflight.delete(key));
    inflight.set(key, started);
    return started;
  };

  const send = async <T>({ payload, signal }: { payload: unknown; signal?: AbortSignal }): Promise<T> => {
    const method = methodOf(payload);
    const priority = currentPriority();
    const deadline = performance.now() + opts.deadlineMs[priority];
    let backoff = FIRST_BACKOFF_MS;
    let lastFailure: unknown = null;
    let limited = false;
    let refusals = 0;
    for (;;) {
      if (current !== 0 && performance.now() - failedOverAt > PRIMARY_RETRY_MS) current = 0;
      const free = pick(performance.now());
      if ('waitMs' in free) {
        // Every endpoint asked us to wait: wait for the first, or report the rate limit within the deadline.
        if (performance.now() + free.waitMs >= deadline) {
          observe(method, 'budget_exhausted', 0);
          throw new ChainUnavailableError(`${method}: the RPC provider is limiting our request rate (HTTP 429) and the call could not be retried within its deadline`, {
            rateLimited: true,
            retryAfterSeconds: Math.max(1, Math.ceil(free.waitMs / 1000)),
          });
        }
        await Bun.sleep(free.waitMs);
        continue;
      }
      try {
        await opts.budget.take(deadline, priority);
      } catch (e) {
        if (!(e instanceof RpcBudgetExceeded)) throw e;
        observe(method, 'budget_exhausted', 0);
        if (lastFailure !== null && !limited) throw lastFailure;
        throw new ChainUnavailableError(
          limited
            ? `${method}: the RPC provider is limiting our request rate (HTTP 429) and the call could not be retried within its deadline`
            : `${method}: the RPC request budget (solana.rpc_max_rps = ${opts.budget.rps}) had no room before the call's deadline`,
          { rateLimited: true, retryAfterSeconds: Math.max(1, Math.ceil(e.retryAfterMs / 1000)) },
        );
      }
      const index = free.index;
      const started = performance.now();
      const attemptMs = Math.max(100, Math.min(opts.timeoutMs, deadline - started));
      const attemptSignal = signal ? AbortSignal.any([signal, AbortSignal.timeout(attemptMs)]) : AbortSignal.timeout(attemptMs);
      let wait = 0;
      try {
        const response = await endpoints[index]!.send<T>({ payload, signal: attemptSignal });
        const seconds = (performance.now() - started) / 1000;
        // kit parses integers in Solana answers as bigints, error codes included.
        const raw = (response as { error?: { code?: unknown } } | null)?.error?.code;
        const code = typeof raw === 'bigint' || typeof raw === 'number' ? Number(raw) : null;
        if (code === null || !TRANSIENT_RPC_CODES.has(code)) {
          observe(method, raw === undefined ? 'ok' : 'rpc_error', seconds);
          return response;
        }
        lastFailure = response;
        if (code === 429) {
          limited = true;
          observe(method, 'rate_limited', seconds);
          pauseEndpoint(index, backoff);
          backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        } else {
          limited = false;
          observe(method, 'rpc_error', seconds);
          failOver(index, `JSON-RPC error ${code}`);
          wait = backoff;
          backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        }
      } catch (e) {
        if (signal?.aborted) throw e;
        const seconds = (performance.now() - started) / 1000;
        lastFailure = e;
        const status = isSolanaError(e, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR) ? e.context.statusCode : null;
        if (status === 429) {
          limited = true;
          observe(method, 'rate_limited', seconds);
          pauseEndpoint(index, retryAfterMs(isSolanaError(e, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR) ? e.context.headers : undefined) ?? backoff);
          backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        } else if ((status === 401 || status === 403) && ++refusals < endpoints.length) {
          // An expired key or a suspended plan at this endpoint: the next of solana.rpc_urls may serve.
          limited = false;
          observe(method, 'unavailable', seconds);
          failOver(index, `HTTP ${status}`);
        } else if (status !== null && status < 500 && status !== 408) {
          // Any other 4xx: the provider refuses this request as such; retrying changes nothing.
          observe(method, 'unavailable', seconds);
          throw e;
        } else {
          // An outage now, whatever came before: the caller is told of this failure, not of a rate limit.
          limited = false;
          const timedOut = attemptSignal.aborted;
          observe(method, timedOut ? 'timeout' : 'unavailable', seconds);
          failOver(index, timedOut ? `no answer in ${attemptMs} ms` : status !== null ? `HTTP ${status}` : (e as Error).message);
          wait = backoff;
          backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        }
      }
      if (!limited && performance.now() + wait >= deadline) {
        if (lastFailure instanceof Error) throw lastFailure;
        return lastFailure as T;
      }
      if (wait > 0) await Bun.sleep(Math.min(wait, Math.max(0, deadline - performance.now())));
    }
  };
  return shared as RpcTransport;
}
