/**
 * The decision log's rows and signed heads (migration 0013; rules in src/domain/decision-log.ts).
 * appendDecision runs inside the transaction of the change it records (appendEvent and
 * appendAudit call it) and the wallet's new head is signed in that transaction too, so a change,
 * its row and a head over it commit together or not at all: no accepted decision waits unsigned,
 * where a row could be re-chained unseen.
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

interface Head {
  seq: number;
  hash: Uint8Array;
  at: number;
}

interface LogState {
  sign: HeadSigner | null;
  /** While a transaction runs: each wallet it appended to, with its newest row (signed once at its end). */
  pending: Map<string, Head> | null;
  /** What each append replaced in `pending`, so a rolled-back savepoint takes its rows' heads back. */
  undo: [walletId: string, replaced: Head | undefined][];
  rows: number;
  seconds: number;
  heads: number;
  headSeconds: number;
}

const states = new WeakMap<Database, LogState>();

function stateOf(db: Database): LogState {
  let s = states.get(db);
  if (!s) states.set(db, (s = { sign: null, pending: null, undo: [], rows: 0, seconds: 0, heads: 0, headSeconds: 0 }));
  return s;
}

/**
 * Every appended row's head is signed with `sign` in the row's own commit; a database without a
 * signer refuses to append. Wraps `db.transaction` (as commit-count.ts does) so each transaction
 * signs the head of every wallet it moved once, before it commits, not at every row.
 */
export function registerHeadSigner(db: Database, sign: HeadSigner): void {
  const state = stateOf(db);
  if (!state.sign) {
    const original = db.transaction.bind(db) as (fn: (...args: any[]) => any) => ReturnType<Database['transaction']>;
    db.transaction = ((fn: (...args: any[]) => any) => original((...args: any[]) => signingHeadsAtEnd(db, () => fn(...args)))) as Database['transaction'];
  }
  state.sign = sign;
}

/** Rows appended and heads signed by this process, and the time each took (the cost /metrics shows). */
export function decisionLogStats(db: Database): { rows: number; seconds: number; heads: number; headSeconds: number } {
  const { rows, seconds, heads, headSeconds } = stateOf(db);
  return { rows, seconds, heads, headSeconds };
}

/** Appends one decision to `walletId`'s chain and signs the new head (in a transaction, at its end). Call inside the change's transaction. */
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
  const head = { seq: row.seq, hash, at: d.now };
  if (!state.pending) return signHead(db, state, d.walletId, head);
  state.undo.push([d.walletId, state.pending.get(d.walletId)]);
  state.pending.set(d.walletId, head);
}

function signHead(db: Database, state: LogState, walletId: string, head: Head): void {
  const started = performance.now();
  const signature = state.sign!(headStatement(walletId, head.seq, head.hash));
  db.query('INSERT INTO decision_log_heads (wallet_id, seq, hash, signed_at, signature) VALUES (?, ?, ?, ?, ?)').run(walletId, head.seq, head.hash, head.at, signature);
  state.heads++;
  state.headSeconds += (performance.now() - started) / 1000;
}

/**
 * Runs a transaction's `body` with the head of each wallet it appends to signed once, after the
 * body and before the commit (a batch of pays moves the same payee many times; an intent writes
 * an event and an audit entry). Nested (a savepoint), a body that throws is rolled back with its
 * rows, so the heads it set are taken back.
 */
function signingHeadsAtEnd<T>(db: Database, body: () => T): T {
  const state = stateOf(db);
  if (state.pending) {
    const mark = state.undo.length;
    try {
      return body();
    } catch (err) {
      for (const [walletId, replaced] of state.undo.splice(mark).reverse()) {
        if (replaced) state.pending!.set(walletId, replaced);
        else state.pending!.delete(walletId);
      }
      throw err;
    }
  }
  const pending = new Map<string, Head>();
  state.pending = pending;
  try {
    const result = body();
    state.pending = null;
    for (const [walletId, head] of pending) signHead(db, state, walletId, head);
    return result;
  } finally {
    state.pending = null;
    state.undo = [];
  }
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
