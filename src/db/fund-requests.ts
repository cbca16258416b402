/** Fund requests (DESIGN §8): an agent asks its owner for money; open → fulfilled | declined. */
import type { Database } from 'bun:sqlite';

export type FundRequestStatus = 'open' | 'fulfilled' | 'declined';

export interface FundRequestRow {
  fund_request_id: string;
  wallet_id: string;
  amount: bigint;
  reason: string;
  status: FundRequestStatus;
  resolved_by: string | null;
  transaction_id: string | null;
  created_at: bigint;
  updated_at: bigint;
  resolved_at: bigint | null;
  /** The newest transaction of the wallet's USDC account when the request was made; null: none. */
  after_signature: string | null;
  /** Its slot. */
  after_slot: bigint | null;
  /** 1 once the deposit watch handled `after_signature` or a later slot's transaction: a deposit it records from then on landed after the request. */
  armed: bigint;
}

export function insertFundRequest(db: Database, f: { fund_request_id: string; wallet_id: string; amount: bigint; reason: string; after_signature: string | null; after_slot: bigint | null; armed: boolean; now: number }): void {
  db.query("INSERT INTO fund_requests (fund_request_id, wallet_id, amount, reason, status, after_signature, after_slot, armed, created_at, updated_at) VALUES (?, ?, ?, ?, 'open', ?, ?, ?, ?, ?)").run(
    f.fund_request_id,
    f.wallet_id,
    f.amount,
    f.reason,
    f.after_signature,
    f.after_slot,
    f.armed ? 1 : 0,
    f.now,
    f.now,
  );
}

export function getFundRequest(db: Database, id: string): FundRequestRow | null {
  return db.query<FundRequestRow, [string]>('SELECT * FROM fund_requests WHERE fund_request_id = ?').get(id);
}

/** A page of fund requests of the given wallets, newest first, and the total matching. */
export function listFundRequests(db: Database, walletIds: readonly string[], status: FundRequestStatus | undefined, limit: number, offset: number): { items: FundRequestRow[]; total: number } {
  if (walletIds.length === 0) return { items: [], total: 0 };
  const where = [`wallet_id IN (${walletIds.map(() => '?').join(', ')})`];
  const args: (string | number)[] = [...walletIds];
  if (status) {
    where.push('status = ?');
    args.push(status);
  }
  const clause = where.join(' AND ');
  const total = Number(db.query<{ n: bigint }, (string | number)[]>(`SELECT count(*) AS n FROM fund_requests WHERE ${clause}`).get(...args)?.n ?? 0n);
  const items = db.query<FundRequestRow, (string | number)[]>(`SELECT * FROM fund_requests WHERE ${clause} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`).all(...args, limit, offset);
  return { items, total };
}

/** A fund request row with the name and username of its wallet (owner views). */
export type OwnerFundRequestRow = FundRequestRow & { wallet_name: string; wallet_username: string };

/** Fund requests of the wallets `ownerId` has claimed (optionally one wallet), newest first. */
export function ownerFundRequests(
  db: Database,
  ownerId: string,
  filter: { walletId?: string; status?: FundRequestStatus },
  limit: number,
  offset: number,
): { items: OwnerFundRequestRow[]; total: number } {
  const where = ["w.owner_id = ? AND w.status = 'claimed'"];
  const args: (string | number)[] = [ownerId];
  if (filter.walletId) {
    where.push('f.wallet_id = ?');
    args.push(filter.walletId);
  }
  if (filter.status) {
    where.push('f.status = ?');
    args.push(filter.status);
  }
  const from = `FROM fund_requests f JOIN wallets w ON w.wallet_id = f.wallet_id WHERE ${where.join(' AND ')}`;
  const total = Number(db.query<{ n: bigint }, (string | number)[]>(`SELECT count(*) AS n ${from}`).get(...args)?.n ?? 0n);
  const items = db
    .query<OwnerFundRequestRow, (string | number)[]>(`SELECT f.*, w.name AS wallet_name, w.username AS wallet_username ${from} ORDER BY f.created_at DESC, f.rowid DESC LIMIT ? OFFSET ?`)
    .all(...args, limit, offset);
  return { items, total };
}

/** One fund request of a wallet `ownerId` has claimed; null for anyone else's. */
export function ownerFundRequest(db: Database, ownerId: string, id: string): FundRequestRow | null {
  return db
    .query<FundRequestRow, [string, string]>("SELECT f.* FROM fund_requests f JOIN wallets w ON w.wallet_id = f.wallet_id WHERE f.fund_request_id = ? AND w.owner_id = ? AND w.status = 'claimed'")
    .get(id, ownerId);
}

/** Open requests of a wallet a deposit recorded now may fulfil (armed), oldest first (the order a deposit fulfils them in). */
export function armedFundRequests(db: Database, walletId: string): FundRequestRow[] {
  return db.query<FundRequestRow, [string]>("SELECT * FROM fund_requests WHERE wallet_id = ? AND status = 'open' AND armed = 1 ORDER BY created_at, rowid").all(walletId);
}

/** The deposit watch handled `signature` of the wallet's account: the open requests made when it was the newest are armed. */
export function armFundRequests(db: Database, walletId: string, signature: string, now: number): void {
  db.query("UPDATE fund_requests SET armed = 1, updated_at = ? WHERE wallet_id = ? AND status = 'open' AND armed = 0 AND after_signature = ?").run(now, walletId, signature);
}

/**
 * The deposit watch reached a transaction of `slot`: the open requests whose newest transaction is
 * of an earlier slot were asked before it, and are armed (the watch may have passed that newest one
 * before the request was stored, or the node that answered the request lagged behind the watch's).
 */
export function armFundRequestsBefore(db: Database, walletId: string, slot: bigint, now: number): void {
  db.query("UPDATE fund_requests SET armed = 1, updated_at = ? WHERE wallet_id = ? AND status = 'open' AND armed = 0 AND after_slot < ?").run(now, walletId, slot);
}

/** open → fulfilled | declined, once; false when it was no longer open. */
export function resolveFundRequest(db: Database, id: string, to: 'fulfilled' | 'declined', by: string, transactionId: string | null, now: number): boolean {
  return (
    db
      .query("UPDATE fund_requests SET status = ?, resolved_by = ?, transaction_id = ?, resolved_at = ?, updated_at = ? WHERE fund_request_id = ? AND status = 'open'")
      .run(to, by, transactionId, now, now, id).changes === 1
  );
}
