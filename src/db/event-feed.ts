/** Reading and acknowledging the event feed of a wallet or a merchant. */
import type { Store } from './store.ts';
import type { EventRow } from './events.ts';

/** Whose feed: a wallet's or a merchant's. */
export type FeedOwner = { kind: 'wallet' | 'merchant'; id: string };

const OWNER_COLUMN = { wallet: 'wallet_id', merchant: 'merchant_id' } as const;

export interface FeedQuery {
  owner: FeedOwner;
  types?: string[];
  unreadOnly: boolean;
  /** Only events after this sequence number. */
  since?: bigint;
  limit: number;
}

/** An event_id of the owner's feed or an ISO time → the sequence to read after; null when neither. */
export async function resolveSince(db: Store, owner: FeedOwner, since: string): Promise<bigint | null> {
  const column = OWNER_COLUMN[owner.kind];
  if (since.startsWith('evt_')) {
    const row = await db.get<{ seq: bigint }>(`SELECT seq FROM events WHERE event_id = ? AND ${column} = ?`, since, owner.id);
    return row ? row.seq : null;
  }
  const ms = Date.parse(since);
  if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}/.test(since)) return null;
  const row = await db.get<{ seq: bigint | null }>(`SELECT max(seq) AS seq FROM events WHERE ${column} = ? AND created_at < ?`, owner.id, ms);
  return row?.seq ?? 0n;
}

function view(e: EventRow) {
  return { event_id: e.event_id, type: e.type, created_at: new Date(Number(e.created_at)).toISOString(), read: e.read === 1n, data: JSON.parse(e.data) };
}

/**
 * With `since`: the oldest events after it (a cursor to follow the feed). Without: the newest
 * `limit` events, oldest first within the page.
 */
export async function listEvents(db: Store, q: FeedQuery) {
  const column = OWNER_COLUMN[q.owner.kind];
  const where = [`${column} = ?`];
  const args: (string | number | bigint)[] = [q.owner.id];
  if (q.types?.length) {
    where.push(`type IN (${q.types.map(() => '?').join(', ')})`);
    args.push(...q.types);
  }
  if (q.unreadOnly) where.push('read = 0');
  if (q.since !== undefined) {
    where.push('seq > ?');
    args.push(q.since);
  }
  const order = q.since !== undefined ? 'ASC' : 'DESC';
  const rows = await db.all<EventRow>(`SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY seq ${order} LIMIT ?`, ...args, q.limit);
  if (order === 'DESC') rows.reverse();
  const unread = await db.get<{ n: bigint }>(`SELECT count(*) AS n FROM events WHERE ${column} = ? AND read = 0`, q.owner.id);
  return { items: rows.map(view), unread: Number(unread?.n ?? 0n), next_since: rows.length ? rows[rows.length - 1]!.event_id : null };
}

/** Marks the given events (of this owner's feed only) or all as read; returns how many changed. */
export async function markRead(db: Store, owner: FeedOwner, ids: string[] | 'all'): Promise<number> {
  const column = OWNER_COLUMN[owner.kind];
  if (ids === 'all') return (await db.run(`UPDATE events SET read = 1 WHERE ${column} = ? AND read = 0`, owner.id)).changes;
  return (await db.run(`UPDATE events SET read = 1 WHERE ${column} = ? AND read = 0 AND event_id IN (${ids.map(() => '?').join(', ')})`, owner.id, ...ids)).changes;
}
