/**
 * The ledger's disk thread (durability.ts): fdatasyncs the WAL when asked and answers with the
 * generation the sync covered, or the error. It does nothing else, so an effect waiting for its
 * commit to be durable waits for one fdatasync, never behind a checkpoint (checkpoint-worker.ts).
 */
import { closeSync, fdatasyncSync, fstatSync, openSync, writeFileSync } from 'node:fs';

declare const self: Worker;

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
    // Everything before the switch was committed with synchronous=FULL: on the disk already.
    if (syncedLog) writeFileSync(syncedLog, String(syncWal()));
    return;
  }
  if (m.op === 'close') {
    self.postMessage({ op: 'closed' });
    return;
  }
  try {
    self.postMessage({ op: 'synced', gen: m.gen, bytes: syncWal() });
  } catch (err) {
    self.postMessage({ op: 'failed', gen: m.gen, error: err instanceof Error ? err.message : String(err) });
  }
};
