/** The shared RPC request budget: a rolling window, agent calls first, deadlines. */
import { describe, expect, jest, test } from 'bun:test';
import { RateLimiter } from '../../src/simnet/rate-limit.ts';
import { RpcBudget, RpcBudgetExceeded } from '../../src/solana/rpc-budget.ts';
import { inBackground, currentPriority } from '../../src/solana/rpc-priority.ts';

const now = () => performance.now();

describe('RpcBudget', () => {
  test('unlimited (0) never waits', async () => {
    const budget = new RpcBudget(0);
    const started = now();
    await Promise.all(Array.from({ length: 1_000 }, () => budget.take(now() + 10)));
    expect(now() - started).toBeLessThan(100);
  });

  test('at most rps calls start in any rolling second', async () => {
    const budget = new RpcBudget(10);
    const starts: number[] = [];
    await Promise.all(Array.from({ length: 25 }, () => budget.take(now() + 5_000).then(() => starts.push(now()))));
    starts.sort((a, b) => a - b);
    for (let i = 10; i < starts.length; i++) expect(starts[i]! - starts[i - 10]!).toBeGreaterThanOrEqual(999);
    // 25 calls at 10/s: the last starts after two full windows, not much later.
    expect(starts.at(-1)! - starts[0]!).toBeLessThan(2_500);
  });

  test('what it lets out, delivered up to 50 ms late, a provider limiting to rps calls in any rolling second never refuses (time driven, no load)', async () => {
    // The clock and the timers are the test's: the budget's decisions do not depend on how busy
    // the machine is. Its window has 50 ms of slack for delivery; the provider (simnet's own
    // limiter, fed the arrival times) is as strict as the budget's rps, stricter than any a
    // daemon would be configured under (e2e/provider.test.ts: 4 against a 5/s provider).
    jest.useFakeTimers();
    try {
      let t = 0;
      const budget = new RpcBudget(4, () => t);
      const grants: number[] = [];
      const ask = (n: number) => Array.from({ length: n }, (_, i) => budget.take(t + 60_000, i % 3 === 0 ? 'background' : 'agent').then(() => grants.push(t)));
      const asked = [...ask(30)];
      for (; grants.length < 50; t++) {
        // A second wave arrives while the first still waits; at most rps calls ever go out per window.
        if (t === 2_500) asked.push(...ask(20));
        jest.advanceTimersByTime(1);
        for (let i = 0; i < 4; i++) await Promise.resolve();
      }
      await Promise.all(asked);
      const provider = new RateLimiter(4);
      // Each call reaches the provider 0–50 ms after it went out, not necessarily in order.
      const arrivals = grants.map((g, i) => g + ((i * 37) % 51)).sort((a, b) => a - b);
      expect(arrivals.filter((a) => !provider.admit(1, a))).toEqual([]);
      // And the budget is used, not starved: 50 calls at 4 per 1.05 s take about 12 windows.
      expect(grants.at(-1)!).toBeLessThan(13 * 1_050);
    } finally {
      jest.useRealTimers();
    }
  });

  test('agent calls waiting for room go before background calls that queued earlier', async () => {
    const budget = new RpcBudget(2);
    await budget.take(now() + 1_000);
    await budget.take(now() + 1_000);
    const order: string[] = [];
    const background = [1, 2].map((i) => budget.take(now() + 5_000, 'background').then(() => order.push(`bg${i}`)));
    const agent = [1, 2].map((i) => budget.take(now() + 5_000, 'agent').then(() => order.push(`agent${i}`)));
    await Promise.all([...background, ...agent]);
    expect(order).toEqual(['agent1', 'agent2', 'bg1', 'bg2']);
  });

  test('a call that cannot start before its deadline fails alone, saying when to retry', async () => {
    const budget = new RpcBudget(1);
    await budget.take(now() + 1_000);
    const err = await budget.take(now() + 100).catch((e) => e);
    expect(err).toBeInstanceOf(RpcBudgetExceeded);
    expect(err.retryAfterMs).toBeGreaterThan(0);
    expect(err.retryAfterMs).toBeLessThanOrEqual(1_100);
    expect(budget.waiting()).toEqual({ agent: 0, background: 0 });
  });

  test('a call whose deadline has passed does not start, even with room', async () => {
    const budget = new RpcBudget(0);
    expect(await budget.take(now() - 1).catch((e) => e)).toBeInstanceOf(RpcBudgetExceeded);
  });

  test('inBackground marks the calls made inside it, through awaits', async () => {
    expect(currentPriority()).toBe('agent');
    const seen = await inBackground(async () => {
      await Bun.sleep(1);
      return currentPriority();
    });
    expect(seen).toBe('background');
    expect(currentPriority()).toBe('agent');
  });
});
