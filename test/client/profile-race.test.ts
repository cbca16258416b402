/**
 * Two processes changing one profile (the CLI beside a long-running MCP server) lose nothing
 * (issue 24.2): two real writer processes, each with its own stale copy, race 50 pins and 50
 * intents each into the same file; every one is there afterwards, and intents each dropped stay
 * dropped. A writer killed while holding the lock does not block the next one, and writers killed
 * one after another while the two race make neither lose the other's entries.
 */
import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { ProfileStore } from '../../src/client/profile.ts';
import { pinsFromPing } from '../../src/client/custody.ts';
import { tempDir } from '../helpers/services.ts';

const WRITER = join(import.meta.dir, 'profile-writer.ts');
const HOLDER = join(import.meta.dir, 'profile-holder.ts');

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

/** Starts a writer that takes the lock and dies holding it (SIGKILL), once it holds it; false if `done` came first. */
async function killHolder(home: string, done: () => boolean): Promise<boolean> {
  const ready = join(home, `ready-${crypto.randomUUID()}`);
  const proc = Bun.spawn([process.execPath, HOLDER, home, ready], { stdout: 'inherit', stderr: 'inherit' });
  const deadline = Date.now() + 20_000;
  while (!existsSync(ready) && !done() && Date.now() < deadline) await Bun.sleep(1);
  const held = existsSync(ready);
  // Its mark goes first: the next holder may enter as soon as the kill releases the lock.
  rmSync(join(home, `holding-${proc.pid}`), { force: true });
  proc.kill('SIGKILL');
  await proc.exited;
  rmSync(ready, { force: true });
  return held;
}

/** Two writers racing 50 times each (with `killing`, writers dying while holding the lock meanwhile); returns how many died holding it. */
async function race(home: string, opts: { env?: Record<string, string>; killing?: boolean } = {}): Promise<number> {
  const run = (name: string) => Bun.spawn([process.execPath, WRITER, home, name, '50'], { env: { ...process.env, ...opts.env }, stdout: 'inherit', stderr: 'inherit' }).exited;
  let finished = false;
  const writers = Promise.all([run('a'), run('b')]).finally(() => {
    finished = true;
  });
  let killed = 0;
  // Several at a time, so each dead holder's lock is waited on by more than the two writers; at least 150 die.
  const killer = async () => {
    while (opts.killing && (!finished || killed < 150)) if (await killHolder(home, () => finished && killed >= 150)) killed++;
  };
  await Promise.all(Array.from({ length: 6 }, killer));
  expect(await writers).toEqual([0, 0]);
  return killed;
}

function expectEveryEntry(store: ProfileStore) {
  const pins = store.load('default').custody!;
  for (const name of ['a', 'b']) {
    for (let i = 0; i < 50; i++) {
      expect(pins.payees[`${name}-payee-${i}`]?.address).toBe(`Addr${name}${i}`);
      expect(pins.intents[`tx_${name}_${i}`]).toMatchObject({ amount: '1' });
    }
  }
  expect(Object.keys(pins.payees)).toHaveLength(100);
  expect(Object.keys(pins.intents)).toHaveLength(100);
}

for (const passphrase of [undefined, 'a profile passphrase']) {
  test(`two writer processes racing 50 times each lose no pin and no intent, and resurrect no dropped intent${passphrase ? ' (encrypted profile)' : ''}`, async () => {
    const { home, store } = profileHome(passphrase);
    await race(home, { env: passphrase ? { AGENT_WALLET_PASSPHRASE: passphrase } : {} });
    expectEveryEntry(store);
  }, 60_000);
}

test('writers killed one after another while holding the lock make neither of two racing writers lose an entry (no two take over a dead lock at once)', async () => {
  const { home, store } = profileHome();
  const killed = await race(home, { killing: true });
  expect(killed).toBeGreaterThan(0);
  // Each holder that entered while another was still inside (alive) wrote what it saw.
  expect(existsSync(join(home, 'violation')) ? readFileSync(join(home, 'violation'), 'utf8') : '').toBe('');
  expectEveryEntry(store);
}, 120_000);

test('a lock left by a killed writer is taken over at once', async () => {
  const { home, store } = profileHome();
  expect(await killHolder(home, () => false)).toBe(true);
  const started = Date.now();
  store.update('default', (p) => {
    p.custody!.max_amount = '7';
  });
  expect(Date.now() - started).toBeLessThan(1_000);
  expect(store.load('default').custody!.max_amount).toBe('7');
});
