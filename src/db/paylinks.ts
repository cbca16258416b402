/**
 * Payment requests (paylinks, DESIGN §8): the rows, their rejected payments and invitations.
 * State changes are guarded by the status they move from, so two writers (the paylink job and a
 * completing agent payment) can never both mark one paylink paid.
 */
import type { Store } from './store.ts';

export type PaylinkStatus = 'open' | 'paid' | 'cancelled' | 'expired';

/** Who a paylink pays: one of our wallets or a merchant (its payout address). */
export type PayeeKey = { kind: 'wallet' | 'merchant'; id: string };

const PAYEE_COLUMN = { wallet: 'wallet_id', merchant: 'merchant_id' } as const;

/** Break ties of created_at: SQLite's rowid is insertion order; PostgreSQL has no rowid, so ties order by the primary key there. */
const TIE = { sqlite: 'rowid', postgres: 'request_id' } as const;
const REJECTION_TIE = { sqlite: 'rowid', postgres: 'signature' } as const;

export interface PaylinkRow {
  request_id: string;
  short_code: string;
  wallet_id: string | null;
  merchant_id: string | null;
  description: string;
  amount: bigint | null;
  items: string | null;
  reference: string | null;
  reference_key: string;
  reveal_owner: bigint;
  status: PaylinkStatus;
  paid_amount: bigint | null;
  payer: string | null;
  paid_via: 'wallet' | 'solana_pay' | null;
  signature: string | null;
  transaction_id: string | null;
  scan_cursor: string | null;
  next_scan_at: bigint;
  created_at: bigint;
  updated_at: bigint;
  expires_at: bigint;
  paid_at: bigint | null;
}

/** The payee of a row (the table's CHECK makes exactly one of the two columns set). */
export function payeeKeyOf(row: Pick<PaylinkRow, 'wallet_id' | 'merchant_id'>): PayeeKey {
  return row.wallet_id !== null ? { kind: 'wallet', id: row.wallet_id } : { kind: 'merchant', id: row.merchant_id! };
}

export interface NewPaylink {
  request_id: string;
  short_code: string;
  payee: PayeeKey;
  description: string;
  amount: bigint | null;
  items: string | null;
  reference: string | null;
  reference_key: string;
  reveal_owner: boolean;
  expires_at: number;
  now: number;
}

/** Inserts an open paylink; false when the short code is taken (the caller draws another). */
export async function insertPaylink(db: Store, p: NewPaylink): Promise<boolean> {
  const res = await db
    .run(`INSERT OR IGNORE INTO payment_requests (request_id, short_code, wallet_id, merchant_id, description, amount, items, reference, reference_key, reveal_owner,
         status, next_scan_at, created_at, updated_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?)`, p.request_id, p.short_code, p.payee.kind === 'wallet' ? p.payee.id : null, p.payee.kind === 'merchant' ? p.payee.id : null, p.description, p.amount, p.items, p.reference, p.reference_key, p.reveal_owner ? 1 : 0, p.now, p.now, p.now, p.expires_at);
  return res.changes === 1;
}

export async function getPaylink(db: Store, requestId: string): Promise<PaylinkRow | null> {
  return await db.get<PaylinkRow>('SELECT * FROM payment_requests WHERE request_id = ?', requestId);
}

/** A paylink of `payee` only: another payee's id is as unknown as a made-up one. */
export async function getPayeePaylink(db: Store, payee: PayeeKey, requestId: string): Promise<PaylinkRow | null> {
  return await db.get<PaylinkRow>(`SELECT * FROM payment_requests WHERE request_id = ? AND ${PAYEE_COLUMN[payee.kind]} = ?`, requestId, payee.id);
}

/** The newest paylink of `payee` with this reference. */
export async function getPaylinkByReference(db: Store, payee: PayeeKey, reference: string): Promise<PaylinkRow | null> {
  return await db
    .get<PaylinkRow>(`SELECT * FROM payment_requests WHERE ${PAYEE_COLUMN[payee.kind]} = ? AND reference = ? ORDER BY created_at DESC, ${TIE[db.dialect]} DESC LIMIT 1`, payee.id, reference);
}

/**
 * A merchant's paylink that holds this reference at `now`: paid, or open and not yet past its
 * expiry (the expiry job may not have moved it yet). Null when none does.
 */
export async function merchantPaylinkHoldingReference(db: Store, merchantId: string, reference: string, now: number): Promise<PaylinkRow | null> {
  return await db
    .get<PaylinkRow>(`SELECT * FROM payment_requests WHERE merchant_id = ? AND reference = ? AND (status = 'paid' OR (status = 'open' AND expires_at > ?))
       ORDER BY status = 'paid' DESC, created_at LIMIT 1`, merchantId, reference, now);
}

export async function getPaylinkByShortCode(db: Store, shortCode: string): Promise<PaylinkRow | null> {
  return await db.get<PaylinkRow>('SELECT * FROM payment_requests WHERE short_code = ?', shortCode);
}

