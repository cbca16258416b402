/**
 * One request budget for all RPC use (`solana.rpc_max_rps`), shared by agent requests and
 * background jobs. A hosted provider counts calls in a rolling window and answers 429 above it,
 * so the budget is a rolling window too (a token bucket would let a full bucket plus a second's
 * refill through in one window). Agent-facing calls are served before background ones (a provider's
 * 429 pauses that endpoint in rpc-transport.ts, not this budget). Waiting past a caller's deadline
 * fails that call alone with RpcBudgetExceeded.
 */
import { currentPriority, type RpcPriority } from './rpc-priority.ts';

/** Slack added to the window: requests reach the provider a little later than we send them, not always in order. */
const WINDOW_SLACK_MS = 50;

interface Waiter {
  deadline: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

/** A call waited for the budget until its deadline. */
export class RpcBudgetExceeded extends Error {
  override readonly name = 'RpcBudgetExceeded';

  constructor(
    message: string,
    /** When the budget will next have room, in ms from now. */
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

export class RpcBudget {
  /** Calls allowed per window, and the window (ms): rps 4 → 4 per 1 s; rps 0.5 → 1 per 2 s. */
  private readonly perWindow: number;
  private readonly windowMs: number;
  /** Start times of the calls in the current window, oldest first. */
  private readonly recent: number[] = [];
  private readonly queues: Record<RpcPriority, Waiter[]> = { agent: [], background: [] };
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    /** Calls per second; 0 = unlimited. */
    readonly rps: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.perWindow = rps > 0 ? Math.max(1, Math.floor(rps)) : Infinity;
    this.windowMs = rps > 0 ? (this.perWindow * 1000) / rps + WINDOW_SLACK_MS : 0;
  }

  /** Resolves when the call may go out; rejects with RpcBudgetExceeded once `deadline` (this clock) passes. */
  take(deadline: number, priority: RpcPriority = currentPriority()): Promise<void> {
    if (deadline <= this.now()) return Promise.reject(new RpcBudgetExceeded('the call reached its deadline before it could start', Math.max(1, this.room())));
    if (this.queues.agent.length === 0 && this.queues.background.length === 0 && this.room() === 0) {
      this.record();
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      this.queues[priority].push({ deadline, resolve, reject });
      this.pump();
    });
  }

  /** Calls waiting for the budget, by priority (for metrics and tests). */
  waiting(): Record<RpcPriority, number> {
    return { agent: this.queues.agent.length, background: this.queues.background.length };
  }

  /** Milliseconds until a call may go out: 0 now. */
  private room(): number {
    const t = this.now();
    if (this.perWindow === Infinity) return 0;
    while (this.recent.length > 0 && this.recent[0]! <= t - this.windowMs) this.recent.shift();
    return this.recent.length < this.perWindow ? 0 : this.recent[0]! + this.windowMs - t;
  }

  private record(): void {
    if (this.perWindow !== Infinity) this.recent.push(this.now());
  }

  private pump(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const t = this.now();
    for (const q of [this.queues.agent, this.queues.background]) {
      for (let i = q.length - 1; i >= 0; i--) {
        const w = q[i]!;
        if (w.deadline <= t) {
          q.splice(i, 1);
          w.reject(new RpcBudgetExceeded('waited for the RPC request budget until the deadline', Math.max(1, this.room())));
        }
      }
    }
    for (;;) {
      const next = this.queues.agent[0] ?? this.queues.background[0];
      if (next === undefined) return;
      const wait = this.room();
      if (wait > 0) {
        const nearest = Math.min(...[...this.queues.agent, ...this.queues.background].map((w) => w.deadline - t));
        this.timer = setTimeout(() => this.pump(), Math.max(1, Math.min(wait, nearest)));
        return;
      }
      (this.queues.agent.length > 0 ? this.queues.agent : this.queues.background).shift();
      this.record();
      next.resolve();
    }
  }
}
