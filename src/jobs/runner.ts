/**
 * Named, restart-safe background jobs on croner (STYLE habit 10). A job is an idempotent
 * function over the database: each tick selects due rows and acts; a failure is logged and
 * counted, never thrown, and the next tick tries again. `protect` keeps ticks from overlapping.
 *
 * On a ledger several daemons share, a tick runs on one node at a time: it holds the job's lock
 * for its run, and a node that finds it held skips the tick. So due items fall to whichever node
 * ticks first, and a dead node's share to the others at their next tick. A `singleton` job (the
 * chain watch) runs only on the node holding its lease, which the node keeps until it stops or
 * dies; the others try for it every tick and one takes it over at its next tick after the death.
 */
import { Cron } from 'croner';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { inBackground } from '../solana/rpc-priority.ts';
import { clockTrusted, localNodeLocks, MAX_CLOCK_SKEW_MS, type NodeLocks } from '../db/node-locks.ts';
import { withFence } from '../db/fence.ts';

const MAX_BACKOFF_MS = 60_000;

/** The node lock a singleton job runs under. */
export const leaseOf = (job: string) => `lease:${job}`;

export interface JobDef {
  name: string;
  /** A cron pattern (seconds field allowed) or an interval in seconds. */
  schedule: string | { everySeconds: number };
  run: () => void | Promise<void>;
  /** Also run once right after start (re-scan at startup). */
  runAtStart?: boolean;
  /** Runs on one node of a shared ledger for as long as that node lives (a lease), not tick by tick. */
  singleton?: boolean;
}

export class JobRunner {
  private crons: Cron[] = [];
  private running = new Set<Promise<void>>();
  private singletons: string[] = [];
  /** The node's clock was off the database's at the last tick (logged once per spell). */
  private clockOff = false;
  /** Consecutive failures and the earliest next run, per job: a failing job backs off up to a minute. */
  private backoff = new Map<string, { failures: number; notBefore: number }>();

  constructor(
    private readonly log: Logger,
    private readonly metrics?: Metrics,
    private readonly now: () => number = Date.now,
    private readonly locks: NodeLocks = localNodeLocks(),
  ) {
    locks.onLost((key) => this.log.warn('lost a node lock with the connection that held it; another node may take it over', { lock: key }));
  }

  /** Runs `job` once if this node's turn: it holds the job's lease, or gets the tick's lock. False when another node has it. */
  private async onThisNode(job: JobDef, run: () => Promise<boolean>): Promise<boolean> {
    if (!this.locks.shared) return await run();
    if (!clockTrusted(this.locks)) {
      if (!this.clockOff) this.log.warn("this node's clock is off from the database server's: it runs no job until it agrees (the other nodes run them); sync the clock (NTP)", { skew_ms: this.locks.clockSkewMs(), max_ms: MAX_CLOCK_SKEW_MS });
      this.clockOff = true;
      if (job.singleton && this.locks.holds(leaseOf(job.name))) await this.locks.release(leaseOf(job.name));
      return false;
    }
    if (this.clockOff) this.log.info("this node's clock agrees with the database server's again: it runs jobs", { skew_ms: this.locks.clockSkewMs() });
    this.clockOff = false;
    if (job.singleton) {
      const lease = leaseOf(job.name);
      const had = this.locks.holds(lease);
      if (!(await this.locks.tryTake(lease))) return false;
      if (!had) this.log.info('took the lease of a singleton job', { job: job.name });
      // Its writes commit only while the lease is still this node's (db/fence.ts).
      return await withFence(this.locks.fenceOf(lease), run);
    }
    let ok = false;
    await this.locks.exclusive(`job:${job.name}`, async () => {
      ok = await run();
    });
    return ok;
  }

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
    if (job.singleton) this.singletons.push(job.name);
    // Returning the run lets croner's `protect` skip ticks while the previous run is still going.
    const fire = async (): Promise<void> => {
      if (this.isBackingOff(job.name)) return;
      // A lock the database cannot give is a failed tick (backs off), like the job's own failure.
      const run = this.onThisNode(job, () => this.runOnce(job)).catch((err: unknown) => {
        this.log.warn('job skipped: its node lock could not be asked for', { job: job.name, error: (err as Error).message });
        return false;
      });
      this.track(run);
      await run;
    };
    // Unnamed for croner: its names are one registry per process, and a test runs several runners (nodes) in one.
    const options = { protect: true, catch: true, unref: true };
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
    // Handed over at once rather than when the connection closes.
    for (const name of this.singletons) if (this.locks.holds(leaseOf(name))) await this.locks.release(leaseOf(name)).catch(() => undefined);
  }
}
