/** The transactions ledger: intents, their signing artefacts and their outcomes. */
import type { Database } from 'bun:sqlite';

export type TxStatus = 'pre_approved' | 'awaiting_approval' | 'approved' | 'rejected' | 'pending' | 'completed' | 'failed' | 'expired' | 'cancelled';
export type TxType = 'payment' | 'withdrawal' | 'x402' | 'deposit';

export interface TxRow {
  transaction_id: string;
  wallet_id: string;
  type: TxType;
  direction: 'out' | 'in';
  category: string | null;
  status: TxStatus;
  amount: bigint;
  fee: bigint;
  setup_fee: bigint;
  counterparty: string | null;
  to_wallet_id: string | null;
  to_merchant_id: string | null;
  to_address: string | null;
  note: string | null;
  reference: string | null;
  payment_request_id: string | null;
  decision_rule: string | null;
  decision_reason: string | null;
  approval_id: string | null;
  idempotency_key: string | null;
  message: Uint8Array | null;
  last_valid_block_height: bigint | null;
  /** Micro-lamports per compute unit of the current (or, after an expiry reset, the last signed) message. */
  priority_fee: bigint | null;
  signed_tx: Uint8Array | null;
  signature: string | null;
  error: string | null;
  created_at: bigint;
  updated_at: bigint;
  expires_at: bigint | null;
  completed_at: bigint | null;
}

export type NewTx = Pick<TxRow, 'transaction_id' | 'wallet_id' | 'type' | 'direction' | 'status' | 'amount'> &
  Partial<Pick<TxRow, 'category' | 'fee' | 'setup_fee' | 'counterparty' | 'to_wallet_id' | 'to_merchant_id' | 'to_address' | 'note' | 'reference' | 'payment_request_id' | 'decision_rule' | 'decision_reason' | 'approval_id' | 'idempotency_key' | 'signature'>> & { now: number; expires_at?: number | null; completed_at?: number | null };

/** Statuses from which a transaction can be signed. */
export const CONFIRMABLE: readonly TxStatus[] = ['pre_approved', 'approved'];

export function insertTx(db: Database, t: NewTx): void {
  db.query(
    `INSERT INTO transactions (transaction_id, wallet_id, type, direction, category, status, amount, fee, setup_fee, counterparty, to_wallet_id,
       to_merchant_id, to_address, note, reference, payment_request_id, decision_rule, decision_reason, approval_id, idempotency_key, signature,
       created_at, updated_at, expires_at, completed_at)
     VALUES ($transaction_id, $wallet_id, $type, $direction, $category, $status, $amount, $fee, $setup_fee, $counterparty, $to_wallet_id,
       $to_merchant_id, $to_address, $note, $reference, $payment_request_id, $decision_rule, $decision_reason, $approval_id, $idempotency_key, $signature,
       $now, $now, $expires_at, $completed_at)`,
  ).run({
    transaction_id: t.transaction_id,
    wallet_id: t.wallet_id,
    type: t.type,
    direction: t.direction,
    category: t.category ?? null,
    status: t.status,
    amount: t.amount,
    fee: t.fee ?? 0n,
    setup_fee: t.setup_fee ?? 0n,
    counterparty: t.counterparty ?? null,
    to_wallet_id: t.to_wallet_id ?? null,
    to_merchant_id: t.to_merchant_id ?? null,
    to_address: t.to_address ?? null,
    note: t.note ?? null,
    reference: t.reference ?? null,
    payment_request_id: t.payment_request_id ?? null,
    decision_rule: t.decision_rule ?? null,
    decision_reason: t.decision_reason ?? null,
    approval_id: t.approval_id ?? null,
    idempotency_key: t.idempotency_key ?? null,
    signature: t.signature ?? null,
    now: t.now,
    expires_at: t.expires_at ?? null,
    completed_at: t.completed_at ?? null,
  });
}

export function getTx(db: Database, transactionId: string): TxRow | null {
  return db.query<TxRow, [string]>('SELECT * FROM transactions WHERE transaction_id = ?').get(transactionId);
}

