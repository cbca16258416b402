/** How transactions look on the wire: decimal amounts, ISO times, and the next step for the agent. */
import type { TxRow } from '../db/transactions.ts';
import { toUsdcNumber } from '../domain/money.ts';

const iso = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** What the agent should do next with a transaction in this status. */
export function nextStep(tx: TxRow): string | null {
  const confirm = tx.type === 'withdrawal' ? 'confirm_withdrawal' : tx.type === 'x402' ? 'x402_confirm' : 'confirm_payment';
  switch (tx.status) {
    case 'pre_approved':
    case 'approved':
      return `confirm with ${confirm} (transaction_id ${tx.transaction_id}), then sign with frost_sign_init / frost_sign_complete and send with submit_signed_tx; the agent-wallet client does all of this`;
    case 'awaiting_approval':
      return `wait for owner approval: poll approval_status with approval_id ${tx.approval_id} and wait_seconds, then ${confirm}`;
    case 'pending':
      return 'being sent to Solana: call submit_signed_tx with wait=true, or watch events for payment.completed';
    default:
      return null;
  }
}

export function txView(tx: TxRow) {
  const fees = tx.fee + tx.setup_fee;
  return {
    transaction_id: tx.transaction_id,
    type: tx.type,
    direction: tx.direction,
    status: tx.status,
    amount: toUsdcNumber(tx.amount),
    fee: toUsdcNumber(fees),
    fee_breakdown: { platform_fee: toUsdcNumber(tx.fee), account_setup_fee: toUsdcNumber(tx.setup_fee) },
    total: toUsdcNumber(tx.direction === 'out' ? tx.amount + fees : tx.amount),
    to: tx.direction === 'out' ? tx.counterparty : null,
    from: tx.direction === 'in' ? tx.counterparty : null,
    to_address: tx.to_address,
    note: tx.note,
    reference: tx.reference,
    payment_request_id: tx.payment_request_id,
    approval_id: tx.approval_id,
    signature: tx.signature,
    decision: tx.decision_rule || tx.decision_reason ? { rule: tx.decision_rule, reason: tx.decision_reason } : null,
    error: tx.error,
    created_at: iso(tx.created_at),
    updated_at: iso(tx.updated_at),
    expires_at: iso(tx.expires_at),
    completed_at: iso(tx.completed_at),
    next_step: nextStep(tx),
  };
}
