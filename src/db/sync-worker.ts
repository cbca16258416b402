/**
 * The ledger's disk thread (durability.ts): fdatasyncs the WAL when asked, and checkpoints it when
 * it has grown, through its own connection — so neither the sync of a commit nor a checkpoint's
 * syncs ever run on the event loop. Answers each sync with the generation it covered, or the error.
 */
import { Database } from 'bun:sqlite';
import { closeSync, fdatasyncSync, fstatSync, openSync, writeFileSync } from 'node:fs';

declare const self: Worker;

/** A checkpoint runs after a sync that found the WAL at least this large (SQLite's own default, 1000 pages of 4 KiB). */
const CHECKPOINT_BYTES = 4 * 1024 * 1024;

let db: Database | null = null;
let walPath = '';

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

self.onmessage = (event: MessageEvent<{ op: 'open'; path: string } | { op: 'sync'; gen: number } | { op: 'close' }>) => {
  const m = event.data;
  if (m.op === 'open') {
    walPath = `${m.path}-wal`;
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
    // PASSIVE: copies what no reader still needs, never waits for the writer; its syncs happen here.
    if (bytes >= CHECKPOINT_BYTES && db) {
      db.run('PRAGMA wal_checkpoint(PASSIVE)');
      self.postMessage({ op: 'checkpointed' });
    }
  } catch (err) {
    self.postMessage({ op: 'failed', gen: m.gen, error: err instanceof Error ? err.message : String(err) });
  }
};
