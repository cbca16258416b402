/**
 * The ledger's checkpoint thread (durability.ts): copies the WAL into the database and starts the
 * WAL over, on a thread of its own, so that neither the event loop nor the syncs that answers
 * wait for (sync-worker.ts) ever wait for a checkpoint. Told of every sync's generation; answers
 * with each checkpoint it made.
 *
 * Starting the WAL over is a sync too: after a checkpoint has copied the whole WAL into the
 * database, the next write rewrites the WAL's header and syncs it (SQLite does, whatever
 * `synchronous` says, so that a reordered write cannot corrupt the file). That write must be this
 * thread's, never the event loop's, so a checkpoint runs as one sequence here:
 *
 * 1. `pin` opens a read snapshot. SQLite starts the WAL over only when it can lock every reader's
 *    mark, so while the snapshot is held no other connection's write can (it appends instead).
 * 2. `conn` checkpoints PASSIVE (never waits for the writer). When it could not copy everything
 *    (something was written meanwhile), the pin is dropped and a later sync tries again: no write
 *    can start the WAL over while part of it is not copied.
 * 3. `conn` takes the write lock, drops the pin, and rewrites the header's application_id (a
 *    no-op change): when nothing was written since the checkpoint, this write starts the WAL over
 *    and syncs the header here; otherwise it appends. Either way the WAL then holds a frame not
 *    yet copied, so no other write can start it over until the next checkpoint.
 *
 * The event loop may wait for that short write lock (a commit at the same moment), but never syncs.
 * Each start-over is counted, and so is one this thread did not make (another process's
 * checkpoint). A checkpoint is due once CHECKPOINT_ROWS rows were written since the last
 * start-over, or after a quiet minute; a try that did not start the WAL over (or failed) is made
 * again RETRY_MS later, at the next sync: each try copies what it can, so the next has little left.
 * Only when commits never pause for as long as a try takes is one forced (forcedCheckpoint).
 */
import { Database } from 'bun:sqlite';
import { closeSync, openSync, readSync } from 'node:fs';
import { rewriteApplicationId } from './header-write.ts';

declare const self: Worker;

/**
 * Rows written since the WAL last started over that make a checkpoint due: about 20 MiB of WAL under
 * payments (a payment's commits write ~10 pages). The WAL file keeps its largest length (cutting it
 * back would happen under the write lock, a truncation the event loop would wait for).
 */
const CHECKPOINT_ROWS = 2_000;
/** …or this long after the last one, when anything was written. */
const CHECKPOINT_IDLE_MS = 60_000;
/** The wait before trying again when the last try did not start the WAL over (or failed). */
const RETRY_MS = 10;
/** Tries in a row that did not start the WAL over before a forced checkpoint (a few seconds of them). */
const STARVED_TRIES = 300;

let conn: Database | null = null;
let pin: Database | null = null;
let walPath = '';
let checkpointRows = CHECKPOINT_ROWS;
let retryMs = RETRY_MS;
let starvedTries = STARVED_TRIES;
let failedTries = 0;
/** Tests only: a pause between each two steps of a checkpoint, where commits can slip in. */
let holdMs = 0;
const hold = () => {
  if (holdMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, holdMs);
};
let lastRestart = { at: Date.now(), gen: 0 };
let lastTry = 0;
/** The WAL header's salt-1 as last seen: every start-over changes it. */
let knownSalt: number | null = null;

type Reply = { op: 'checkpointed'; restarted: boolean; foreignRestart: boolean; forced?: boolean; error?: string } | { op: 'foreign' } | { op: 'closed' };
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

type Outcome = { restarted: boolean; foreignRestart: boolean };

