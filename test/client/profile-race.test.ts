/**
 * Two processes changing one profile (the CLI beside a long-running MCP server) lose nothing
 * (issue 24.2): two real writer processes, each with its own stale copy, race 50 pins and 50
 * intents each into the same file; every one is there afterwards, and intents each dropped stay
 * dropped. A writer killed while holding the lock does not block the next one.
 */
import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { ProfileStore } from '../../src/client/profile.ts';
import { pinsFromPing } from '../../src/client/custody.ts';
import { tempDir } from '../helpers/services.ts';

const WRITER = join(import.meta.dir, 'profile-writer.ts');

function profileHome(passphrase?: string): { home: string; store: ProfileStore } {
  const home = tempDir('aw-race-');
  const store = new ProfileStore(home, passphrase);
  const ping = { network: 'simnet', usdc_mint: 'M', treasury: 'T', fee_payer: 'F', fees: { payment_bps: 0, payment_min: 0, account_setup_fee: 0, withdrawal_fee: 0 } };
  store.save('default', {
    version: 1,
    server_url: 'http://127.0.0.1:1/v1',
    wallet_id: 'wal_race',
    username: 'racer',
    address: 'Addr',
    network: 'simnet',
    api_key: 'wallet_bot_x',
    key_package: '',
    public_package: {} as never,
    created_at: new Date().toISOString(),
    custody: pinsFromPing('simnet', ping, new Date(), 'registration'),
  });
  return { home, store };
}

async function race(home: string, env: Record<string, string> = {}) {
  const run = (name: string) => Bun.spawn([process.execPath, WRITER, home, name, '50'], { env: { ...process.env, ...env }, stdout: 'inherit', stderr: 'inherit' }).exited;
  expect(await Promise.all([run('a'), run('b')])).toEqual([0, 0]);
}

for (const passphrase of [undefined, 'a profile passphrase']) {
  test(`two writer processes racing 50 times each lose no pin and no intent, and resurrect no dropped intent${passphrase ? ' (encrypted profile)' : ''}`, async () => {
    const { home, store } = profileHome(passphrase);
    await race(home, passphrase ? { AGENT_WALLET_PASSPHRASE: passphrase } : {});
    const pins = store.load('default').custody!;
    for (const name of ['a', 'b']) {
      for (let i = 0; i < 50; i++) {
        expect(pins.payees[`${name}-payee-${i}`]?.address).toBe(`Addr${name}${i}`);
        expect(pins.intents[`tx_${name}_${i}`]).toMatchObject({ amount: '1' });
      }
    }
    expect(Object.keys(pins.payees)).toHaveLength(100);
    expect(Object.keys(pins.intents)).toHaveLength(100);
  }, 60_000);
}

test('a lock left by a killed writer is taken over at once', () => {
  const { home, store } = profileHome();
  const path = join(home, 'default.json');
  const dead = Bun.spawnSync([process.execPath, '-e', 'console.log(process.pid)']).stdout.toString().trim();
  writeFileSync(`${path}.lock`, dead);
  const started = Date.now();
  store.update('default', (p) => {
    p.custody!.max_amount = '7';
  });
  expect(Date.now() - started).toBeLessThan(1_000);
  expect(store.load('default').custody!.max_amount).toBe('7');
});
