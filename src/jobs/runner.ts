/**
 * Named, restart-safe background jobs on croner (STYLE habit 10). A job is an idempotent
 * function over the database: each tick selects due rows and acts; a failure is logged and
 * counted, never thrown, and the next tick tries again. `protect` keeps ticks from overlapping.
 */
import { Cron } from 'croner';
import type { Logger } from '../log.ts';
import type { Metrics } from '../api/metrics.ts';

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

  constructor(
    private readonly log: Logger,
    private readonly metrics?: Metrics,
  ) {}

  /** Runs one job once, recording success or failure; never throws. */
  async runOnce(job: JobDef): Promise<boolean> {
    const started = performance.now();
    try {
      await job.run();
      this.metrics?.job(job.name, true);
      this.log.debug('job done', { job: job.name, duration_ms: Math.round(performance.now() - started) });
      return true;
    } catch (err) {
      this.metrics?.job(job.name, false);
      this.log.error('job failed', { job: job.name, error: (err as Error)?.message, stack: (err as Error)?.stack });
      return false;
    }
  }

  private track(p: Promise<unknown>): void {
    const done = p.then(() => undefined);
    this.running.add(done);
    void done.finally(() => this.running.delete(done));
  }

  /** Schedules `job`. */
  add(job: JobDef): void {
    const fire = () => this.track(this.runOnce(job));
    const options = { name: job.name, protect: true, catch: true, unref: true };
    const cron =
      typeof job.schedule === 'string'
        ? new Cron(job.schedule, options, fire)
        : new Cron('* * * * * *', { ...options, interval: Math.max(1, job.schedule.everySeconds) }, fire);
    this.crons.push(cron);
    if (job.runAtStart) fire();
  }

  /** Stops scheduling and waits for runs in flight (call before closing the database). */
  async stop(): Promise<void> {
    for (const c of this.crons) c.stop();
    this.crons = [];
    await Promise.all([...this.running]);
  }
}
