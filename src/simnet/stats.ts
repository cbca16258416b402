/**
 * What a hosted provider would bill and refuse: JSON-RPC calls per method (each element of
 * a batch is one call), HTTP requests, calls refused with 429, and transactions the
 * congestion fault dropped. Plain counters so counting costs nothing measurable per call.
 */

/** `simnet.stats()` and `simnet_stats`. */
export interface SimnetStats {
  calls: Record<string, number>;
  total: number;
  httpRequests: number;
  /** Calls refused with HTTP 429 (a refused batch of N counts N). */
  rateLimited: number;
  /** Transactions dropped by the congestion fault. */
  dropped: number;
}

/** The live counters behind `SimnetStats`. */
export class CallStats {
  private calls = new Map<string, number>();
  private total = 0;
  httpRequests = 0;
  rateLimited = 0;
  dropped = 0;

  /** Counts one answered call of `method`. */
  call(method: string): void {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    this.total++;
  }

  snapshot(): SimnetStats {
    return { calls: Object.fromEntries(this.calls), total: this.total, httpRequests: this.httpRequests, rateLimited: this.rateLimited, dropped: this.dropped };
  }

  reset(): void {
    this.calls = new Map();
    this.total = 0;
    this.httpRequests = 0;
    this.rateLimited = 0;
    this.dropped = 0;
  }
}
