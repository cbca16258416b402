/**
 * The decision log's rows and signed heads (migration 0013; rules in src/domain/decision-log.ts).
 * appendDecision runs inside the transaction of the change it records (appendEvent and
 * appendAudit call it), so a change and its row commit together or not at all.
 */
import type { Database } from 'bun:sqlite';
import { GENESIS_HASH, rowHash } from '../domain/decision-log.ts';
import { jsonText } from '../domain/json.ts';

/** Rows as read: the integers are numbers (the database hands them out as bigints). */
export interface DecisionRow {
  wallet_id: string;
  seq: number;
  at: number;
  kind: string;
  data: string;
  prev_hash: Uint8Array;
  hash: Uint8Array;
}

const rowOf = (r: DecisionRow): DecisionRow => ({ ...r, seq: Number(r.seq), at: Number(r.at) });
const headOf = (h: HeadRow): HeadRow => ({ ...h, seq: Number(h.seq), signed_at: Number(h.signed_at) });

export interface HeadRow {
  wallet_id: string;
  seq: number;
  hash: Uint8Array;
  signed_at: number;
  signature: Uint8Array;
}

/** Rows appended and the time spent appending them, per database (the cost /metrics shows). */
const appended = new WeakMap<Database, { rows: number; seconds: number }>();

export function decisionLogStats(db: Database): { rows: number; seconds: number } {
  return appended.get(db) ?? { rows: 0, seconds: 0 };
}

/** Appends one decision to `walletId`'s chain. Call inside the change's transaction. */
export function appendDecision(db: Database, d: { walletId: string; kind: string; data: Record<string, unknown>; now: number }): void {
  const started = performance.now();
  const last = db.query<{ seq: number | bigint; hash: Uint8Array }, [string]>('SELECT seq, hash FROM decision_log WHERE wallet_id = ? ORDER BY seq DESC LIMIT 1').get(d.walletId);
  const row = { wallet_id: d.walletId, seq: Number(last?.seq ?? 0) + 1, at: d.now, kind: d.kind, data: jsonText(d.data) };
  const prev = last?.hash ?? GENESIS_HASH;
  db.query('INSERT INTO decision_log (wallet_id, seq, at, kind, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)').run(row.wallet_id, row.seq, row.at, row.kind, row.data, prev, rowHash(prev, row));
  const stats = appended.get(db) ?? { rows: 0, seconds: 0 };
  stats.rows++;
  stats.seconds += (performance.now() - started) / 1000;
  appended.set(db, stats);
}

/** The newest row of a wallet's chain, or null. */
export function decisionHead(db: Database, walletId: string): DecisionRow | null {
  const r = db.query<DecisionRow, [string]>('SELECT * FROM decision_log WHERE wallet_id = ? ORDER BY seq DESC LIMIT 1').get(walletId);
  return r ? rowOf(r) : null;
}

/** Wallets whose newest row has no signed head yet (the head-signing job's work), at most `limit`. */
export function unsignedHeads(db: Database, limit: number): DecisionRow[] {
  return db
    .query<DecisionRow, [number]>(
      // One primary-key lookup a wallet, never a scan of the log.
      `SELECT d.* FROM wallets w
       JOIN decision_log d ON d.wallet_id = w.wallet_id AND d.seq = (SELECT max(seq) FROM decision_log WHERE wallet_id = w.wallet_id)
       WHERE NOT EXISTS (SELECT 1 FROM decision_log_heads h WHERE h.wallet_id = d.wallet_id AND h.seq = d.seq)
       LIMIT ?`,
    )
    .all(limit)
    .map(rowOf);
}

export function insertHead(db: Database, h: HeadRow): void {
  db.query('INSERT OR IGNORE INTO decision_log_heads (wallet_id, seq, hash, signed_at, signature) VALUES (?, ?, ?, ?, ?)').run(h.wallet_id, h.seq, h.hash, h.signed_at, h.signature);
}

/** A wallet's rows in order from `afterSeq`, a page at a time (the export streams them). */
export function decisionPage(db: Database, walletId: string, afterSeq: number, limit: number, range: { fromMs: number; toMs: number }): DecisionRow[] {
  return db
    .query<DecisionRow, [string, number, number, number, number]>('SELECT * FROM decision_log WHERE wallet_id = ? AND seq > ? AND at >= ? AND at < ? ORDER BY seq LIMIT ?')
    .all(walletId, afterSeq, range.fromMs, range.toMs, limit)
    .map(rowOf);
}

/** The signed heads of a wallet with seq in [fromSeq, toSeq]. */
export function headsBetween(db: Database, walletId: string, fromSeq: number, toSeq: number): HeadRow[] {
  return db.query<HeadRow, [string, number, number]>('SELECT * FROM decision_log_heads WHERE wallet_id = ? AND seq BETWEEN ? AND ? ORDER BY seq').all(walletId, fromSeq, toSeq).map(headOf);
}
