/**
 * The paywall's journal (`agent-wallet merchant gate`): a small SQLite file of its own, beside the
 * merchant profile, so that a paid request outlives the gate's process. Written ahead: a row says a
 * payment is being settled before the facilitator is asked, that it settled before the upstream is
 * asked, and holds the answer before the buyer is sent it. A gate that starts again finds what the
 * last one left halfway (issue 40, item 7). One gate a file: the first write takes an exclusive lock
 * that dies with its process.
 */
import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `settling`: sent to the facilitator, the outcome not known. `settled`: the payment settled, the
 * answer not kept yet. `answered`: the answer (or the refund notice) is kept and is what a resend gets.
 */
export type JournalState = 'settling' | 'settled' | 'answered';

export interface JournalRow {
  /** `id:` + the payment identifier, or `tx:` + the payment header's hash (a payment without one). */
  key: string;
  header_hash: Uint8Array;
  payment_id: string | null;
  payer: string;
  /** The receipt's header name (`payment-response` for v2, `x-payment-response` for v1). */
  receipt_name: string;
  network: string;
  state: JournalState;
  transaction: string | null;
  /** The receipt header's value, once settled. */
  receipt: string | null;
  status: number | null;
  /** JSON [name, value][]. */
  headers: string | null;
  body: Uint8Array | null;
  created_at: number;
}

export class JournalLockedError extends Error {
  override readonly name = 'JournalLockedError';
}

/** Opens (creating) the journal at `path` (":memory:" for tests) and takes its lock. */
export function openPaywallJournal(path: string): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new Database(path, { create: true, strict: true });
  try {
    // Exclusive before WAL: the lock is the file's, no shared memory, held until close.
    db.run('PRAGMA locking_mode = EXCLUSIVE');
    db.run('PRAGMA journal_mode = WAL');
    // An answer is kept before it is sent: it must survive the machine too.
    db.run('PRAGMA synchronous = FULL');
    db.run(`CREATE TABLE IF NOT EXISTS paywall_payments (
      key TEXT PRIMARY KEY,
      header_hash BLOB NOT NULL,
      payment_id TEXT,
      payer TEXT NOT NULL,
      receipt_name TEXT NOT NULL,
      network TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('settling', 'settled', 'answered')),
      "transaction" TEXT,
      receipt TEXT,
      status INTEGER,
      headers TEXT,
      body BLOB,
      created_at INTEGER NOT NULL
    )`);
    // A write that changes a row takes the exclusive lock now, not at the first sale: a second gate is refused at start.
    db.run('CREATE TABLE IF NOT EXISTS paywall_start (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, started_at INTEGER NOT NULL)');
    db.query('INSERT OR REPLACE INTO paywall_start (id, pid, started_at) VALUES (1, ?, ?)').run(process.pid, Date.now());
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new JournalLockedError(`another gate is using the journal ${path}`);
    throw err;
  }
  return db;
}

export function journalEntry(db: Database, key: string): JournalRow | null {
  return db.query<JournalRow, [string]>('SELECT * FROM paywall_payments WHERE key = ?').get(key);
}

/** A payment about to be settled (`settling`) or just settled (`settled`, a payment without identifier). */
export function journalStart(db: Database, r: Pick<JournalRow, 'key' | 'header_hash' | 'payment_id' | 'payer' | 'receipt_name' | 'network' | 'transaction' | 'receipt' | 'created_at'> & { state: 'settling' | 'settled' }): void {
  db.query('INSERT INTO paywall_payments (key, header_hash, payment_id, payer, receipt_name, network, state, "transaction", receipt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
    r.key,
    r.header_hash,
    r.payment_id,
    r.payer,
    r.receipt_name,
    r.network,
    r.state,
    r.transaction,
    r.receipt,
    r.created_at,
  );
}

export function journalSettled(db: Database, key: string, transaction: string, receipt: string): void {
  db.query('UPDATE paywall_payments SET state = \'settled\', "transaction" = ?, receipt = ? WHERE key = ?').run(transaction, receipt, key);
}

export function journalAnswered(db: Database, key: string, a: { status: number; headers: [string, string][]; body: Uint8Array }): void {
  db.query("UPDATE paywall_payments SET state = 'answered', status = ?, headers = ?, body = ? WHERE key = ?").run(a.status, JSON.stringify(a.headers), a.body, key);
}

export function journalForget(db: Database, key: string): void {
  db.query('DELETE FROM paywall_payments WHERE key = ?').run(key);
}

/** Drops answers older than `before` (ms); payments still settling or unanswered stay until resolved. */
export function journalPrune(db: Database, before: number): void {
  db.query("DELETE FROM paywall_payments WHERE state = 'answered' AND created_at < ?").run(before);
}

/** Payments a gate left before their answer, oldest first. */
export function journalUnanswered(db: Database): JournalRow[] {
  return db.query<JournalRow, []>("SELECT * FROM paywall_payments WHERE state != 'answered' ORDER BY created_at").all();
}
