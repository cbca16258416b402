/**
 * The payment jobs: confirmations (pending → completed / failed, re-send while valid, back to
 * confirmable after expiry AND absence), the 48-hour intent expiry, and the idempotency-key
 * purge. Each tick works from the database, so a restart resumes where the last one stopped.
 */
import { closeApproval } from '../db/approvals.ts';
import { appendEvent } from '../db/events.ts';
import { purgeIdempotencyKeys } from '../db/idempotency.ts';
import { closeOpenSessions } from '../db/sign-sessions.ts';
import { expiredIntents, moveTx, pendingTxs } from '../db/transactions.ts';
import { settle } from '../payments/settle.ts';
import { ChainUnavailableError } from '../solana/errors.ts';
import type { Services } from '../services.ts';
import type { JobDef } from './runner.ts';

/** Idempotency keys are remembered 72 h, longer than the 48 h life of an intent (DESIGN §3). */
const IDEMPOTENCY_RETENTION_MS = 72 * 60 * 60 * 1000;

/**
 * One pass of the confirmation job; exported for tests. An unreachable chain ends the pass (the
 * runner backs off); any other failure is logged for that transaction and the pass goes on.
 */
export async function confirmPending(services: Services): Promise<void> {
  for (const tx of pendingTxs(services.db)) {
    try {
      await settle(services, tx.transaction_id, { rebroadcast: true });
    } catch (err) {
      if (err instanceof ChainUnavailableError) throw err;
      services.log.warn('confirmation check failed', { transaction_id: tx.transaction_id, error: (err as Error).message });
    }
  }
}

/** One pass of the expiry job: each expired intent moves once, with one event. */
export function expireIntents(services: Services): number {
  const now = services.now().getTime();
  let expired = 0;
  for (const tx of expiredIntents(services.db, now)) {
    services.db
      .transaction(() => {
        if (!moveTx(services.db, tx.transaction_id, ['pre_approved', 'approved', 'awaiting_approval'], 'expired', now)) return;
        if (tx.approval_id) closeApproval(services.db, tx.approval_id, 'expired', now);
        closeOpenSessions(services.db, tx.transaction_id);
        appendEvent(services.db, { walletId: tx.wallet_id, type: `${tx.type === 'withdrawal' ? 'withdrawal' : 'payment'}.expired`, data: { transaction_id: tx.transaction_id }, now });
        expired++;
      })
      .immediate();
  }
  return expired;
}

export function paymentJobs(services: Services): JobDef[] {
  return [
    { name: 'confirmations', schedule: { everySeconds: 1 }, run: () => confirmPending(services), runAtStart: true },
    { name: 'intent-expiry', schedule: { everySeconds: 60 }, run: () => void expireIntents(services), runAtStart: true },
    {
      name: 'idempotency-purge',
      schedule: '0 15 * * * *',
      run: () => void services.db.transaction(() => purgeIdempotencyKeys(services.db, services.now().getTime() - IDEMPOTENCY_RETENTION_MS)).immediate(),
    },
  ];
}
