/** The event feed (DESIGN §9). Events are appended inside the transaction of the change they describe. */
import type { Store } from './store.ts';
import { newId } from '../contract/ids.ts';
import { appendDecision } from './decision-log.ts';
import { jsonText } from '../domain/json.ts';

export interface EventRow {
  seq: bigint;
  event_id: string;
  wallet_id: string | null;
  merchant_id: string | null;
  type: string;
  data: string;
  read: bigint;
  created_at: bigint;
}

/** Appends one event for a wallet or a merchant; returns its id. A wallet's event is also a row of its decision log. */
export async function appendEvent(db: Store, e: { walletId?: string; merchantId?: string; type: string; data: Record<string, unknown>; now: number }): Promise<string> {
  const id = newId('event');
  await db.run('INSERT INTO events (event_id, wallet_id, merchant_id, type, data, created_at) VALUES (?, ?, ?, ?, ?, ?)', id,
    e.walletId ?? null,
    e.merchantId ?? null,
    e.type,
    jsonText(e.data),
    e.now,
  );
  if (e.walletId) await appendDecision(db, { walletId: e.walletId, kind: e.type, data: { event_id: id, ...e.data }, now: e.now });
  return id;
}

/** Appends to the append-only audit log, and the same decision to the wallet's decision log. */
export async function appendAudit(db: Store, a: { walletId: string; actor: string; kind: string; data: Record<string, unknown>; now: number }): Promise<void> {
  await db.run('INSERT INTO audit_log (wallet_id, actor, kind, data, created_at) VALUES (?, ?, ?, ?, ?)', a.walletId,
    a.actor,
    a.kind,
    jsonText(a.data),
    a.now,
  );
  await appendDecision(db, { walletId: a.walletId, kind: a.kind, data: { actor: a.actor, ...a.data }, now: a.now });
}
