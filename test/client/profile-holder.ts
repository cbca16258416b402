/**
 * A profile writer that dies holding the lock (test/client/profile-race.test.ts kills it): it takes
 * the profile's lock through the store, shows it is inside with HOME/holding-PID, waits a moment,
 * and writes HOME/violation when another holder is shown inside too (two processes in the lock at
 * once). Then it says so by creating READY and waits there until killed.
 * argv: HOME READY
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProfileStore } from '../../src/client/profile.ts';

const [home, ready] = process.argv.slice(2) as [string, string];
const store = new ProfileStore(home, process.env.AGENT_WALLET_PASSPHRASE || undefined);
store.update('default', () => {
  const mine = `holding-${process.pid}`;
  writeFileSync(join(home, mine), '');
  // Long enough that two holders inside at once each see the other's mark.
  Bun.sleepSync(20);
  const others = readdirSync(home).filter((f) => f.startsWith('holding-') && f !== mine);
  if (others.length > 0) writeFileSync(join(home, 'violation'), `${process.pid} inside with ${others.join(', ')}\n`, { flag: 'a' });
  writeFileSync(ready, '');
  Bun.sleepSync(60_000);
});
