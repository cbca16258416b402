/** Fund requests (DESIGN §8): an agent asks its owner for money; open → fulfilled | declined. */
import type { Store } from './store.ts';

/** Breaks ties of created_at: SQLite's rowid is insertion order; PostgreSQL has no rowid, so ties order by the primary key there. */
const TIE = { sqlite: 'rowid', postgres: 'fund_request_id' } as const;

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
  /** The owner's reason for declining it, if they gave one. */
  decline_reason: string | null;
}

export async function insertFundRequest(db: Store, f: { fund_request_id: string; wallet_id: string; amount: bigint; reason: string; after_signature: string | null; after_slot: bigint | null; armed: boolean; now: number }): Promise<void> {
  await db.run("INSERT INTO fund_requests (fund_request_id, wallet_id, amount, reason, status, after_signature, after_slot, armed, created_at, updated_at) VALUES (?, ?, ?, ?, 'open', ?, ?, ?, ?, ?)", f.fund_request_id,
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

export async function getFundRequest(db: Store, id: string): Promise<FundRequestRow | null> {
  return await db.get<FundRequestRow>('SELECT * FROM fund_requests WHERE fund_request_id = ?', id);
}

/** A page of fund requests of the given wallets, newest first, and the total matching. */
export async function listFundRequests(db: Store, walletIds: readonly string[], status: FundRequestStatus | undefined, limit: number, offset: number): Promise<{ items: FundRequestRow[]; total: number }> {
  if (walletIds.length === 0) return { items: [], total: 0 };
  const where = [`wallet_id IN (${walletIds.map(() => '?').join(', ')})`];
  const args: (string | number)[] = [...walletIds];
  if (status) {
    where.push('status = ?');
    args.push(status);
  }
  const clause = where.join(' AND ');
  const total = Number((await db.get<{ n: bigint }>(`SELECT count(*) AS n FROM fund_requests WHERE ${clause}`, ...args))?.n ?? 0n);
  const items = await db.all<FundRequestRow>(`SELECT * FROM fund_requests WHERE ${clause} ORDER BY created_at DESC, ${TIE[db.dialect]} DESC LIMIT ? OFFSET ?`, ...args, limit, offset);
  return { items, total };
}

/** A fund request row with the name and username of its wallet (owner views). */
export type OwnerFundRequestRow = FundRequestRow & { wallet_name: string; wallet_username: string };

/** Fund requests of the wallets `ownerId` has claimed (optionally one wallet), newest first. */
export async function ownerFundRequests(
  db: Store,
  ownerId: string,
  filter: { walletId?: string; status?: FundRequestStatus },
  limit: number,
  offset: number,
): Promise<{ items: OwnerFundRequestRow[]; total: number }> {
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
  const total = Number((await db.get<{ n: bigint }>(`SELECT count(*) AS n ${from}`, ...args))?.n ?? 0n);
  const items = await db
    .all<OwnerFundRequestRow>(`SELECT f.*, w.name AS wallet_name, w.username AS wallet_username ${from} ORDER BY f.created_at DESC, f.${TIE[db.dialect]} DESC LIMIT ? OFFSET ?`, ...args, limit, offset);
  return { items, total };
}

/** One fund request of a wallet `ownerId` has claimed; null for anyone else's. */
export async function ownerFundRequest(db: Store, ownerId: string, id: string): Promise<FundRequestRow | null> {
  return await db
    .get<FundRequestRow>("SELECT f.* FROM fund_requests f JOIN wallets w ON w.wallet_id = f.wallet_id WHERE f.fund_request_id = ? AND w.owner_id = ? AND w.status = 'claimed'", id, ownerId);
}

/** Open requests of a wallet a deposit recorded now may fulfil (armed), oldest first (the order a deposit fulfils them in). */
export async function armedFundRequests(db: Store, walletId: string): Promise<FundRequestRow[]> {
  return await db.all<FundRequestRow>(`SELECT * FROM fund_requests WHERE wallet_id = ? AND status = 'open' AND armed = 1 ORDER BY created_at, ${TIE[db.dialect]}`, walletId);
}

/** The deposit watch handled `signature` of the wallet's account: the open requests made when it was the newest are armed. */
export async function armFundRequests(db: Store, walletId: string, signature: string, now: number): Promise<void> {
  await db.run("UPDATE fund_requests SET armed = 1, updated_at = ? WHERE wallet_id = ? AND status = 'open' AND armed = 0 AND after_signature = ?", now, walletId, signature);
}

/**
 * The deposit watch reached a transaction of `slot`: the open requests whose newest transaction is
 * of an earlier slot were asked before it, and are armed (the watch may have passed that newest one
 * before the request was stored, or the node that answered the request lagged behind the watch's).
 */
export async function armFundRequestsBefore(db: Store, walletId: string, slot: bigint, now: number): Promise<void> {
  await db.run("UPDATE fund_requests SET armed = 1, updated_at = ? WHERE wallet_id = ? AND status = 'open' AND armed = 0 AND after_slot < ?", now, walletId, slot);
}

/** open → fulfilled | declined, once; false when it was no longer open. */
export async function resolveFundRequest(db: Store, id: string, to: 'fulfilled' | 'declined', by: string, transactionId: string | null, now: number, declineReason: string | null = null): Promise<boolean> {
  return (
    (await db
      .run("UPDATE fund_requests SET status = ?, resolved_by = ?, transaction_id = ?, resolved_at = ?, updated_at = ?, decline_reason = ? WHERE fund_request_id = ? AND status = 'open'", to, by, transactionId, now, now, declineReason, id)).changes === 1
  );
}
