/**
 * Catches a ledger put back in time before the daemon answers anything (DESIGN §10, §10.1): a
 * PostgreSQL point-in-time restore, a Litestream restore or an old copy of wallet.db started
 * without `admin restore` or `admin mark-restored`. The ledger's clock (src/db/ledger-clock.ts)
 * steps with every use of nonces or DKG secret state; this node keeps the highest value it saw in
 * its data dir. A ledger whose clock is behind it may hold nonces that already signed as unused: it
 * is marked restored, and the restore path closes every signing session from before and
 * reconciles with the chain.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { markRestored, restoredMarker } from '../db/backup.ts';
import { ledgerId, raiseLedgerClock, readLedgerClock, stepLedgerClock, watchLedgerClock } from '../db/ledger-clock.ts';
import type { Store } from '../db/store.ts';
import type { Logger } from '../log.ts';

const FILE = 'ledger-clock.json';

interface Seen {
  ledger: string;
  clock: string;
}

/** What this node saw, or null: none yet, or a file it cannot read (a torn write is a lost look, never a reason to stop). */
function readSeen(path: string, log: Logger): Seen | null {
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Seen;
  } catch (err) {
    log.warn('the ledger clock file cannot be read; it is written again', { path, error: (err as Error).message });
    return null;
  }
}

/** Writes `seen` so that a crash leaves the old file or the new one, on the disk. */
function writeSeen(path: string, seen: Seen): void {
  const fd = openSync(`${path}.tmp`, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(seen)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(`${path}.tmp`, path);
}

/**
 * Compares the ledger's clock with the highest this node saw; marks a rewound ledger restored.
 * Then keeps the file current: a step is written once its commit is on the disk (`durable`), so a
 * crash that loses a commit never leaves the file ahead of the ledger. True when it was rewound.
 */
export async function checkLedgerRewind(db: Store, dataDir: string, log: Logger, durable: () => Promise<void> | undefined = () => undefined, now: Date = new Date()): Promise<boolean> {
  const path = join(dataDir, FILE);
  const id = await ledgerId(db, randomUUID());
  const clock = await readLedgerClock(db);
  const seen = readSeen(path, log);
  const rewound = seen !== null && seen.ledger === id && BigInt(seen.clock) > clock;
  if (rewound) {
    if (!(await restoredMarker(db))) await markRestored(db, { backup_created_at: `unknown (the ledger's clock is ${clock}; this node saw ${seen.clock})`, restored_at: now.toISOString() });
    // Counting on from what this node saw: the next start compares against a clock that moved past it.
    await raiseLedgerClock(db, BigInt(seen.clock));
    log.warn('the ledger was put back in time (a point-in-time restore?): treated as restored, no signing session from before it completes', { ledger_clock: clock.toString(), seen_clock: seen.clock });
  }
  let highest = clock;
  let pending = false;
  // Writes the highest step committed so far once its commit is on the disk; steps that commit
  // meanwhile are written by the next round. Never lowered.
  const persist = async (): Promise<void> => {
    pending = true;
    const target = highest;
    try {
      await durable();
    } catch (err) {
      pending = false;
      log.warn('the ledger clock file waits for the next step: its commit was not confirmed on the disk', { error: (err as Error).message });
      return;
    }
    writeSeen(path, { ledger: id, clock: target.toString() });
    pending = false;
    if (highest > target) await persist();
  };
  watchLedgerClock(db, (step) => {
    if (step <= highest) return;
    highest = step;
    if (!pending) void persist();
  });
  await stepLedgerClock(db);
  return rewound;
}
