/**
 * Named, restart-safe background jobs on croner (STYLE habit 10). A job is an idempotent
 * function over the database: each tick selects due rows and acts; a failure is logged and
 * counted, never thrown, and the next tick tries again. `protect` keeps ticks from overlapping.
 */
import { Cron } from 'croner';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { inBackground } from '../solana/rpc-priority.ts';

const MAX_BACKOFF_MS = 60_000;

export interface JobDef {
  name: string;
  /** A cron pattern (seconds field allowed) or an interval in seconds. */
  schedule: string | { everySeconds: number };
  run: () => void | Promise<void>;
  /** Also run once right after start (re-scan at startup). */
  runAtStart?: boolean;
}

export class JobRunner {
  private crons: Cron[] = [];
  private running = new Set<Promise<void>>();
  /** Consecutive failures and the earliest next run, per job: a failing job backs off up to a minute. */
  private backoff = new Map<string, { failures: number; notBefore: number }>();

  constructor(
    private readonly log: Logger,
    private readonly metrics?: Metrics,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs one job once, recording success or failure; never throws. */
  async runOnce(job: JobDef): Promise<boolean> {
    const started = performance.now();
    try {
      // Jobs' RPC calls wait behind agent-facing ones when the request budget is short.
      await inBackground(job.run);
      this.metrics?.job(job.name, true);
      if (this.backoff.delete(job.name)) this.log.info('job recovered', { job: job.name });
      this.log.debug('job done', { job: job.name, duration_ms: Math.round(performance.now() - started) });
      return true;
    } catch (err) {
      this.metrics?.job(job.name, false);
      const failures = (this.backoff.get(job.name)?.failures ?? 0) + 1;
      const waitMs = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (failures - 1));
      this.backoff.set(job.name, { failures, notBefore: this.now() + waitMs });
      this.log.error('job failed', { job: job.name, failures, retry_in_ms: waitMs, error: (err as Error)?.message, stack: (err as Error)?.stack });
      return false;
    }
  }

  /** Whether a failing job is still backing off (its ticks are skipped). */
  isBackingOff(name: string): boolean {
    const state = this.backoff.get(name);
    return state !== undefined && this.now() < state.notBefore;
  }

  private track(p: Promise<unknown>): void {
    const done = p.then(() => undefined);
    this.running.add(done);
    void done.finally(() => this.running.delete(done));
  }

  /** Schedules `job`. */
  add(job: JobDef): void {
    // Returning the run lets croner's `protect` skip ticks while the previous run is still going.
    const fire = async (): Promise<void> => {
      if (this.isBackingOff(job.name)) return;
      const run = this.runOnce(job);
      this.track(run);
      await run;
    };
    const options = { name: job.name, protect: true, catch: true, unref: true };
    const cron =
      typeof job.schedule === 'string'
        ? new Cron(job.schedule, options, fire)
        : new Cron('* * * * * *', { ...options, interval: Math.max(1, job.schedule.everySeconds) }, fire);
    this.crons.push(cron);
    if (job.runAtStart) void fire();
  }

  /** Stops scheduling and waits for runs in flight (call before closing the database). */
  async stop(): Promise<void> {
    for (const c of this.crons) c.stop();
    this.crons = [];
    await Promise.all([...this.running]);
  }
}
