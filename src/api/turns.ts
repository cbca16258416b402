/**
 * Admission for the actions that do heavy synchronous work (FROST, signing, the ledger's money
 * transactions): each waits for its own turn of the event loop, one per turn, so a ping or a read
 * that arrives meanwhile is served between two of them instead of behind all of them; and the
 * queue is bounded, so a burst beyond it is told to come back (SERVICE_UNAVAILABLE, Retry-After)
 * instead of queueing without end. The turns are the process's (src/loop-turns.ts); the bound is this app's.
 */
import { AppError } from '../errors.ts';
import { nextTurn } from '../loop-turns.ts';

export class Turns {
  private queued = 0;
  refused = 0;

  constructor(private readonly limit: number) {}

  /** How many wait now. */
  get waiting(): number {
    return this.queued;
  }

  /** Resolves on a later turn of the event loop than any I/O already due (src/loop-turns.ts); refuses past the limit. */
  take(): Promise<void> {
    if (this.queued >= this.limit) {
      this.refused++;
      throw new AppError('SERVICE_UNAVAILABLE', `The daemon is busy: ${this.queued} money actions wait already. Nothing was changed.`, {
        headers: { 'Retry-After': '1' },
        howToFix: 'Retry after 1 second (Retry-After); with the same idempotency key a retry never acts twice.',
      });
    }
    this.queued++;
    return nextTurn('start').then(() => {
      this.queued--;
    });
  }
}
