/** Approval rows and the one place an owner's decision changes the subject it decides. */
import type { Store } from './store.ts';
import { appendAudit, appendEvent } from './events.ts';

export interface ApprovalRow {
  approval_id: string;
  wallet_id: string;
  subject_type: 'payment' | 'withdrawal' | 'x402';
  subject_id: string;
  amount: bigint | null;
  recipient: string | null;
  reason: string;
  status: 'pending' | 'approved' | 'rejected' | 'cancelled' | 'expired';
  created_at: bigint;
  decided_at: bigint | null;
  decided_by: string | null;
  /** The owner's passkey assertion over the approval (JSON), when the owner has a passkey. */
  evidence?: string | null;
}

export async function insertApproval(
  db: Store,
  a: { approval_id: string; wallet_id: string; subject_type: ApprovalRow['subject_type']; subject_id: string; amount: bigint; recipient: string; reason: string; now: number },
): Promise<void> {
  await db.run("INSERT INTO approvals (approval_id, wallet_id, subject_type, subject_id, amount, recipient, reason, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)", a.approval_id, a.wallet_id, a.subject_type, a.subject_id, a.amount, a.recipient, a.reason, a.now);
}

export async function getApproval(db: Store, approvalId: string): Promise<ApprovalRow | null> {
  return await db.get<ApprovalRow>('SELECT * FROM approvals WHERE approval_id = ?', approvalId);
}

export async function pendingApprovals(db: Store, walletId: string): Promise<ApprovalRow[]> {
  return await db.all<ApprovalRow>("SELECT * FROM approvals WHERE wallet_id = ? AND status = 'pending' ORDER BY created_at DESC", walletId);
}

const EVENT_PREFIX: Record<ApprovalRow['subject_type'], string> = { payment: 'payment', withdrawal: 'withdrawal', x402: 'payment' };

/**
 * Applies an owner's decision: the approval and its subject transaction change together, with
 * their events and an audit entry. Call inside a write transaction. Returns false (and changes
 * nothing) unless the approval is still pending and its subject still awaits approval.
 */
export async function decideApproval(db: Store, approvalId: string, decision: 'approved' | 'rejected', decidedBy: string, now: number, evidence: unknown = null): Promise<boolean> {
  const approval = await getApproval(db, approvalId);
  if (!approval || approval.status !== 'pending') return false;
  const moved = (await db
    .run("UPDATE transactions SET status = ?, updated_at = ? WHERE transaction_id = ? AND status = 'awaiting_approval'", decision, now, approval.subject_id)).changes;
  if (moved !== 1) return false;
  await db.run('UPDATE approvals SET status = ?, decided_at = ?, decided_by = ?, evidence = ? WHERE approval_id = ?', decision, now, decidedBy, evidence === null ? null : JSON.stringify(evidence), approvalId);
  const data = { transaction_id: approval.subject_id, approval_id: approvalId, amount: approval.amount, decided_by: decidedBy };
  await appendEvent(db, { walletId: approval.wallet_id, type: `${EVENT_PREFIX[approval.subject_type]}.${decision}`, data, now });
  // What the owner approved, as their passkey signed it (src/domain/owner-decision.ts rebuilds it from this row).
  const decided = { ...data, subject_type: approval.subject_type, recipient: approval.recipient, ...(evidence === null ? {} : { passkey: evidence }) };
  await appendAudit(db, { walletId: approval.wallet_id, actor: decidedBy, kind: `approval.${decision}`, data: decided, now });
  return true;
}

/** Withdraws a pending approval whose subject was cancelled or expired. Call inside a write transaction. */
export async function closeApproval(db: Store, approvalId: string, status: 'cancelled' | 'expired', now: number): Promise<void> {
  await db.run("UPDATE approvals SET status = ?, decided_at = ? WHERE approval_id = ? AND status = 'pending'", status, now, approvalId);
}