/** A transaction of `walletId` only: another wallet's id is as unknown as a made-up one. */
export function getWalletTx(db: Database, walletId: string, transactionId: string): TxRow | null {
  return db.query<TxRow, [string, string]>('SELECT * FROM transactions WHERE transaction_id = ? AND wallet_id = ?').get(transactionId, walletId);
}

export function getTxByIdempotencyKey(db: Database, walletId: string, type: TxType, key: string): TxRow | null {
  return db.query<TxRow, [string, string, string]>('SELECT * FROM transactions WHERE wallet_id = ? AND type = ? AND idempotency_key = ?').get(walletId, type, key);
}

/** Moves a transaction from one of `from` to `to`; false when it was not in `from` (someone else moved it). */
export function moveTx(db: Database, transactionId: string, from: readonly TxStatus[], to: TxStatus, now: number, extra: { error?: string | null; completed_at?: number } = {}): boolean {
  const placeholders = from.map(() => '?').join(', ');
  return (
    db
      .query(`UPDATE transactions SET status = ?, updated_at = ?, error = coalesce(?, error), completed_at = coalesce(?, completed_at) WHERE transaction_id = ? AND status IN (${placeholders})`)
      .run(to, now, extra.error ?? null, extra.completed_at ?? null, transactionId, ...from).changes === 1
  );
}

/** Stores the message built for signing (replacing an unsigned expired one) and, when given, its compute-unit price. */
export function setTxMessage(db: Database, transactionId: string, message: Uint8Array, lastValidBlockHeight: bigint, now: number, priorityFee: bigint | null = null): void {
  db.query(
    'UPDATE transactions SET message = ?, last_valid_block_height = ?, priority_fee = COALESCE(?, priority_fee), updated_at = ? WHERE transaction_id = ? AND signed_tx IS NULL',
  ).run(message, lastValidBlockHeight, priorityFee, now, transactionId);
}

/** The amount of a transaction not signed yet, for a message built again over a changed balance (a sweep's). */
export function setUnsignedTxAmount(db: Database, transactionId: string, amount: bigint, now: number): void {
  db.query('UPDATE transactions SET amount = ?, updated_at = ? WHERE transaction_id = ? AND signed_tx IS NULL').run(amount, now, transactionId);
}

/** Records the signed bytes and moves the transaction to pending, before the first broadcast. */
export function setTxSigned(db: Database, transactionId: string, signedTx: Uint8Array, signature: string | null, now: number): boolean {
  return (
    db
      .query("UPDATE transactions SET signed_tx = ?, signature = ?, status = 'pending', updated_at = ? WHERE transaction_id = ? AND signed_tx IS NULL AND status IN ('pre_approved', 'approved')")
      .run(signedTx, signature, now, transactionId).changes === 1
  );
}

/**
 * After the blockhash of a signed message expired without it landing: back to confirmable so a
 * new message can be built and signed. Only from pending with the given signature.
 */
export function resetExpiredSigning(db: Database, transactionId: string, signature: string, backTo: TxStatus, now: number): boolean {
  return (
    db
      .query(
        "UPDATE transactions SET status = ?, message = NULL, signed_tx = NULL, signature = NULL, last_valid_block_height = NULL, error = 'the signed transaction expired before it landed; confirm again', updated_at = ? WHERE transaction_id = ? AND status = 'pending' AND signature = ?",
      )
      .run(backTo, now, transactionId, signature).changes === 1
  );
}

export function pendingTxs(db: Database, limit = 200): TxRow[] {
  return db.query<TxRow, [number]>("SELECT * FROM transactions WHERE status = 'pending' AND signed_tx IS NOT NULL ORDER BY updated_at LIMIT ?").all(limit);
}

/** The ids and signatures of the pending signed transactions, oldest first: all a look at their outcomes reads before one lands. */
export function pendingSignatures(db: Database, limit: number): { transaction_id: string; signature: string }[] {
  return db
    .query<{ transaction_id: string; signature: string }, [number]>(
      "SELECT transaction_id, signature FROM transactions WHERE status = 'pending' AND signed_tx IS NOT NULL AND signature IS NOT NULL ORDER BY updated_at LIMIT ?",
    )
    .all(limit);
}

