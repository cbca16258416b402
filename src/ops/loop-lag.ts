/**
 * How late the event loop runs a timer: what a ping, a read or a payment waits behind synchronous
 * work on the main thread. A timer due every 20 ms measures its own lateness, kept as a histogram
 * for /metrics (and the bench, which reads it around a load). Unref'd: it keeps nothing alive.
 */
const TICK_MS = 20;
const BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1];

export interface LoopLag {
  source: () => string[];
  stop(): void;
}

export function watchLoopLag(): LoopLag {
  const counts = BUCKETS.map(() => 0);
  let count = 0;
  let sum = 0;
  let due = performance.now() + TICK_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - due) / 1000;
    due = now + TICK_MS;
    count++;
    sum += late;
    for (let i = 0; i < BUCKETS.length; i++) if (late <= BUCKETS[i]!) counts[i]!++;
  }, TICK_MS);
  timer.unref();
  return {
    stop: () => clearInterval(timer),
    source: () => [
      '# HELP agent_wallet_event_loop_lag_seconds How late a 20 ms timer ran on the event loop: what any request waits behind synchronous work.',
      '# TYPE agent_wallet_event_loop_lag_seconds histogram',
      ...BUCKETS.map((b, i) => `agent_wallet_event_loop_lag_seconds_bucket{le="${b}"} ${counts[i]}`),
      `agent_wallet_event_loop_lag_seconds_bucket{le="+Inf"} ${count}`,
      `agent_wallet_event_loop_lag_seconds_sum ${sum}`,
      `agent_wallet_event_loop_lag_seconds_count ${count}`,
    ],
  };
}
