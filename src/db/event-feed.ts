/** Reading and acknowledging the event feed of a wallet or a merchant. */
import type { Database } from 'bun:sqlite';
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
export function resolveSince(db: Database, owner: FeedOwner, since: string): bigint | null {
  const column = OWNER_COLUMN[owner.kind];
  if (since.startsWith('evt_')) {
    const row = db.query<{ seq: bigint }, [string, string]>(`SELECT seq FROM events WHERE event_id = ? AND ${column} = ?`).get(since, owner.id);
    return row ? row.seq : null;
  }
  const ms = Date.parse(since);
  if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}/.test(since)) return null;
  const row = db.query<{ seq: bigint | null }, [string, number]>(`SELECT max(seq) AS seq FROM events WHERE ${column} = ? AND created_at < ?`).get(owner.id, ms);
  return row?.seq ?? 0n;
}

function view(e: EventRow) {
  return { event_id: e.event_id, type: e.type, created_at: new Date(Number(e.created_at)).toISOString(), read: e.read === 1n, data: JSON.parse(e.data) };
}

/**
 * With `since`: the oldest events after it (a cursor to follow the feed). Without: the newest
 * `limit` events, oldest first within the page.
 */
export function listEvents(db: Database, q: FeedQuery) {
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
  const rows = db.query<EventRow, (string | number | bigint)[]>(`SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY seq ${order} LIMIT ?`).all(...args, q.limit);
  if (order === 'DESC') rows.reverse();
  const unread = db.query<{ n: bigint }, [string]>(`SELECT count(*) AS n FROM events WHERE ${column} = ? AND read = 0`).get(q.owner.id);
  return { items: rows.map(view), unread: Number(unread?.n ?? 0n), next_since: rows.length ? rows[rows.length - 1]!.event_id : null };
}

/** Marks the given events (of this owner's feed only) or all as read; returns how many changed. */
export function markRead(db: Database, owner: FeedOwner, ids: string[] | 'all'): number {
  const column = OWNER_COLUMN[owner.kind];
  if (ids === 'all') return db.query(`UPDATE events SET read = 1 WHERE ${column} = ? AND read = 0`).run(owner.id).changes;
  return db.query(`UPDATE events SET read = 1 WHERE ${column} = ? AND read = 0 AND event_id IN (${ids.map(() => '?').join(', ')})`).run(owner.id, ...ids).changes;
}