export function expiredIntents(db: Database, now: number, limit = 500): TxRow[] {
  return db
    .query<TxRow, [number, number]>("SELECT * FROM transactions WHERE status IN ('pre_approved', 'approved', 'awaiting_approval') AND expires_at <= ? ORDER BY expires_at LIMIT ?")
    .all(now, limit);
}

/** Money of a wallet set aside by outgoing transactions that have not settled or been released. */
export function outstandingOut(db: Database, walletId: string): bigint {
  // Kept by triggers (schema.sql, wallet_spend): the sum over the wallet's outgoing rows that are
  // pre_approved, awaiting_approval, approved or pending.
  return db.query<{ outstanding: bigint }, [string]>('SELECT outstanding FROM wallet_spend WHERE wallet_id = ?').get(walletId)?.outstanding ?? 0n;
}

/** True when `signature` is one of our own signed outgoing transactions (its recipient row is written at completion). */
export function isOwnOutgoing(db: Database, signature: string): boolean {
  return db.query("SELECT 1 FROM transactions WHERE signature = ? AND direction = 'out'").get(signature) !== null;
}

export function hasSignature(db: Database, walletId: string, signature: string): boolean {
  return db.query('SELECT 1 FROM transactions WHERE wallet_id = ? AND signature = ?').get(walletId, signature) !== null;
}

export interface TxFilter {
  walletId: string;
  statuses?: readonly TxStatus[];
  types?: readonly TxType[];
  direction?: 'in' | 'out';
  withFee?: boolean;
  limit: number;
  offset: number;
}

/** A page of a wallet's transactions, newest first, and the total matching. */
export function listTxs(db: Database, f: TxFilter): { items: TxRow[]; total: number } {
  const where = ['wallet_id = ?'];
  const args: (string | number)[] = [f.walletId];
  if (f.statuses?.length) {
    where.push(`status IN (${f.statuses.map(() => '?').join(', ')})`);
    args.push(...f.statuses);
  }
  if (f.types?.length) {
    where.push(`type IN (${f.types.map(() => '?').join(', ')})`);
    args.push(...f.types);
  }
  if (f.direction) {
    where.push('direction = ?');
    args.push(f.direction);
  }
  if (f.withFee) where.push('fee + setup_fee > 0');
  const clause = where.join(' AND ');
  const total = Number((db.query(`SELECT count(*) AS n FROM transactions WHERE ${clause}`).get(...args) as { n: bigint }).n);
  const items = db.query<TxRow, (string | number)[]>(`SELECT * FROM transactions WHERE ${clause} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`).all(...args, f.limit, f.offset);
  return { items, total };
}

/** Links a transaction to the approval a tightened rail opened for it. */
export function setTxApprovalId(db: Database, transactionId: string, approvalId: string): void {
  db.query('UPDATE transactions SET approval_id = ? WHERE transaction_id = ?').run(approvalId, transactionId);
}

/** Outgoing statuses that hold money, a recipient's account creation or a paylink until an outcome. */
const IN_FLIGHT = "('pre_approved', 'awaiting_approval', 'approved', 'pending')";

export type InFlightTx = Pick<TxRow, 'transaction_id' | 'wallet_id' | 'status' | 'signed_tx'>;

/**
 * The in-flight transaction that carries the creation of `toAddress`'s token account (and its
 * setup fee), other than `exceptTxId`. At most one exists: an intent takes the fee only when this
 * finds none, inside its write transaction, and nothing adds a setup fee afterwards.
 */
export function setupFeeHolder(db: Database, toAddress: string, exceptTxId = ''): InFlightTx | null {
  return db
    .query<InFlightTx, [string, string]>(
      `SELECT transaction_id, wallet_id, status, signed_tx FROM transactions
       WHERE to_address = ? AND transaction_id != ? AND setup_fee > 0 AND direction = 'out' AND status IN ${IN_FLIGHT} LIMIT 1`,
    )
    .get(toAddress, exceptTxId);
}

