/**
 * The ledger's disk thread (durability.ts): fdatasyncs the WAL when asked, and checkpoints it
 * through its own connections — so neither the sync of a commit nor a checkpoint's syncs run on
 * the event loop. Answers each sync with the generation it covered, or the error.
 *
 * Starting the WAL over is a sync too: after a checkpoint has copied the whole WAL into the
 * database, the next write rewrites the WAL's header and syncs it (SQLite does, whatever
 * `synchronous` says, so that a reordered write cannot corrupt the file). That write must be this
 * thread's, never the event loop's, so a checkpoint runs as one sequence here:
 *
 * 1. `pin` opens a read snapshot. SQLite starts the WAL over only when it can lock every reader's
 *    mark, so while the snapshot is held no other connection's write can (it appends instead).
 * 2. `conn` checkpoints PASSIVE (never waits for the writer). Unless the whole WAL was copied
 *    (something was written meanwhile), the pin is dropped and the next sync tries again: the WAL
 *    stays as it is and no write can start it over, since some of it is not copied.
 * 3. `conn` takes the write lock, drops the pin, and rewrites the header's application_id (a
 *    no-op change): when nothing was written since the checkpoint, this write starts the WAL over
 *    and syncs the header here. Otherwise it appends, and the WAL is again not wholly copied.
 *
 * The event loop can wait for that short write lock (a commit meanwhile), but never syncs. Each
 * start-over is counted; so is one that this thread did not make (another process's checkpoint).
 * Checkpoints are rare: due once CHECKPOINT_ROWS rows were written since the last start-over, or
 * after a quiet minute, and tried on each sync until the WAL has started over.
 */
import { Database } from 'bun:sqlite';
import { closeSync, fdatasyncSync, fstatSync, openSync, readSync, writeFileSync } from 'node:fs';

declare const self: Worker;

/** Rows written since the WAL last started over that make a checkpoint due (a few MiB of WAL)… */
const CHECKPOINT_ROWS = 10_000;
/** …or this long after the last one, when anything was written. */
const CHECKPOINT_IDLE_MS = 60_000;

let conn: Database | null = null;
let pin: Database | null = null;
let walPath = '';
let checkpointRows = CHECKPOINT_ROWS;
let lastRestart = { at: Date.now(), gen: 0 };
/** The WAL header's salt-1 as last seen: every start-over changes it. */
let knownSalt: number | null = null;

/**
 * For the power-loss test only: after each sync, the WAL's length that sync made durable is
 * written to this file, so the test can cut the unsynced tail off as a power loss would.
 */
const syncedLog = process.env.AGENT_WALLET_TEST_SYNCED_WAL ?? '';

type Reply =
  | { op: 'synced'; gen: number; bytes: number; foreignRestart: boolean }
  | { op: 'checkpointed'; restarted: boolean; foreignRestart: boolean }
  | { op: 'failed'; gen: number; error: string }
  | { op: 'closed' };
const reply = (m: Reply) => self.postMessage(m);

/** The WAL header's salt-1 (bytes 16–19, big-endian), or null when the WAL is empty or absent. */
function readSalt(fd: number): number | null {
  const header = Buffer.alloc(32);
  if (readSync(fd, header, 0, 32, 0) < 32) return null;
  return header.readUInt32BE(16);
}

function openWal(): number | null {
  try {
    return openSync(walPath, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Records the salt seen now; true when the WAL started over since the last look, not by this thread. */
function startedOverElsewhere(salt: number | null): boolean {
  // A header where there was none (another connection truncated the WAL) is a start-over as well.
  const changed = salt !== null && salt !== knownSalt;
  knownSalt = salt;
  return changed;
}

/** The WAL's salt-1 now (null: no WAL). */
function currentSalt(): number | null {
  const fd = openWal();
  if (fd === null) return null;
  try {
    return readSalt(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Flushes the WAL to the disk; returns the length it made durable: the size before the flush
 * (0 when there is no WAL: everything is in the main file, synced by the checkpoint), and whether
 * the WAL started over since this thread last looked without this thread doing it.
 */
function syncWal(): { bytes: number; foreignRestart: boolean } {
  const fd = openWal();
  if (fd === null) return { bytes: 0, foreignRestart: false };
  try {
    const size = fstatSync(fd).size;
    const foreignRestart = startedOverElsewhere(readSalt(fd));
    // fdatasync applies to the file, whichever descriptor names it: the frames the event loop's
    // connection wrote before this began are on the disk when it returns.
    fdatasyncSync(fd);
    if (syncedLog) writeFileSync(syncedLog, String(size));
    return { bytes: size, foreignRestart };
  } finally {
    closeSync(fd);
  }
}

/** The sequence of the module comment: whether the WAL started over here, and whether it had elsewhere before. */
function checkpoint(c: Database, p: Database): { restarted: boolean; foreignRestart: boolean } {
  p.run('BEGIN');
  try {
    // The first read opens the snapshot, on a reader's mark of the WAL.
    p.query('SELECT 1 FROM sqlite_schema LIMIT 1').get();
    const done = c.query<{ busy: number; log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(PASSIVE)').get();
    const foreignRestart = startedOverElsewhere(currentSalt());
    if (!done || done.busy !== 0 || done.log <= 0 || done.checkpointed !== done.log) return { restarted: false, foreignRestart };
    const before = knownSalt;
    c.run('BEGIN IMMEDIATE');
    try {
      p.run('COMMIT');
      const { application_id } = c.query<{ application_id: number }, []>('PRAGMA application_id').get()!;
      c.run(`PRAGMA application_id = ${Number(application_id)}`);
      c.run('COMMIT');
    } catch (err) {
      if (c.inTransaction) c.run('ROLLBACK');
      throw err;
    }
    knownSalt = currentSalt();
    return { restarted: knownSalt !== before, foreignRestart };
  } finally {
    if (p.inTransaction) p.run('COMMIT');
  }
}

self.onmessage = (event: MessageEvent<{ op: 'open'; path: string; gen: number; checkpointRows?: number } | { op: 'sync'; gen: number } | { op: 'close' }>) => {
  const m = event.data;
  if (m.op === 'open') {
    walPath = `${m.path}-wal`;
    lastRestart.gen = m.gen;
    checkpointRows = m.checkpointRows ?? CHECKPOINT_ROWS;
    conn = new Database(m.path);
    pin = new Database(m.path);
    for (const db of [conn, pin]) db.run('PRAGMA busy_timeout = 5000');
    knownSalt = currentSalt();
    // Everything before the switch was committed with synchronous=FULL: on the disk already.
    if (syncedLog) writeFileSync(syncedLog, String(syncWal().bytes));
    return;
  }
  if (m.op === 'close') {
    conn?.close();
    pin?.close();
    conn = pin = null;
    reply({ op: 'closed' });
    return;
  }
  try {
    const synced = syncWal();
    reply({ op: 'synced', gen: m.gen, ...synced });
    const written = m.gen - lastRestart.gen;
    if (conn && pin && (written >= checkpointRows || (written > 0 && Date.now() - lastRestart.at >= CHECKPOINT_IDLE_MS))) {
      const done = checkpoint(conn, pin);
      if (done.restarted) lastRestart = { at: Date.now(), gen: m.gen };
      reply({ op: 'checkpointed', ...done });
    }
  } catch (err) {
    reply({ op: 'failed', gen: m.gen, error: err instanceof Error ? err.message : String(err) });
  }
};
