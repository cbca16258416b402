/**
 * The event feed actions (SPEC "Events"; DESIGN §9), shared by wallets (/bot events, mark_read)
 * and merchants (/merchant events, mark_read): each reads and acknowledges only its own feed.
 */
import { invalid } from '../errors.ts';
import { listEvents, markRead, resolveSince, type FeedOwner } from '../db/event-feed.ts';
import type { Services } from '../services.ts';

export interface ReadFeedParams {
  types?: string[];
  limit?: number;
  unread_only?: boolean;
  since?: string;
  wait_seconds?: number;
}

/** A page of the feed; with wait_seconds, waits (polling the ledger) until an event arrives or time runs out. */
export async function readFeed(services: Services, owner: FeedOwner, p: ReadFeedParams) {
  const since = p.since === undefined ? undefined : await resolveSince(services.db, owner, p.since);
  if (since === null) throw invalid('/since', `must be an event_id of this ${owner.kind} or an ISO 8601 time`);
  const query = { owner, types: p.types, unreadOnly: p.unread_only ?? false, since, limit: p.limit ?? 20 };
  const deadline = Date.now() + (p.wait_seconds ?? 0) * 1000;
  let page = await listEvents(services.db, query);
  while (page.items.length === 0 && Date.now() < deadline) {
    await Bun.sleep(100);
    page = await listEvents(services.db, query);
  }
  return page;
}

/** Marks event_ids (of this feed only) or all events as read. */
export async function markFeedRead(services: Services, owner: FeedOwner, p: { event_ids?: string[]; all?: boolean }) {
  if (!p.all && !p.event_ids) throw invalid('/event_ids', 'is required unless all is true', 'Send event_ids: [...] or all: true.');
  const marked = await services.db.transaction(async () => await markRead(services.db, owner, p.all ? 'all' : p.event_ids!));
  return { marked };
}
