/** The transactions ledger: intents, their signing artefacts and their outcomes. */
import type { Store } from './store.ts';

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

export async function insertTx(db: Store, t: NewTx): Promise<void> {
  await db.run(`INSERT INTO transactions (transaction_id, wallet_id, type, direction, category, status, amount, fee, setup_fee, counterparty, to_wallet_id,
       to_merchant_id, to_address, note, reference, payment_request_id, decision_rule, decision_reason, approval_id, idempotency_key, signature,
       created_at, updated_at, expires_at, completed_at)
     VALUES ($transaction_id, $wallet_id, $type, $direction, $category, $status, $amount, $fee, $setup_fee, $counterparty, $to_wallet_id,
       $to_merchant_id, $to_address, $note, $reference, $payment_request_id, $decision_rule, $decision_reason, $approval_id, $idempotency_key, $signature,
       $now, $now, $expires_at, $completed_at)`, {
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

export async function getTx(db: Store, transactionId: string): Promise<TxRow | null> {
  return await db.get<TxRow>('SELECT * FROM transactions WHERE transaction_id = ?', transactionId);
}

/** A transaction of `walletId` only: another wallet's id is as unknown as a made-up one. */
export async function getWalletTx(db: Store, walletId: string, transactionId: string): Promise<TxRow | null> {
  return await db.get<TxRow>('SELECT * FROM transactions WHERE transaction_id = ? AND wallet_id = ?', transactionId, walletId);
}

export async function getTxByIdempotencyKey(db: Store, walletId: string, type: TxType, key: string): Promise<TxRow | null> {
  return await db.get<TxRow>('SELECT * FROM transactions WHERE wallet_id = ? AND type = ? AND idempotency_key = ?', walletId, type, key);
}

/** Moves a transaction from one of `from` to `to`; false when it was not in `from` (someone else moved it). */
export async function moveTx(db: Store, transactionId: string, from: readonly TxStatus[], to: TxStatus, now: number, extra: { error?: string | null; completed_at?: number } = {}): Promise<boolean> {
  const placeholders = from.map(() => '?').join(', ');
  return (
    (await db
      .run(`UPDATE transactions SET status = ?, updated_at = ?, error = coalesce(?, error), completed_at = coalesce(?, completed_at) WHERE transaction_id = ? AND status IN (${placeholders})`, to, now, extra.error ?? null, extra.completed_at ?? null, transactionId, ...from)).changes === 1
  );
}

/** Stores the message built for signing (replacing an unsigned expired one) and, when given, its compute-unit price. */
export async function setTxMessage(db: Store, transactionId: string, message: Uint8Array, lastValidBlockHeight: bigint, now: number, priorityFee: bigint | null = null): Promise<void> {
  await db.run('UPDATE transactions SET message = ?, last_valid_block_height = ?, priority_fee = COALESCE(?, priority_fee), updated_at = ? WHERE transaction_id = ? AND signed_tx IS NULL', message, lastValidBlockHeight, priorityFee, now, transactionId);
}

/** The amount of a transaction not signed yet, for a message built again over a changed balance (a sweep's). */
export async function setUnsignedTxAmount(db: Store, transactionId: string, amount: bigint, now: number): Promise<void> {
  await db.run('UPDATE transactions SET amount = ?, updated_at = ? WHERE transaction_id = ? AND signed_tx IS NULL', amount, now, transactionId);
}

/** Records the signed bytes and moves the transaction to pending, before the first broadcast. */
export async function setTxSigned(db: Store, transactionId: string, signedTx: Uint8Array, signature: string | null, now: number): Promise<boolean> {
  return (
    (await db
      .run("UPDATE transactions SET signed_tx = ?, signature = ?, status = 'pending', updated_at = ? WHERE transaction_id = ? AND signed_tx IS NULL AND status IN ('pre_approved', 'approved')", signedTx, signature, now, transactionId)).changes === 1
  );
}

/**
 * After the blockhash of a signed message expired without it landing: back to confirmable so a
 * new message can be built and signed. Only from pending with the given signature.
 */
export async function resetExpiredSigning(db: Store, transactionId: string, signature: string, backTo: TxStatus, now: number): Promise<boolean> {
  return (
    (await db
      .run("UPDATE transactions SET status = ?, message = NULL, signed_tx = NULL, signature = NULL, last_valid_block_height = NULL, error = 'the signed transaction expired before it landed; confirm again', updated_at = ? WHERE transaction_id = ? AND status = 'pending' AND signature = ?", backTo, now, transactionId, signature)).changes === 1
  );
}

export async function pendingTxs(db: Store, limit = 200): Promise<TxRow[]> {
  return await db.all<TxRow>("SELECT * FROM transactions WHERE status = 'pending' AND signed_tx IS NOT NULL ORDER BY updated_at LIMIT ?", limit);
}

/** The ids and signatures of the pending signed transactions, oldest first: all a look at their outcomes reads before one lands. */
export async function pendingSignatures(db: Store, limit: number): Promise<{ transaction_id: string; signature: string }[]> {
  return await db
    .all<{ transaction_id: string; signature: string }>("SELECT transaction_id, signature FROM transactions WHERE status = 'pending' AND signed_tx IS NOT NULL AND signature IS NOT NULL ORDER BY updated_at LIMIT ?", limit);
}

export async function expiredIntents(db: Store, now: number, limit = 500): Promise<TxRow[]> {
  return await db
    .all<TxRow>("SELECT * FROM transactions WHERE status IN ('pre_approved', 'approved', 'awaiting_approval') AND expires_at <= ? ORDER BY expires_at LIMIT ?", now, limit);
}

/** Money of a wallet set aside by outgoing transactions that have not settled or been released. */
export async function outstandingOut(db: Store, walletId: string): Promise<bigint> {
  // Kept by triggers (schema.sql, wallet_spend): the sum over the wallet's outgoing rows that are
  // pre_approved, awaiting_approval, approved or pending.
  return (await db.get<{ outstanding: bigint }>('SELECT outstanding FROM wallet_spend WHERE wallet_id = ?', walletId))?.outstanding ?? 0n;
}

/**
 * A wallet's outstanding money and the running total of its outgoing money recorded as settled
 * (schema 19): a balance read when the total was S is worth, now, that balance less what is
 * outstanding less (total − S).
 */
export async function walletOutflow(db: Store, walletId: string): Promise<{ outstanding: bigint; settledOut: bigint }> {
  const row = await db.get<{ outstanding: bigint; settled_out: bigint }>('SELECT outstanding, settled_out FROM wallet_spend WHERE wallet_id = ?', walletId);
  return { outstanding: row?.outstanding ?? 0n, settledOut: row?.settled_out ?? 0n };
}

/** True when `signature` is one of our own signed outgoing transactions (its recipient row is written at completion). */
export async function isOwnOutgoing(db: Store, signature: string): Promise<boolean> {
  return (await db.get("SELECT 1 FROM transactions WHERE signature = ? AND direction = 'out'", signature)) !== null;
}

export async function hasSignature(db: Store, walletId: string, signature: string): Promise<boolean> {
  return (await db.get('SELECT 1 FROM transactions WHERE wallet_id = ? AND signature = ?', walletId, signature)) !== null;
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

/** Breaks ties of created_at: SQLite's rowid is insertion order; PostgreSQL has no rowid, so ties order by the primary key there. */
const TIE = { sqlite: 'rowid', postgres: 'transaction_id' } as const;

/** A page of a wallet's transactions, newest first, and the total matching. */
export async function listTxs(db: Store, f: TxFilter): Promise<{ items: TxRow[]; total: number }> {
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
  const total = Number(((await db.get(`SELECT count(*) AS n FROM transactions WHERE ${clause}`, ...args)) as { n: bigint }).n);
  const items = await db.all<TxRow>(`SELECT * FROM transactions WHERE ${clause} ORDER BY created_at DESC, ${TIE[db.dialect]} DESC LIMIT ? OFFSET ?`, ...args, f.limit, f.offset);
  return { items, total };
}

/** Links a transaction to the approval a tightened rail opened for it. */
export async function setTxApprovalId(db: Store, transactionId: string, approvalId: string): Promise<void> {
  await db.run('UPDATE transactions SET approval_id = ? WHERE transaction_id = ?', approvalId, transactionId);
}

/** Outgoing statuses that hold money, a recipient's account creation or a paylink until an outcome. */
const IN_FLIGHT = "('pre_approved', 'awaiting_approval', 'approved', 'pending')";

export type InFlightTx = Pick<TxRow, 'transaction_id' | 'wallet_id' | 'status' | 'signed_tx'>;

/**
 * The in-flight transaction that carries the creation of `toAddress`'s token account (and its
 * setup fee), other than `exceptTxId`. At most one exists: an intent takes the fee only when this
 * finds none, inside its write transaction, and nothing adds a setup fee afterwards.
 */
export async function setupFeeHolder(db: Store, toAddress: string, exceptTxId = ''): Promise<InFlightTx | null> {
  return await db
    .get<InFlightTx>(`SELECT transaction_id, wallet_id, status, signed_tx FROM transactions
       WHERE to_address = ? AND transaction_id != ? AND setup_fee > 0 AND direction = 'out' AND status IN ${IN_FLIGHT} LIMIT 1`, toAddress, exceptTxId);
}

/**
 * Another outgoing payment to `toAddress` whose message creates its token account: one that carries
 * a setup fee and is signed (pending), or landed at or after `since`.
 */
export async function setupFeeCreator(db: Store, toAddress: string, exceptTxId: string, since: number): Promise<InFlightTx | null> {
  return await db
    .get<InFlightTx>(`SELECT transaction_id, wallet_id, status, signed_tx FROM transactions
       WHERE to_address = ? AND transaction_id != ? AND setup_fee > 0 AND direction = 'out'
         AND (status = 'pending' OR (status = 'completed' AND completed_at >= ?)) LIMIT 1`, toAddress, exceptTxId, since);
}

/** Drops the message of an unsigned transaction, so that its next confirm builds a new one. */
export async function dropUnsignedMessage(db: Store, transactionId: string, now: number): Promise<void> {
  await db.run('UPDATE transactions SET message = NULL, last_valid_block_height = NULL, updated_at = ? WHERE transaction_id = ? AND signed_tx IS NULL', now, transactionId);
}

/** Drops the setup fee of an unsigned transaction (its recipient's account exists): the reservation is released. */
export async function releaseSetupFee(db: Store, transactionId: string, now: number): Promise<boolean> {
  return (await db.run('UPDATE transactions SET setup_fee = 0, updated_at = ? WHERE transaction_id = ? AND setup_fee > 0 AND signed_tx IS NULL', now, transactionId)).changes === 1;
}

/**
 * The outgoing payment that holds paylink `requestId` against `payerWalletId`: one signed and being
 * sent (status pending), or the payer's own still in flight (it does not pay a paylink twice).
 * Another payer's unsigned intent holds nothing: it costs nothing to make.
 */
export async function paylinkHolder(db: Store, requestId: string, payerWalletId: string, exceptTxId = ''): Promise<InFlightTx | null> {
  return await db
    .get<InFlightTx>(`SELECT transaction_id, wallet_id, status, signed_tx FROM transactions
       WHERE payment_request_id = ?1 AND direction = 'out' AND transaction_id != ?3 AND status IN ${IN_FLIGHT} AND (status = 'pending' OR wallet_id = ?2)
       ORDER BY status = 'pending' DESC LIMIT 1`, requestId, payerWalletId, exceptTxId);
}

/** Payments of paylink `requestId` not signed yet (pre_approved, approved, awaiting_approval): they lose once it is paid. */
export async function unsignedPaylinkPayments(db: Store, requestId: string): Promise<Pick<TxRow, 'transaction_id' | 'wallet_id' | 'approval_id'>[]> {
  return await db
    .all<Pick<TxRow, 'transaction_id' | 'wallet_id' | 'approval_id'>>("SELECT transaction_id, wallet_id, approval_id FROM transactions WHERE payment_request_id = ? AND direction = 'out' AND status IN ('pre_approved', 'approved', 'awaiting_approval')", requestId);
}

/** Where an export page ended: the last row's (created_at, tie), the tie being TIE of the store's dialect (a bigint rowid, a text id). */
export interface TxExportCursor {
  createdAt: bigint;
  tie: bigint | string;
}

/**
 * A page of `walletId`'s transactions in [fromMs, toMs), oldest first, after the keyset cursor (the
 * export streams them), and the cursor to ask for the next page with (null after an empty page).
 */
export async function walletTxExportPage(
  db: Store,
  walletId: string,
  after: TxExportCursor | null,
  range: { fromMs: number; toMs: number },
  limit: number,
): Promise<{ rows: TxRow[]; next: TxExportCursor | null }> {
  const tie = TIE[db.dialect];
  const cursor = after ?? { createdAt: -1n, tie: db.dialect === 'sqlite' ? -1n : '' };
  const rows = await db.all<TxRow & { export_tie: bigint | string }>(`SELECT ${tie} AS export_tie, * FROM transactions
       WHERE wallet_id = ?1 AND created_at >= ?2 AND created_at < ?3 AND (created_at > ?4 OR (created_at = ?4 AND ${tie} > ?5))
       ORDER BY created_at, ${tie} LIMIT ?6`, walletId, range.fromMs, range.toMs, cursor.createdAt, cursor.tie, limit);
  const last = rows.at(-1);
  return { rows, next: last ? { createdAt: last.created_at, tie: last.export_tie } : null };
}
