import { describe, expect, test } from 'bun:test';
import { JobRunner } from '../../src/jobs/runner.ts';
import { Metrics } from '../../src/metrics.ts';
import { memoryLogger } from '../helpers/services.ts';

describe('job runner', () => {
  test('a failing job backs off 1 s, 2 s, 4 s … up to a minute, is never thrown, and recovers', async () => {
    let now = 1_000_000;
    const { log, lines } = memoryLogger();
    const metrics = new Metrics();
    const runner = new JobRunner(log, metrics, () => now);
    let fail = true;
    const job = { name: 'flaky', schedule: { everySeconds: 1 }, run: () => {
      if (fail) throw new Error('rpc down');
    } };
    for (const wait of [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]) {
      expect(await runner.runOnce(job)).toBe(false);
      expect(runner.isBackingOff('flaky')).toBe(true);
      now += wait - 1;
      expect(runner.isBackingOff('flaky')).toBe(true);
      now += 1;
      expect(runner.isBackingOff('flaky')).toBe(false);
    }
    fail = false;
    expect(await runner.runOnce(job)).toBe(true);
    expect(runner.isBackingOff('flaky')).toBe(false);
    expect(lines.some((l) => l.includes('"job recovered"'))).toBe(true);
    expect(await metrics.render()).toContain('agent_wallet_job_failures_total{job="flaky"} 8');
  });
});