/** A page of a payee's paylinks, newest first, and the total matching. */
export async function listPaylinks(db: Store, payee: PayeeKey, status: PaylinkStatus | undefined, limit: number, offset: number): Promise<{ items: PaylinkRow[]; total: number }> {
  const column = PAYEE_COLUMN[payee.kind];
  const where = status ? `${column} = ? AND status = ?` : `${column} = ?`;
  const args = status ? [payee.id, status] : [payee.id];
  const total = Number((await db.get<{ n: bigint }>(`SELECT count(*) AS n FROM payment_requests WHERE ${where}`, ...args))?.n ?? 0n);
  const items = await db
    .all<PaylinkRow>(`SELECT * FROM payment_requests WHERE ${where} ORDER BY created_at DESC, ${TIE[db.dialect]} DESC LIMIT ? OFFSET ?`, ...args, limit, offset);
  return { items, total };
}

/** A paylink row with the name and username of its wallet (owner views). */
export type OwnerPaylinkRow = PaylinkRow & { wallet_name: string; wallet_username: string };

/**
 * Paylinks of the wallets `ownerId` has claimed (optionally one wallet), newest first, as
 * ownerFundRequests pages fund requests. The status filter is the one payers see (effectiveStatus):
 * an open paylink past its expiry is `expired` before the paylink-expiry job moves it.
 */
export async function ownerPaylinks(
  db: Store,
  ownerId: string,
  filter: { walletId?: string; status?: PaylinkStatus },
  nowMs: number,
  limit: number,
  offset: number,
): Promise<{ items: OwnerPaylinkRow[]; total: number }> {
  const where = ["w.owner_id = ? AND w.status = 'claimed'"];
  const args: (string | number)[] = [ownerId];
  if (filter.walletId) {
    where.push('p.wallet_id = ?');
    args.push(filter.walletId);
  }
  if (filter.status === 'open') {
    where.push("p.status = 'open' AND p.expires_at > ?");
    args.push(nowMs);
  } else if (filter.status === 'expired') {
    where.push("(p.status = 'expired' OR (p.status = 'open' AND p.expires_at <= ?))");
    args.push(nowMs);
  } else if (filter.status) {
    where.push('p.status = ?');
    args.push(filter.status);
  }
  const from = `FROM payment_requests p JOIN wallets w ON w.wallet_id = p.wallet_id WHERE ${where.join(' AND ')}`;
  const total = Number((await db.get<{ n: bigint }>(`SELECT count(*) AS n ${from}`, ...args))?.n ?? 0n);
  const items = await db
    .all<OwnerPaylinkRow>(`SELECT p.*, w.name AS wallet_name, w.username AS wallet_username ${from} ORDER BY p.created_at DESC, p.${TIE[db.dialect]} DESC LIMIT ? OFFSET ?`, ...args, limit, offset);
  return { items, total };
}

/** open → cancelled; false when it was not open. */
export async function cancelPaylink(db: Store, requestId: string, now: number): Promise<boolean> {
  return (await db.run("UPDATE payment_requests SET status = 'cancelled', updated_at = ? WHERE request_id = ? AND status = 'open'", now, requestId)).changes === 1;
}

/** Open paylinks whose expiry passed. */
export async function expiredPaylinks(db: Store, now: number, limit = 500): Promise<PaylinkRow[]> {
  return await db.all<PaylinkRow>("SELECT * FROM payment_requests WHERE status = 'open' AND expires_at <= ? ORDER BY expires_at LIMIT ?", now, limit);
}

/** open → expired; false when it was not open. */
export async function expirePaylink(db: Store, requestId: string, now: number): Promise<boolean> {
  return (await db.run("UPDATE payment_requests SET status = 'expired', updated_at = ? WHERE request_id = ? AND status = 'open'", now, requestId)).changes === 1;
}

/**
 * Marks a paylink paid, once: only from `from` (open, or expired for a payment that landed in time).
 * False when another writer got there first or the paylink is in another state.
 */
export async function markPaylinkPaid(
  db: Store,
  requestId: string,
  from: readonly PaylinkStatus[],
  paid: { amount: bigint; payer: string | null; via: 'wallet' | 'solana_pay'; signature: string | null; transactionId: string | null; now: number },
): Promise<boolean> {
  const placeholders = from.map(() => '?').join(', ');
  return (
    (await db
      .run(`UPDATE payment_requests SET status = 'paid', paid_amount = ?, payer = ?, paid_via = ?, signature = ?, transaction_id = ?, paid_at = ?, updated_at = ?
         WHERE request_id = ? AND status IN (${placeholders})`, paid.amount, paid.payer, paid.via, paid.signature, paid.transactionId, paid.now, paid.now, requestId, ...from)).changes === 1
  );
}

