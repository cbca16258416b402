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
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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

/** Compares the ledger's clock with the highest this node saw; marks a rewound ledger restored. Then keeps the file current. True when it was rewound. */
export async function checkLedgerRewind(db: Store, dataDir: string, log: Logger, now: Date = new Date()): Promise<boolean> {
  const path = join(dataDir, FILE);
  const id = await ledgerId(db, randomUUID());
  const clock = await readLedgerClock(db);
  const seen = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Seen) : null;
  const rewound = seen !== null && seen.ledger === id && BigInt(seen.clock) > clock;
  if (rewound) {
    if (!(await restoredMarker(db))) await markRestored(db, { backup_created_at: `unknown (the ledger's clock is ${clock}; this node saw ${seen.clock})`, restored_at: now.toISOString() });
    // Counting on from what this node saw: the next start compares against a clock that moved past it.
    await raiseLedgerClock(db, BigInt(seen.clock));
    log.warn('the ledger was put back in time (a point-in-time restore?): treated as restored, no signing session from before it completes', { ledger_clock: clock.toString(), seen_clock: seen.clock });
  }
  let highest = clock;
  let pending = false;
  // Written after each step commits, once a turn however many steps committed in it; never lowered.
  watchLedgerClock(db, (step) => {
    if (step <= highest) return;
    highest = step;
    if (pending) return;
    pending = true;
    setImmediate(() => {
      pending = false;
      writeFileSync(`${path}.tmp`, `${JSON.stringify({ ledger: id, clock: highest.toString() } satisfies Seen)}\n`, { mode: 0o600 });
      renameSync(`${path}.tmp`, path);
    });
  });
  await stepLedgerClock(db);
  return rewound;
}
