/**
 * The decision log's rows and signed heads (migration 0013; rules in src/domain/decision-log.ts).
 * appendDecision runs inside the transaction of the change it records (appendEvent and
 * appendAudit call it) and signs the wallet's new head there too, so a change, its row and a
 * head over it commit together or not at all: no accepted decision waits unsigned, where a row
 * could be re-chained unseen.
 */
import type { Database } from 'bun:sqlite';
import { GENESIS_HASH, headStatement, rowHash } from '../domain/decision-log.ts';
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

/** Signs a head statement with the daemon's log key (src/evidence/log-key.ts registers it). */
export type HeadSigner = (statement: Uint8Array) => Uint8Array;

interface LogState {
  sign: HeadSigner | null;
  /** While a write batch runs: the wallets whose heads it signs once each at its end, not at each row. */
  deferred: Set<string> | null;
  rows: number;
  seconds: number;
  heads: number;
  headSeconds: number;
}

const states = new WeakMap<Database, LogState>();

function stateOf(db: Database): LogState {
  let s = states.get(db);
  if (!s) states.set(db, (s = { sign: null, deferred: null, rows: 0, seconds: 0, heads: 0, headSeconds: 0 }));
  return s;
}

/** Every appended row's head is signed with `sign` in the row's own commit; a database without a signer refuses to append. */
export function registerHeadSigner(db: Database, sign: HeadSigner): void {
  stateOf(db).sign = sign;
}

/** Rows appended and heads signed by this process, and the time each took (the cost /metrics shows). */
export function decisionLogStats(db: Database): { rows: number; seconds: number; heads: number; headSeconds: number } {
  const { rows, seconds, heads, headSeconds } = stateOf(db);
  return { rows, seconds, heads, headSeconds };
}

/** Appends one decision to `walletId`'s chain and signs the new head (or, in a batch, leaves that to its end). Call inside the change's transaction. */
export function appendDecision(db: Database, d: { walletId: string; kind: string; data: Record<string, unknown>; now: number }): void {
  const state = stateOf(db);
  if (!state.sign) throw new Error('the decision log has no head signer: registerHeadSigner before the first write');
  const started = performance.now();
  const last = db.query<{ seq: number | bigint; hash: Uint8Array }, [string]>('SELECT seq, hash FROM decision_log WHERE wallet_id = ? ORDER BY seq DESC LIMIT 1').get(d.walletId);
  const row = { wallet_id: d.walletId, seq: Number(last?.seq ?? 0) + 1, at: d.now, kind: d.kind, data: jsonText(d.data) };
  const prev = last?.hash ?? GENESIS_HASH;
  const hash = rowHash(prev, row);
  db.query('INSERT INTO decision_log (wallet_id, seq, at, kind, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)').run(row.wallet_id, row.seq, row.at, row.kind, row.data, prev, hash);
  state.rows++;
  state.seconds += (performance.now() - started) / 1000;
  if (state.deferred) state.deferred.add(d.walletId);
  else signHead(db, state, d.walletId, row.seq, hash, d.now);
}

function signHead(db: Database, state: LogState, walletId: string, seq: number, hash: Uint8Array, now: number): void {
  const started = performance.now();
  const signature = state.sign!(headStatement(walletId, seq, hash));
  db.query('INSERT INTO decision_log_heads (wallet_id, seq, hash, signed_at, signature) VALUES (?, ?, ?, ?, ?)').run(walletId, seq, hash, now, signature);
  state.heads++;
  state.headSeconds += (performance.now() - started) / 1000;
}

/**
 * Runs `body` (inside an open transaction: a write batch) with the head of each wallet it appends
 * to signed once, after the body and before the commit, instead of at every row: a batch of pays
 * moves the same payee many times. What a rolled-back savepoint appended is gone; the newest row
 * left is signed, unless it already is.
 */
export function signingHeadsAtEnd<T>(db: Database, body: () => T): T {
  const state = stateOf(db);
  if (state.deferred) return body();
  const moved = new Set<string>();
  state.deferred = moved;
  let result: T;
  try {
    result = body();
  } finally {
    state.deferred = null;
  }
  // The batch's clock is its units' own; the signing time is only shown.
  const at = Date.now();
  for (const walletId of moved) {
    const head = db
      .query<{ seq: number | bigint; hash: Uint8Array; signed: number | bigint }, [string]>(
        'SELECT d.seq, d.hash, EXISTS (SELECT 1 FROM decision_log_heads h WHERE h.wallet_id = d.wallet_id AND h.seq = d.seq) AS signed FROM decision_log d WHERE d.wallet_id = ? ORDER BY d.seq DESC LIMIT 1',
      )
      .get(walletId);
    if (head && !Number(head.signed)) signHead(db, state, walletId, Number(head.seq), head.hash, at);
  }
  return result;
}

/** The newest row of a wallet's chain, or null. */
export function decisionHead(db: Database, walletId: string): DecisionRow | null {
  const r = db.query<DecisionRow, [string]>('SELECT * FROM decision_log WHERE wallet_id = ? ORDER BY seq DESC LIMIT 1').get(walletId);
  return r ? rowOf(r) : null;
}

/** The rows of `walletId` an export of [fromMs, toMs) holds, up to `headSeq`: the first and last seq and the last one's hash, or null when none. */
export function decisionRange(db: Database, walletId: string, range: { fromMs: number; toMs: number }, headSeq: number): { first: number; last: number; hash: Uint8Array } | null {
  const r = db
    .query<{ first: number | bigint | null; last: number | bigint | null }, [string, number, number, number]>('SELECT min(seq) AS first, max(seq) AS last FROM decision_log WHERE wallet_id = ?1 AND at >= ?2 AND at < ?3 AND seq <= ?4')
    .get(walletId, range.fromMs, range.toMs, headSeq);
  if (r?.first == null || r.last == null) return null;
  const last = db.query<{ hash: Uint8Array }, [string, number]>('SELECT hash FROM decision_log WHERE wallet_id = ? AND seq = ?').get(walletId, Number(r.last))!;
  return { first: Number(r.first), last: Number(r.last), hash: last.hash };
}

/** A wallet's rows with seq in (afterSeq, lastSeq], in order, a page at a time (the export streams them). */
export function decisionPage(db: Database, walletId: string, afterSeq: number, lastSeq: number, limit: number): DecisionRow[] {
  return db.query<DecisionRow, [string, number, number, number]>('SELECT * FROM decision_log WHERE wallet_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?').all(walletId, afterSeq, lastSeq, limit).map(rowOf);
}

/** The signed heads of a wallet with seq in [fromSeq, toSeq]. */
export function headsBetween(db: Database, walletId: string, fromSeq: number, toSeq: number): HeadRow[] {
  return db.query<HeadRow, [string, number, number]>('SELECT * FROM decision_log_heads WHERE wallet_id = ? AND seq BETWEEN ? AND ? ORDER BY seq').all(walletId, fromSeq, toSeq).map(headOf);
}
