/** Withdrawal rows: the withdrawal's own id and reason, linked to the transaction that moves the money. */
import type { Store } from './store.ts';

export interface WithdrawalRow {
  withdrawal_id: string;
  transaction_id: string;
  wallet_id: string;
  to_address: string;
  reason: string;
  created_at: bigint;
}

export async function insertWithdrawal(db: Store, w: { withdrawal_id: string; transaction_id: string; wallet_id: string; to_address: string; reason: string; now: number }): Promise<void> {
  await db.run('INSERT INTO withdrawals (withdrawal_id, transaction_id, wallet_id, to_address, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)', w.withdrawal_id,
    w.transaction_id,
    w.wallet_id,
    w.to_address,
    w.reason,
    w.now,
  );
}

/** A withdrawal of `walletId` only. */
export async function getWithdrawal(db: Store, walletId: string, withdrawalId: string): Promise<WithdrawalRow | null> {
  return await db.get<WithdrawalRow>('SELECT * FROM withdrawals WHERE withdrawal_id = ? AND wallet_id = ?', withdrawalId, walletId);
}

export async function withdrawalOfTx(db: Store, transactionId: string): Promise<WithdrawalRow | null> {
  return await db.get<WithdrawalRow>('SELECT * FROM withdrawals WHERE transaction_id = ?', transactionId);
}