/** Records how far a scan of the paylink's reference key got. */
export async function setScanCursor(db: Store, requestId: string, cursor: string): Promise<void> {
  await db.run('UPDATE payment_requests SET scan_cursor = ? WHERE request_id = ?', cursor, requestId);
}

/**
 * The paylink, if any, whose reference key is one of `keys` and whose payee receives at
 * `payeeAddress` (a wallet's address or a merchant's payout address), while it is still watched
 * (open, or closed at or after `closedSince`).
 */
export async function watchedPaylinkFor(db: Store, payeeAddress: string, keys: readonly string[], closedSince: number): Promise<string | null> {
  if (keys.length === 0) return null;
  const placeholders = keys.map(() => '?').join(', ');
  const row = await db
    .get<{ request_id: string }>(`SELECT p.request_id FROM payment_requests p
         LEFT JOIN wallets w ON w.wallet_id = p.wallet_id
         LEFT JOIN merchants m ON m.merchant_id = p.merchant_id
       WHERE p.reference_key IN (${placeholders}) AND coalesce(w.address, m.payout_address) = ? AND (p.status = 'open' OR p.updated_at >= ?)
       LIMIT 1`, ...keys, payeeAddress, closedSince);
  return row?.request_id ?? null;
}

/** The Solana Pay reference keys a payment for this paylink must carry (none without a paylink). */
export async function referenceKeysOf(db: Store, paymentRequestId: string | null): Promise<string[]> {
  if (paymentRequestId === null) return [];
  const row = await db.get<{ reference_key: string }>('SELECT reference_key FROM payment_requests WHERE request_id = ?', paymentRequestId);
  return row ? [row.reference_key] : [];
}

export type RejectionReason = 'underpaid' | 'wrong_mint' | 'not_to_payee' | 'expired' | 'cancelled' | 'already_paid';

export interface RejectionRow {
  request_id: string;
  signature: string;
  reason: RejectionReason;
  amount: bigint | null;
  mint: string | null;
  payer: string | null;
  created_at: bigint;
}

/** Records a payment that did not pay the paylink; false when it was recorded before. */
export async function insertRejection(db: Store, r: { request_id: string; signature: string; reason: RejectionReason; amount: bigint | null; mint: string | null; payer: string | null; now: number }): Promise<boolean> {
  return (
    (await db
      .run('INSERT OR IGNORE INTO payment_request_rejections (request_id, signature, reason, amount, mint, payer, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', r.request_id, r.signature, r.reason, r.amount, r.mint, r.payer, r.now)).changes === 1
  );
}

export async function hasRejection(db: Store, requestId: string, signature: string): Promise<boolean> {
  return (await db.get('SELECT 1 FROM payment_request_rejections WHERE request_id = ? AND signature = ?', requestId, signature)) !== null;
}

export async function listRejections(db: Store, requestId: string): Promise<RejectionRow[]> {
  return await db.all<RejectionRow>(`SELECT * FROM payment_request_rejections WHERE request_id = ? ORDER BY created_at, ${REJECTION_TIE[db.dialect]}`, requestId);
}

export async function insertInvitation(db: Store, i: { request_id: string; channel: 'email' | 'wallet'; recipient: string; now: number }): Promise<void> {
  await db.run('INSERT INTO paylink_invitations (request_id, channel, recipient, created_at) VALUES (?, ?, ?, ?)', i.request_id, i.channel, i.recipient, i.now);
}

/** Invitations of a paylink since `since`, and the oldest of them (for Retry-After). */
export async function invitationsSince(db: Store, requestId: string, since: number): Promise<{ count: number; oldest: number | null }> {
  const row = await db
    .get<{ n: bigint; oldest: bigint | null }>('SELECT count(*) AS n, min(created_at) AS oldest FROM paylink_invitations WHERE request_id = ? AND created_at >= ?', requestId, since);
  return { count: Number(row?.n ?? 0n), oldest: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest) };
}

/** The payee wallet's incoming ledger row for `signature`, if one exists. */
export async function incomingTxId(db: Store, walletId: string, signature: string): Promise<string | null> {
  return (await db.get<{ transaction_id: string }>("SELECT transaction_id FROM transactions WHERE wallet_id = ? AND signature = ? AND direction = 'in'", walletId, signature))?.transaction_id ?? null;
}

/** Invitations sent for all paylinks of `payee` since `since`, and the oldest of them. */
export async function payeeInvitationsSince(db: Store, payee: PayeeKey, since: number): Promise<{ count: number; oldest: number | null }> {
  const row = await db
    .get<{ n: bigint; oldest: bigint | null }>(`SELECT count(*) AS n, min(i.created_at) AS oldest FROM paylink_invitations i JOIN payment_requests p ON p.request_id = i.request_id WHERE p.${PAYEE_COLUMN[payee.kind]} = ? AND i.created_at >= ?`, payee.id, since);
  return { count: Number(row?.n ?? 0n), oldest: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest) };
}
