/**
 * A provider's request-rate limit: at most `rps` calls in any rolling second. A request
 * carrying N calls (a batch) is admitted whole or refused whole, as providers bill batches
 * per call; refused calls take no budget.
 */

const WINDOW_MS = 1000;

/** Admitted calls of the last second, as (time, count) pairs in arrival order. */
export class RateLimiter {
  private times: number[] = [];
  private counts: number[] = [];
  private head = 0;
  private inWindow = 0;

  constructor(readonly rps: number) {}

  /** Admits `calls` at `nowMs` (a monotonic clock) when the last second's calls plus these stay within `rps`. */
  admit(calls: number, nowMs: number): boolean {
    while (this.head < this.times.length && (this.times[this.head] ?? 0) <= nowMs - WINDOW_MS) {
      this.inWindow -= this.counts[this.head] ?? 0;
      this.head++;
    }
    // Drop the expired prefix now and then so the arrays stay as long as one second of traffic.
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.counts = this.counts.slice(this.head);
      this.head = 0;
    }
    if (this.inWindow + calls > this.rps) return false;
    this.times.push(nowMs);
    this.counts.push(calls);
    this.inWindow += calls;
    return true;
  }
}
