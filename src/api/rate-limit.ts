/**
 * Fixed-window request counters per key and per IP (DESIGN §3). In memory: one node serves one
 * data dir, and a restart forgiving a minute of counts is harmless.
 */
import { AppError } from '../errors.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export class RateLimiter {
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
