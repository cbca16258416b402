import { describe, expect, test } from 'bun:test';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { SecretFileError, loadFeePayer, loadMasterKey } from '../src/secret-files.ts';
import { tempDir } from './helpers/services.ts';

describe('secret files', () => {
  test('first start generates a 0600 master key and keeps it across loads', () => {
    const dir = tempDir();
    const k1 = loadMasterKey(dir);
    expect(k1.length).toBe(32);
    expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(loadMasterKey(dir)).toEqual(k1);
  });

  test('a master key readable by group or others refuses start and says how to fix it', () => {
    const dir = tempDir();
    loadMasterKey(dir);
    chmodSync(join(dir, 'master.key'), 0o644);
    expect(() => loadMasterKey(dir)).toThrow(SecretFileError);
    expect(() => loadMasterKey(dir)).toThrow(/chmod 600/);
  });

  test('the fee payer is a Solana CLI keypair whose address matches its secret', () => {
    const dir = tempDir();
    const fp = loadFeePayer(dir, 'fee-payer.json');
    const bytes = JSON.parse(readFileSync(join(dir, 'fee-payer.json'), 'utf8')) as number[];
    expect(bytes.length).toBe(64);
    expect(statSync(join(dir, 'fee-payer.json')).mode & 0o777).toBe(0o600);
    expect(Buffer.from(ed25519.getPublicKey(new Uint8Array(bytes.slice(0, 32))))).toEqual(Buffer.from(bytes.slice(32)));
    expect(loadFeePayer(dir, 'fee-payer.json').address).toBe(fp.address);
  });

  test('a loose or corrupt fee-payer file is refused', () => {
    const dir = tempDir();
    loadFeePayer(dir, 'fee-payer.json');
    chmodSync(join(dir, 'fee-payer.json'), 0o640);
    expect(() => loadFeePayer(dir, 'fee-payer.json')).toThrow(/chmod 600/);
    writeFileSync(join(dir, 'bad.json'), '[1,2,3]', { mode: 0o600 });
    expect(() => loadFeePayer(dir, 'bad.json')).toThrow(/64 numbers/);
  });
});
