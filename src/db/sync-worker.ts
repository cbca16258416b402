/**
 * The ledger's disk thread (durability.ts): fdatasyncs the WAL when asked, and checkpoints it
 * through its own connection — so neither the sync of a commit nor a checkpoint's syncs run on the
 * event loop. Answers each sync with the generation it covered, or the error.
 *
 * After a checkpoint has copied the whole WAL into the database, the next write starts the WAL
 * over and syncs its new header (SQLite does, whatever `synchronous` says, so that a reordered
 * write cannot corrupt the file). This thread tries to make that write itself — a no-op rewrite of
 * the header's application_id — so the header's sync happens here; when the event loop writes
 * first, that one sync is the event loop's. Checkpoints are rare for that reason: one per
 * CHECKPOINT_ROWS rows written, or after a quiet minute.
 */
import { Database } from 'bun:sqlite';
import { closeSync, fdatasyncSync, fstatSync, openSync, writeFileSync } from 'node:fs';

declare const self: Worker;

/** A checkpoint follows the sync that finds this many rows written since the last one (a few MiB of WAL)… */
const CHECKPOINT_ROWS = 10_000;
/** …or this long after the last one, when anything was written. */
const CHECKPOINT_IDLE_MS = 60_000;

let db: Database | null = null;
let walPath = '';
let lastCheckpoint = { at: Date.now(), gen: 0 };

/**
 * For the power-loss test only: after each sync, the WAL's length that sync made durable is
 * written to this file, so the test can cut the unsynced tail off as a power loss would.
 */
const syncedLog = process.env.AGENT_WALLET_TEST_SYNCED_WAL ?? '';

/**
 * Flushes the WAL to the disk; returns the length it made durable: the size before the flush
 * (0 when there is no WAL: everything is in the main file, synced by the checkpoint).
 */
function syncWal(): number {
  let fd: number;
  try {
    fd = openSync(walPath, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    // fdatasync applies to the file, whichever descriptor names it: the frames the event loop's
    // connection wrote before this began are on the disk when it returns.
    fdatasyncSync(fd);
    if (syncedLog) writeFileSync(syncedLog, String(size));
    return size;
  } finally {
    closeSync(fd);
  }
}

/** PASSIVE: copies what no reader still needs and never waits for the writer; then starts the WAL over, here. */
function checkpoint(conn: Database): void {
  const done = conn.query<{ busy: number; log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(PASSIVE)').get();
  if (!done || done.busy !== 0 || done.log <= 0 || done.checkpointed !== done.log) return;
  try {
    conn.transaction(() => {
      const { application_id } = conn.query<{ application_id: number }, []>('PRAGMA application_id').get()!;
      conn.run(`PRAGMA application_id = ${Number(application_id)}`);
    }).immediate();
  } catch {
    // The event loop is writing: its write starts the WAL over this time.
  }
}

self.onmessage = (event: MessageEvent<{ op: 'open'; path: string; gen: number } | { op: 'sync'; gen: number } | { op: 'close' }>) => {
  const m = event.data;
  if (m.op === 'open') {
    walPath = `${m.path}-wal`;
    lastCheckpoint.gen = m.gen;
    db = new Database(m.path);
    db.run('PRAGMA busy_timeout = 5000');
    // Everything before the switch was committed with synchronous=FULL: on the disk already.
    if (syncedLog) writeFileSync(syncedLog, String(syncWal()));
    return;
  }
  if (m.op === 'close') {
    db?.close();
    db = null;
    self.postMessage({ op: 'closed' });
    return;
  }
  try {
    const bytes = syncWal();
    self.postMessage({ op: 'synced', gen: m.gen, bytes });
    const written = m.gen - lastCheckpoint.gen;
    if (db && (written >= CHECKPOINT_ROWS || (written > 0 && Date.now() - lastCheckpoint.at >= CHECKPOINT_IDLE_MS))) {
      lastCheckpoint = { at: Date.now(), gen: m.gen };
      checkpoint(db);
      self.postMessage({ op: 'checkpointed' });
    }
  } catch (err) {
    self.postMessage({ op: 'failed', gen: m.gen, error: err instanceof Error ? err.message : String(err) });
  }
};