/**
 * Another outgoing payment to `toAddress` whose message creates its token account: one that carries
 * a setup fee and is signed (pending), or landed at or after `since`.
 */
export function setupFeeCreator(db: Database, toAddress: string, exceptTxId: string, since: number): InFlightTx | null {
  return db
    .query<InFlightTx, [string, string, number]>(
      `SELECT transaction_id, wallet_id, status, signed_tx FROM transactions
       WHERE to_address = ? AND transaction_id != ? AND setup_fee > 0 AND direction = 'out'
         AND (status = 'pending' OR (status = 'completed' AND completed_at >= ?)) LIMIT 1`,
    )
    .get(toAddress, exceptTxId, since);
}

/** Drops the message of an unsigned transaction, so that its next confirm builds a new one. */
export function dropUnsignedMessage(db: Database, transactionId: string, now: number): void {
  db.query('UPDATE transactions SET message = NULL, last_valid_block_height = NULL, updated_at = ? WHERE transaction_id = ? AND signed_tx IS NULL').run(now, transactionId);
}

/** Drops the setup fee of an unsigned transaction (its recipient's account exists): the reservation is released. */
export function releaseSetupFee(db: Database, transactionId: string, now: number): boolean {
  return db.query('UPDATE transactions SET setup_fee = 0, updated_at = ? WHERE transaction_id = ? AND setup_fee > 0 AND signed_tx IS NULL').run(now, transactionId).changes === 1;
}

/**
 * The outgoing payment that holds paylink `requestId` against `payerWalletId`: one signed and being
 * sent (status pending), or the payer's own still in flight (it does not pay a paylink twice).
 * Another payer's unsigned intent holds nothing: it costs nothing to make.
 */
export function paylinkHolder(db: Database, requestId: string, payerWalletId: string, exceptTxId = ''): InFlightTx | null {
  return db
    .query<InFlightTx, [string, string, string]>(
      `SELECT transaction_id, wallet_id, status, signed_tx FROM transactions
       WHERE payment_request_id = ?1 AND direction = 'out' AND transaction_id != ?3 AND status IN ${IN_FLIGHT} AND (status = 'pending' OR wallet_id = ?2)
       ORDER BY status = 'pending' DESC LIMIT 1`,
    )
    .get(requestId, payerWalletId, exceptTxId);
}

/** Payments of paylink `requestId` not signed yet (pre_approved, approved, awaiting_approval): they lose once it is paid. */
export function unsignedPaylinkPayments(db: Database, requestId: string): Pick<TxRow, 'transaction_id' | 'wallet_id' | 'approval_id'>[] {
  return db
    .query<Pick<TxRow, 'transaction_id' | 'wallet_id' | 'approval_id'>, [string]>(
      "SELECT transaction_id, wallet_id, approval_id FROM transactions WHERE payment_request_id = ? AND direction = 'out' AND status IN ('pre_approved', 'approved', 'awaiting_approval')",
    )
    .all(requestId);
}

/** A page of `walletId`'s transactions in [fromMs, toMs), oldest first, after the keyset cursor (the export streams them). */
export function walletTxExportPage(
  db: Database,
  walletId: string,
  after: { createdAt: bigint; rowid: bigint } | null,
  range: { fromMs: number; toMs: number },
  limit: number,
): (TxRow & { rowid: bigint })[] {
  const cursor = after ?? { createdAt: -1n, rowid: -1n };
  return db
    .query<TxRow & { rowid: bigint }, [string, number, number, bigint, bigint, number]>(
      `SELECT rowid, * FROM transactions
       WHERE wallet_id = ?1 AND created_at >= ?2 AND created_at < ?3 AND (created_at > ?4 OR (created_at = ?4 AND rowid > ?5))
       ORDER BY created_at, rowid LIMIT ?6`,
    )
    .all(walletId, range.fromMs, range.toMs, cursor.createdAt, cursor.rowid, limit);
}
