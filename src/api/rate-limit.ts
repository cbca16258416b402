/**
 * Fixed-window request counters per key and per IP (DESIGN §3). In memory where one node serves
 * the ledger, and a restart forgiving a minute of counts is harmless; in the database where
 * several nodes share it (db/rate-windows.ts), so the limit holds across the balancer.
 */
import { countHit, pruneRateWindows } from '../db/rate-windows.ts';
import type { PgStore } from '../db/pg-store.ts';
import type { Logger } from '../log.ts';
import { AppError } from '../errors.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/** What the API counts requests with. */
export interface Limiter {
  hit(bucket: string, limit: number): RateDecision | Promise<RateDecision>;
}

export class RateLimiter implements Limiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request for `bucket` against `limit` per window. */
  hit(bucket: string, limit: number): RateDecision {
    const now = this.now();
    let w = this.windows.get(bucket);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(bucket, w);
      if (this.windows.size > 50_000) this.sweep(now);
    }
    w.count++;
    const resetSeconds = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    return { allowed: w.count <= limit, limit, remaining: Math.max(0, limit - w.count), resetSeconds };
  }

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
  }
}

/**
 * The counters of a ledger several nodes share. A count the database cannot take falls back to
 * this node's own counter (logged once a minute): a request is never refused for the counter's sake.
 */
export class SharedRateLimiter implements Limiter {
  private readonly local: RateLimiter;
  private lastPrune = 0;
  private lastWarning = 0;

  constructor(
    private readonly store: PgStore,
    private readonly windowMs: number,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.local = new RateLimiter(windowMs, now);
  }

  async hit(bucket: string, limit: number): Promise<RateDecision> {
    try {
      const { hits, resetMs } = await countHit(this.store, bucket, this.windowMs);
      this.prune();
      return { allowed: hits <= limit, limit, remaining: Math.max(0, limit - hits), resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)) };
    } catch (err) {
      if (this.now() - this.lastWarning > 60_000) {
        this.lastWarning = this.now();
        this.log.warn('rate limit: the shared counters did not answer; counting on this node alone meanwhile', { error: (err as Error).message });
      }
      return this.local.hit(bucket, limit);
    }
  }

  private prune(): void {
    if (this.now() - this.lastPrune < this.windowMs) return;
    this.lastPrune = this.now();
    void pruneRateWindows(this.store, this.windowMs).catch(() => undefined);
  }
}

/** The RateLimit headers (IETF draft) plus Retry-After when refused, added to `into`. */
export function rateHeaders(d: RateDecision, into: Record<string, string> = {}): Record<string, string> {
  into['RateLimit-Limit'] = String(d.limit);
  into['RateLimit-Remaining'] = String(d.remaining);
  into['RateLimit-Reset'] = String(d.resetSeconds);
  if (!d.allowed) into['Retry-After'] = String(d.resetSeconds);
  return into;
}

/** The RATE_LIMITED refusal of decision `d`, whose limit is per `per` (e.g. "API key"). */
export function rateLimited(d: RateDecision, per: string): AppError {
  return new AppError('RATE_LIMITED', `Rate limit of ${d.limit} requests per minute exceeded.`, {
    howToFix: `Wait ${d.resetSeconds} s (Retry-After) and retry; the limit is per ${per}.`,
    headers: rateHeaders(d),
  });
}

/**
 * The x402 facilitator's own bucket of a key: the calls a merchant's paywall or middleware makes
 * for its buyers (any stranger can send a payment header) never spend the key's /v1 budget.
 */
export const facilitatorBucket = (keyHash: Uint8Array): string => `x402:${Buffer.from(keyHash).toString('base64')}`;
