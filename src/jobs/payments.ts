/**
 * The payment jobs: confirmations (pending → completed / failed, re-send while valid, back to
 * confirmable after expiry AND absence; one batched look per cadence, settle.ts), the 48-hour intent expiry, and the idempotency-key
 * purge. Each tick works from the database, so a restart resumes where the last one stopped.
 */
import { closeApproval } from '../db/approvals.ts';
import { appendEvent } from '../db/events.ts';
import { purgeIdempotencyKeys } from '../db/idempotency.ts';
import { closeOpenSessions } from '../db/sign-sessions.ts';
import { expiredIntents, moveTx } from '../db/transactions.ts';
import { confirmPending, confirmPendingPass } from '../payments/settle.ts';
import type { Services } from '../services.ts';
import type { JobDef } from './runner.ts';

/** Idempotency keys are remembered 72 h, longer than the 48 h life of an intent (DESIGN §3). */
const IDEMPOTENCY_RETENTION_MS = 72 * 60 * 60 * 1000;

/** How often the confirmation job looks at the pending transactions (one height + one batched status call). */
export const CONFIRMATION_CADENCE_SECONDS = 2;

/** One pass of the confirmation job, for tests: an unreachable chain ends it with ChainUnavailableError. */
export { confirmPending };

/** One pass of the expiry job: each expired intent moves once, with one event. */
export async function expireIntents(services: Services): Promise<number> {
  const now = services.now().getTime();
  let expired = 0;
  for (const tx of (await expiredIntents(services.db, now))) {
    await services.db
      .transaction(async () => {
        if (!(await moveTx(services.db, tx.transaction_id, ['pre_approved', 'approved', 'awaiting_approval'], 'expired', now))) return;
        if (tx.approval_id) await closeApproval(services.db, tx.approval_id, 'expired', now);
        await closeOpenSessions(services.db, tx.transaction_id);
        await appendEvent(services.db, { walletId: tx.wallet_id, type: `${tx.type === 'withdrawal' ? 'withdrawal' : 'payment'}.expired`, data: { transaction_id: tx.transaction_id }, now });
        expired++;
      });
  }
  return expired;
}

export function paymentJobs(services: Services): JobDef[] {
  return [
    // A pass is skipped when agents waiting in submit_signed_tx looked at everything within the last half cadence.
    {
      name: 'confirmations',
      schedule: { everySeconds: CONFIRMATION_CADENCE_SECONDS },
      run: () => confirmPendingPass(services, (CONFIRMATION_CADENCE_SECONDS * 1000) / 2),
      runAtStart: true,
    },
    { name: 'intent-expiry', schedule: { everySeconds: 60 }, run: () => void expireIntents(services), runAtStart: true },
    {
      name: 'idempotency-purge',
      schedule: '0 15 * * * *',
      run: async () => void (await services.db.transaction(async () => await purgeIdempotencyKeys(services.db, services.now().getTime() - IDEMPOTENCY_RETENTION_MS))),
    },
  ];
}
