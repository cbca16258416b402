import { describe, expect, test } from 'bun:test';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ProfileError, ProfileStore, type ProfileData } from '../../src/client/profile.ts';
import { pinsFromPing, recordPaid } from '../../src/client/custody.ts';
import { tempDir } from '../helpers/services.ts';

const data: ProfileData = {
  version: 1,
  server_url: 'http://127.0.0.1:8787/v1',
  wallet_id: 'wal_x',
  username: 'bot-1',
  address: 'addr',
  network: 'simnet',
  api_key: 'wallet_bot_SECRETSECRETSECRET',
  key_package: 'S0VZUEFDS0FHRQ==',
  public_package: { group_public_key: '00', commitments: [], verifying_shares: {} },
  created_at: '2026-01-01T00:00:00.000Z',
};

describe('profile store', () => {
  test('saves atomically with mode 0600 in a 0700 home and loads back', () => {
    const store = new ProfileStore(join(tempDir(), 'home'));
    const path = store.save('default', data);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(store.home).mode & 0o777).toBe(0o700);
    expect(store.load('default')).toEqual(data);
    expect(readdirSync(store.home)).toEqual(['default.json']);
    expect(store.list()).toEqual(['default']);
  });

  test('refuses to overwrite an existing profile', () => {
    const store = new ProfileStore(join(tempDir(), 'home'));
    store.save('p', data);
    expect(() => store.save('p', data)).toThrow(ProfileError);
  });

  test('with a passphrase the file holds no secret in clear and needs the passphrase to load', () => {
    const home = join(tempDir(), 'home');
    const path = new ProfileStore(home, 'correct horse').save('enc', data);
    const raw = readFileSync(path, 'utf8');
    expect(raw).not.toContain(data.api_key);
    expect(raw).not.toContain(data.key_package);
    expect(new ProfileStore(home, 'correct horse').load('enc')).toEqual(data);
    expect(() => new ProfileStore(home, 'wrong').load('enc')).toThrow(/wrong AGENT_WALLET_PASSPHRASE/);
    expect(() => new ProfileStore(home).load('enc')).toThrow(/encrypted/);
  });

  test('the pins sit in the same sealed file: with a passphrase, no pinned address in clear; a rewrite keeps them', () => {
    const home = join(tempDir(), 'home');
    const pins = pinsFromPing('simnet', { network: 'simnet', usdc_mint: 'm', treasury: 'TreasuryAddr', fee_payer: 'FeePayerAddr', fees: { payment_bps: 50, payment_min: 0.01, account_setup_fee: 0.25, withdrawal_fee: 0.1 } }, new Date(), 'registration');
    recordPaid(pins.payees, 'bob', 'BobPinnedAddress', 'wallet', new Date());
    const store = new ProfileStore(home, 'correct horse');
    const path = store.save('enc', { ...data, custody: pins });
    const raw = readFileSync(path, 'utf8');
    for (const secret of ['BobPinnedAddress', 'TreasuryAddr', 'FeePayerAddr']) expect(raw).not.toContain(secret);
    const loaded = store.load('enc');
    recordPaid(loaded.custody!.payees, 'bob', 'BobPinnedAddress', 'wallet', new Date());
    store.save('enc', loaded, { overwrite: true });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(store.load('enc').custody?.payees.bob).toMatchObject({ address: 'BobPinnedAddress', count: 2 });
  });

  test('refuses profile names that could escape the home directory', () => {
    const store = new ProfileStore(join(tempDir(), 'home'));
    for (const name of ['../x', 'a/b', '', '.hidden']) expect(() => store.path(name)).toThrow(ProfileError);
  });
});
