/**
 * Guard rails at signing time. Rails that tighten apply at once (DESIGN §5), so a payment
 * created under looser rails is checked again at confirm and when the server takes part in
 * signing it. Its budget was reserved when it was created, so only the per-payment rules are
 * evaluated here (with no other usage counted). The recipient is resolved as the intent resolved
 * it, so a rule naming a username applies to a payment addressed by that wallet's address.
 */
import { approvalUnsigned } from '../owner/passkeys.ts';
import { getWallet } from '../db/wallets.ts';
import { loadEffectiveRails } from '../db/guard-rails.ts';
import { moveTx, setTxApprovalId, type TxRow } from '../db/transactions.ts';
import { AppError } from '../errors.ts';
import { newId } from '../contract/ids.ts';
import { getApproval, insertApproval } from '../db/approvals.ts';
import { appendEvent } from '../db/events.ts';
import { queueApprovalMail } from '../mail/approval-mail.ts';
import { decide, emptyUsage, type Decision } from '../domain/guardrails.ts';
import type { Services } from '../services.ts';
import { railsRecipientOf } from './recipient.ts';

export type Verdict = 'ok' | 'reject' | 'needs_approval';

/** 'reject': a hard rule now blocks it; 'needs_approval': a pre-approved intent now needs the owner. */
export async function recheckRails(services: Services, tx: TxRow, host?: string): Promise<{ verdict: Verdict; decision: Decision }> {
  const now = services.now();
  const rails = await loadEffectiveRails(services.db, tx.wallet_id, now);
  const { category, username, address } = await railsRecipientOf(services.db, tx);
  const decision = decide(rails, { category, amount: tx.amount + tx.fee + tx.setup_fee, recipient: { username, address }, host }, emptyUsage(), now);
  if (decision.outcome === 'rejected') return { verdict: 'reject', decision };
  if (decision.outcome === 'awaiting_approval' && tx.status === 'pre_approved') return { verdict: 'needs_approval', decision };
  return { verdict: 'ok', decision };
}

/**
 * Re-applies the guard rails; a rail tightened since the intent was created moves it to rejected,
 * or to awaiting_approval with its approval and the owner's mail, and returns the error to answer
 * with (null when the rails still allow it). Synchronous: inside the signing transaction its
 * writes join that transaction, elsewhere they commit on their own.
 */
export async function refuseUnlessRailsAllow(services: Services, tx: TxRow, host?: string): Promise<AppError | null> {
  const unsigned = await ownerSignatureMissing(services, tx);
  if (unsigned) return unsigned;
  const { verdict, decision } = await recheckRails(services, tx, host);
  if (verdict === 'ok') return null;
  const now = services.now().getTime();
  const what = tx.type === 'withdrawal' ? 'withdrawal' : tx.type === 'x402' ? 'purchase' : 'payment';
  if (verdict === 'reject') {
    await services.db
      .transaction(async () => {
        if (await moveTx(services.db, tx.transaction_id, ['pre_approved', 'approved'], 'rejected', now, { error: decision.reason })) {
          await appendEvent(services.db, { walletId: tx.wallet_id, type: `${tx.type === 'withdrawal' ? 'withdrawal' : 'payment'}.rejected`, data: { transaction_id: tx.transaction_id, rule: decision.rule, reason: decision.reason }, now });
        }
      });
    return new AppError('INVALID_STATUS', `The guard rails now block this ${what}: ${decision.reason}`, { howToFix: 'Ask the owner to change the guard rails, then create a new payment.', details: { rule: decision.rule } });
  }
  const approvalId = newId('approval');
  await services.db
    .transaction(async () => {
      if (!(await moveTx(services.db, tx.transaction_id, ['pre_approved'], 'awaiting_approval', now))) return;
      await setTxApprovalId(services.db, tx.transaction_id, approvalId);
      await insertApproval(services.db, { approval_id: approvalId, wallet_id: tx.wallet_id, subject_type: tx.type === 'withdrawal' ? 'withdrawal' : tx.type === 'x402' ? 'x402' : 'payment', subject_id: tx.transaction_id, amount: tx.amount + tx.fee + tx.setup_fee, recipient: tx.counterparty ?? '', reason: decision.reason, now });
      await appendEvent(services.db, { walletId: tx.wallet_id, type: 'approval.requested', data: { transaction_id: tx.transaction_id, approval_id: approvalId, reason: decision.reason }, now });
      await queueApprovalMail(services, (await getApproval(services.db, approvalId))!);
    });
  return new AppError('AWAITING_APPROVAL', `The guard rails changed: ${decision.reason}`, { howToFix: `Wait for the owner: poll approval_status with approval_id ${approvalId}, then confirm again.`, details: { approval_id: approvalId } });
}

/**
 * The daemon co-signs what an approval approved only when the approval is the owner's own: an
 * owner with a passkey signed it (src/owner/passkeys.ts). An approval written into the ledger
 * without that assertion (by an operator with database access) is refused and logged.
 */
async function ownerSignatureMissing(services: Services, tx: TxRow): Promise<AppError | null> {
  if (tx.status !== 'approved') return null;
  const wallet = await getWallet(services.db, tx.wallet_id);
  if (!wallet?.owner_id) return null;
  const approval = tx.approval_id ? await getApproval(services.db, tx.approval_id) : null;
  const why = await approvalUnsigned(services, wallet.owner_id, tx, approval);
  if (!why) return null;
  services.log.error('refused to co-sign: the approval is not the owner\'s', { transaction_id: tx.transaction_id, approval_id: tx.approval_id, why });
  return new AppError('AWAITING_APPROVAL', `The daemon does not sign this: ${why}.`, {
    howToFix: "The owner approves it again on the dashboard with their passkey; an approval that is not the owner's own is never signed.",
    details: { approval_id: tx.approval_id },
  });
}

/** refuseUnlessRailsAllow, thrown. */
export async function applyRecheck(services: Services, tx: TxRow, host?: string): Promise<void> {
  const refused = await refuseUnlessRailsAllow(services, tx, host);
  if (refused) throw refused;
}
