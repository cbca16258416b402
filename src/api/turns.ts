/**
 * Admission for the actions that do heavy synchronous work (FROST, signing, the ledger's money
 * transactions): each waits for its own turn of the event loop, one per turn, so a ping or a read
 * that arrives meanwhile is served between two of them instead of behind all of them; and the
 * queue is bounded, so a burst beyond it is told to come back (SERVICE_UNAVAILABLE, Retry-After)
 * instead of queueing without end.
 */
import { AppError } from '../errors.ts';

export class Turns {
  private readonly queue: (() => void)[] = [];
  private draining = false;
  refused = 0;

  constructor(private readonly limit: number) {}

  /** How many wait now. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Resolves on a later turn of the event loop than any I/O already due; refuses past the limit. */
  take(): Promise<void> {
    if (this.queue.length >= this.limit) {
      this.refused++;
      throw new AppError('SERVICE_UNAVAILABLE', `The daemon is busy: ${this.queue.length} money actions wait already. Nothing was changed.`, {
        headers: { 'Retry-After': '1' },
        howToFix: 'Retry after 1 second (Retry-After); with the same idempotency key a retry never acts twice.',
      });
    }
    return new Promise<void>((resolve) => {
      this.queue.push(resolve);
      if (!this.draining) {
        this.draining = true;
        setImmediate(this.next);
      }
    });
  }

  /** One waiter a turn: its synchronous work runs right after, then the loop polls I/O again. */
  private readonly next = (): void => {
    this.queue.shift()?.();
    if (this.queue.length) setImmediate(this.next);
    else this.draining = false;
  };
}
