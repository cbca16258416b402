/** Reading and acknowledging a wallet's event feed. */
import type { Database } from 'bun:sqlite';
import type { EventRow } from './events.ts';

export interface FeedQuery {
  walletId: string;
  types?: string[];
  unreadOnly: boolean;
  /** Only events after this sequence number. */
  since?: bigint;
  limit: number;
}

/** An event_id of the wallet or an ISO time → the sequence to read after; null when neither. */
export function resolveSince(db: Database, walletId: string, since: string): bigint | null {
  if (since.startsWith('evt_')) {
    const row = db.query<{ seq: bigint }, [string, string]>('SELECT seq FROM events WHERE event_id = ? AND wallet_id = ?').get(since, walletId);
    return row ? row.seq : null;
  }
  const ms = Date.parse(since);
  if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}/.test(since)) return null;
  const row = db.query<{ seq: bigint | null }, [string, number]>('SELECT max(seq) AS seq FROM events WHERE wallet_id = ? AND created_at < ?').get(walletId, ms);
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
  const where = ['wallet_id = ?'];
  const args: (string | number | bigint)[] = [q.walletId];
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
  const unread = db.query<{ n: bigint }, [string]>('SELECT count(*) AS n FROM events WHERE wallet_id = ? AND read = 0').get(q.walletId);
  return { items: rows.map(view), unread: Number(unread?.n ?? 0n), next_since: rows.length ? rows[rows.length - 1]!.event_id : null };
}

/** Marks the given events (of this wallet only) or all as read; returns how many changed. */
export function markRead(db: Database, walletId: string, ids: string[] | 'all'): number {
  if (ids === 'all') return db.query('UPDATE events SET read = 1 WHERE wallet_id = ? AND read = 0').run(walletId).changes;
  return db.query(`UPDATE events SET read = 1 WHERE wallet_id = ? AND read = 0 AND event_id IN (${ids.map(() => '?').join(', ')})`).run(walletId, ...ids).changes;
}
