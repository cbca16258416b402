/** Withdrawal rows: the withdrawal's own id and reason, linked to the transaction that moves the money. */
import type { Database } from 'bun:sqlite';

export interface WithdrawalRow {
  withdrawal_id: string;
  transaction_id: string;
  wallet_id: string;
  to_address: string;
  reason: string;
  created_at: bigint;
}

export function insertWithdrawal(db: Database, w: { withdrawal_id: string; transaction_id: string; wallet_id: string; to_address: string; reason: string; now: number }): void {
  db.query('INSERT INTO withdrawals (withdrawal_id, transaction_id, wallet_id, to_address, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
    w.withdrawal_id,
    w.transaction_id,
    w.wallet_id,
    w.to_address,
    w.reason,
    w.now,
  );
}

/** A withdrawal of `walletId` only. */
export function getWithdrawal(db: Database, walletId: string, withdrawalId: string): WithdrawalRow | null {
  return db.query<WithdrawalRow, [string, string]>('SELECT * FROM withdrawals WHERE withdrawal_id = ? AND wallet_id = ?').get(withdrawalId, walletId);
}

export function withdrawalOfTx(db: Database, transactionId: string): WithdrawalRow | null {
  return db.query<WithdrawalRow, [string]>('SELECT * FROM withdrawals WHERE transaction_id = ?').get(transactionId);
}
