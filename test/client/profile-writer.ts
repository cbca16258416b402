/**
 * One writer of a shared profile, as a separate process (test/client/profile-race.test.ts runs two):
 * it loads the profile once — a long-running MCP server's stale copy — then records N payee pins and
 * N intents through the CLI's own saver, and drops an intent of its own after each one.
 * argv: HOME NAME N
 */
import { ProfileStore } from '../../src/client/profile.ts';
import { recordIntent, recordPaid } from '../../src/client/custody.ts';
import { updatePins } from '../../src/client/pins.ts';
import { saver } from '../../src/cli/custody-commands.ts';

const [home, name, n] = process.argv.slice(2) as [string, string, string];
const store = new ProfileStore(home, process.env.AGENT_WALLET_PASSPHRASE || undefined);
const profile = store.load('default');
const save = saver({ store, profileName: 'default' });
for (let i = 0; i < Number(n); i++) {
  updatePins(profile, save, (p) => {
    recordPaid(p.payees, `${name}-payee-${i}`, `Addr${name}${i}`, 'wallet', new Date());
    recordIntent(p, `tx_${name}_${i}`, { amount: '1', username: `${name}-payee-${i}` }, new Date());
    recordIntent(p, `tx_${name}_${i}_gone`, { amount: '2' }, new Date());
  });
  // Signed: the intent is dropped (a stale copy elsewhere must not bring it back).
  updatePins(profile, save, (p) => {
    delete p.intents[`tx_${name}_${i}_gone`];
  });
}
