/**
 * The decision log's rows and signed heads (migration 0013; rules in src/domain/decision-log.ts).
 * appendDecision runs inside the transaction of the change it records (appendEvent and
 * appendAudit call it) and the wallet's new head is signed in that transaction too, so a change,
 * its row and a head over it commit together or not at all: no accepted decision waits unsigned,
 * where a row could be re-chained unseen.
 */
import type { Store, TxScope } from './store.ts';
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
  rows: number;
  seconds: number;
  heads: number;
  headSeconds: number;
}

/** One transaction's wallets appended to, each with its newest row (signed once at its end), and what each append replaced, so a rolled-back savepoint takes its rows' heads back. */
interface Pending {
  heads: Map<string, Head>;
  undo: [walletId: string, replaced: Head | undefined][];
}

const PENDING = Symbol('decision-log heads');
const states = new WeakMap<Store, LogState>();

function stateOf(db: Store): LogState {
  let s = states.get(db);
  if (!s) states.set(db, (s = { sign: null, rows: 0, seconds: 0, heads: 0, headSeconds: 0 }));
  return s;
}

function pendingOf(db: Store): Pending | undefined {
  return db.scope()?.locals.get(PENDING) as Pending | undefined;
}

/**
 * Every appended row's head is signed with `sign` in the row's own commit; a database without a
 * signer refuses to append. A hook on every transaction signs the head of every wallet it moved
 * once, before it commits, not at every row.
 */
export function registerHeadSigner(db: Store, sign: HeadSigner): void {
  const state = stateOf(db);
  if (!state.sign) db.addTxHook((body, scope, nested) => signingHeadsAtEnd(db, state, body, scope, nested));
  state.sign = sign;
}

/** Rows appended and heads signed by this process, and the time each took (the cost /metrics shows). */
export function decisionLogStats(db: Store): { rows: number; seconds: number; heads: number; headSeconds: number } {
  const { rows, seconds, heads, headSeconds } = stateOf(db);
  return { rows, seconds, heads, headSeconds };
}

/** Appends one decision to `walletId`'s chain and signs the new head (in a transaction, at its end). Call inside the change's transaction. */
export async function appendDecision(db: Store, d: { walletId: string; kind: string; data: Record<string, unknown>; now: number }): Promise<void> {
  const state = stateOf(db);
  if (!state.sign) throw new Error('the decision log has no head signer: registerHeadSigner before the first write');
  const started = performance.now();
  const last = await db.get<{ seq: number | bigint; hash: Uint8Array }>('SELECT seq, hash FROM decision_log WHERE wallet_id = ? ORDER BY seq DESC LIMIT 1', d.walletId);
  const row = { wallet_id: d.walletId, seq: Number(last?.seq ?? 0) + 1, at: d.now, kind: d.kind, data: jsonText(d.data) };
  const prev = last?.hash ?? GENESIS_HASH;
  const hash = rowHash(prev, row);
  await db.run('INSERT INTO decision_log (wallet_id, seq, at, kind, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', row.wallet_id, row.seq, row.at, row.kind, row.data, prev, hash);
  state.rows++;
  state.seconds += (performance.now() - started) / 1000;
  const head = { seq: row.seq, hash, at: d.now };
  const pending = pendingOf(db);
  if (!pending) return signHead(db, state, d.walletId, head);
  pending.undo.push([d.walletId, pending.heads.get(d.walletId)]);
  pending.heads.set(d.walletId, head);
}

async function signHead(db: Store, state: LogState, walletId: string, head: Head): Promise<void> {
  const started = performance.now();
  const signature = state.sign!(headStatement(walletId, head.seq, head.hash));
  await db.run('INSERT INTO decision_log_heads (wallet_id, seq, hash, signed_at, signature) VALUES (?, ?, ?, ?, ?)', walletId, head.seq, head.hash, head.at, signature);
  state.heads++;
  state.headSeconds += (performance.now() - started) / 1000;
}

/**
 * Runs a transaction's `body` with the head of each wallet it appends to signed once, after the
 * body and before the commit (a batch of pays moves the same payee many times; an intent writes
 * an event and an audit entry). Nested (a savepoint), a body that throws is rolled back with its
 * rows, so the heads it set are taken back.
 */
async function signingHeadsAtEnd<T>(db: Store, state: LogState, body: () => Promise<T>, scope: TxScope, nested: boolean): Promise<T> {
  if (nested) {
    const pending = scope.locals.get(PENDING) as Pending;
    const mark = pending.undo.length;
    try {
      return await body();
    } catch (err) {
      for (const [walletId, replaced] of pending.undo.splice(mark).reverse()) {
        if (replaced) pending.heads.set(walletId, replaced);
        else pending.heads.delete(walletId);
      }
      throw err;
    }
  }
  const pending: Pending = { heads: new Map(), undo: [] };
  scope.locals.set(PENDING, pending);
  const result = await body();
  scope.locals.delete(PENDING);
  for (const [walletId, head] of pending.heads) await signHead(db, state, walletId, head);
  return result;
}

/** The newest row of a wallet's chain, or null. */
export async function decisionHead(db: Store, walletId: string): Promise<DecisionRow | null> {
  const r = await db.get<DecisionRow>('SELECT * FROM decision_log WHERE wallet_id = ? ORDER BY seq DESC LIMIT 1', walletId);
  return r ? rowOf(r) : null;
}

/** The rows of `walletId` an export of [fromMs, toMs) holds, up to `headSeq`: the first and last seq and the last one's hash, or null when none. */
export async function decisionRange(db: Store, walletId: string, range: { fromMs: number; toMs: number }, headSeq: number): Promise<{ first: number; last: number; hash: Uint8Array } | null> {
  const r = await db
    .get<{ first: number | bigint | null; last: number | bigint | null }>('SELECT min(seq) AS first, max(seq) AS last FROM decision_log WHERE wallet_id = ?1 AND at >= ?2 AND at < ?3 AND seq <= ?4', walletId, range.fromMs, range.toMs, headSeq);
  if (r?.first == null || r.last == null) return null;
  const last = (await db.get<{ hash: Uint8Array }>('SELECT hash FROM decision_log WHERE wallet_id = ? AND seq = ?', walletId, Number(r.last)))!;
  return { first: Number(r.first), last: Number(r.last), hash: last.hash };
}

/** A wallet's rows with seq in (afterSeq, lastSeq], in order, a page at a time (the export streams them). */
export async function decisionPage(db: Store, walletId: string, afterSeq: number, lastSeq: number, limit: number): Promise<DecisionRow[]> {
  return (await db.all<DecisionRow>('SELECT * FROM decision_log WHERE wallet_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?', walletId, afterSeq, lastSeq, limit)).map(rowOf);
}

/** The signed heads of a wallet with seq in [fromSeq, toSeq]. */
export async function headsBetween(db: Store, walletId: string, fromSeq: number, toSeq: number): Promise<HeadRow[]> {
  return (await db.all<HeadRow>('SELECT * FROM decision_log_heads WHERE wallet_id = ? AND seq BETWEEN ? AND ? ORDER BY seq', walletId, fromSeq, toSeq)).map(headOf);
}