/** The sequence of the module comment: whether the WAL started over here, and whether it had elsewhere before. */
function checkpoint(c: Database, p: Database): Outcome {
  p.run('BEGIN');
  try {
    // The first read opens the snapshot, on a reader's mark of the WAL.
    p.query('SELECT 1 FROM sqlite_schema LIMIT 1').get();
    hold();
    // Read after the snapshot: a commit between the two would leave frames past it, so the
    // checkpoint below could not copy everything; one after it changes the version.
    const version = dataVersion(c);
    hold();
    const done = c.query<{ log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(PASSIVE)').get();
    hold();
    const foreignRestart = startedOverElsewhere(currentSalt());
    // Not all of it copied (written meanwhile): no write can start the WAL over; try again soon.
    if (!done || done.log <= 0 || done.checkpointed < done.log) return { restarted: false, foreignRestart };
    // A commit since the snapshot (the checkpoint's count predates it) left frames it could not
    // copy: the write below could only append, and would hold the write lock for nothing. Returning
    // is safe only for that reason: a WAL copied to its end must get the write below.
    if (dataVersion(c) !== version) return { restarted: false, foreignRestart };
    hold();
    const written = startOver(c, p);
    return { restarted: written.restarted, foreignRestart: written.foreignRestart || foreignRestart };
  } finally {
    if (p.inTransaction) p.run('COMMIT');
  }
}

/**
 * When commits never pause for as long as a checkpoint takes (a slow disk under steady load), the
 * pinned sequence never finds the WAL wholly copied and the WAL would only grow: after
 * STARVED_TRIES such tries, SQLite's RESTART checkpoint holds new writes back until it has copied
 * everything (the event loop waits for that one checkpoint), and the write follows at once.
 */
function forcedCheckpoint(c: Database): Outcome {
  c.query('PRAGMA wal_checkpoint(RESTART)').get();
  return startOver(c, null);
}

/** Step 3: under the write lock (then the pin, if any, let go), the write that starts a wholly copied WAL over. */
function startOver(c: Database, p: Database | null): Outcome {
  c.run('BEGIN IMMEDIATE');
  let foreignRestart: boolean;
  let before: number | null;
  try {
    p?.run('COMMIT');
    // Read under the write lock: from here to this write, nobody else writes.
    foreignRestart = startedOverElsewhere(currentSalt());
    before = knownSalt;
    rewriteApplicationId(c);
    c.run('COMMIT');
  } catch (err) {
    if (c.inTransaction) c.run('ROLLBACK');
    throw err;
  }
  knownSalt = currentSalt();
  return { restarted: knownSalt !== before, foreignRestart };
}

/** Changes whenever another connection has committed since this one last asked. */
function dataVersion(c: Database): number {
  return Number(c.query<{ data_version: number | bigint }, []>('PRAGMA data_version').get()!.data_version);
}

/** Whether a checkpoint is due after the sync of generation `gen`. */
function due(gen: number): boolean {
  const written = gen - lastRestart.gen;
  if (written <= 0 || Date.now() - lastTry < retryMs) return false;
  return written >= checkpointRows || Date.now() - lastRestart.at >= CHECKPOINT_IDLE_MS;
}

self.onmessage = (event: MessageEvent<{ op: 'open'; path: string; gen: number; checkpointRows?: number; retryMs?: number; starvedTries?: number; holdMs?: number } | { op: 'written'; gen: number } | { op: 'close' }>) => {
  const m = event.data;
  if (m.op === 'open') {
    walPath = `${m.path}-wal`;
    lastRestart.gen = m.gen;
    checkpointRows = m.checkpointRows ?? CHECKPOINT_ROWS;
    retryMs = m.retryMs ?? RETRY_MS;
    starvedTries = m.starvedTries ?? STARVED_TRIES;
    holdMs = m.holdMs ?? 0;
    conn = new Database(m.path);
    pin = new Database(m.path);
    for (const db of [conn, pin]) {
      db.run('PRAGMA busy_timeout = 5000');
      // Checkpoints only as checkpoint() makes them: an automatic one after its write, the snapshot
      // already let go, could copy everything and leave the start-over to the event loop.
      db.run('PRAGMA wal_autocheckpoint = 0');
    }
    knownSalt = currentSalt();
    return;
  }
  if (m.op === 'close') {
    conn?.close();
    pin?.close();
    conn = pin = null;
    reply({ op: 'closed' });
    return;
  }
  if (!conn || !pin) return;
  if (!due(m.gen)) {
    if (startedOverElsewhere(currentSalt())) reply({ op: 'foreign' });
    return;
  }
  const forced = failedTries >= starvedTries;
  try {
    const done = forced ? forcedCheckpoint(conn) : checkpoint(conn, pin);
    if (done.restarted || done.foreignRestart) {
      lastRestart = { at: Date.now(), gen: m.gen };
      failedTries = 0;
    } else {
      lastTry = Date.now();
      failedTries++;
    }
    reply({ op: 'checkpointed', ...done, forced });
  } catch (err) {
    lastTry = Date.now();
    failedTries++;
    reply({ op: 'checkpointed', restarted: false, foreignRestart: false, forced, error: err instanceof Error ? err.message : String(err) });
  }
};
