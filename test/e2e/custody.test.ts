/**
 * Custody end to end: the real CLI against a real daemon process on simnet, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { getAddressEncoder } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { openDatabase } from '../../src/db/open.ts';
import { markClaimed } from '../../src/db/wallets.ts';
import { runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemonProcess();
});
afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
});

/** Stands in for the owner's claim (issue 5 adds the real flow): the operator's view of the same DB file. */
async function claim(walletId: string): Promise<void> {
  const db = openDatabase(join(daemon.dataDir, 'wallet.db'), { network: 'simnet' });
  try {
    await db.run("INSERT OR IGNORE INTO owners (owner_id, email, created_at) VALUES ('own_test', 'owner@example.com', 1)");
    await db.transaction(async () => await markClaimed(db, walletId, 'own_test', Date.now()));
  } finally {
    db.close();
  }
}

describe('agent CLI against a running daemon', () => {
  const home = join(tempDir('aw-home-'), 'agent');
  const cli = (...args: string[]) => runCli([...args, '--server', daemon.url, '--home', home, '--json']);

  test('register writes a 0600 profile in a 0700 home; info shows the claim; balance needs the claim first', async () => {
    const reg = await cli('register', '--name', 'Research Agent', '--owner-email', 'Owner@Example.com', '--agent-model', 'claude');
    expect(reg.code).toBe(0);
    expect(reg.json.api_key).toMatch(/^wallet_bot_/);
    expect(reg.json.status).toBe('unclaimed');
    expect(reg.stderr).toContain('DKG');
    const profilePath = join(home, 'default.json');
    expect(statSync(profilePath).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    const profile = JSON.parse(readFileSync(profilePath, 'utf8'));
    expect(profile.address).toBe(reg.json.address);

    const info = await cli('info');
    expect(info.code).toBe(0);
    expect(info.json).toMatchObject({ wallet_id: reg.json.wallet_id, status: 'unclaimed', owner_email: 'owner@example.com', claim_code: reg.json.claim_code, agent_model: 'claude' });

    const balance = await cli('balance');
    expect(balance.code).toBe(1);
    expect(balance.json.error).toMatchObject({ code: 'WALLET_NOT_CLAIMED', claim_url: reg.json.claim_url, claim_code: reg.json.claim_code });
    expect(balance.json.error.how_to_fix.length).toBeGreaterThan(0);

    const renamed = await cli('rename', 'Research Agent 2');
    expect(renamed.json.name).toBe('Research Agent 2');
    const owner = await cli('set-owner', 'new-owner@example.com');
    expect(owner.json.owner_email).toBe('new-owner@example.com');
    const bad = await cli('set-owner', 'not-an-email');
    expect(bad.code).toBe(1);
    expect(bad.json.error.code).toBe('VALIDATION_ERROR');
  });

  test('a second register into the same profile is a usage error (exit 2), nothing overwritten', async () => {
    const before = readFileSync(join(home, 'default.json'), 'utf8');
    const again = await cli('register', '--name', 'Other');
    expect(again.code).toBe(2);
    expect(readFileSync(join(home, 'default.json'), 'utf8')).toBe(before);
  });

  test('a wrong API key exits 4 (not authenticated)', async () => {
    const h = join(tempDir('aw-home-'), 'x');
    await runCli(['register', '--name', 'Bot', '--server', daemon.url, '--home', h, '--json']);
    const path = join(h, 'default.json');
    const p = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...p, api_key: `wallet_bot_${'1'.repeat(44)}` }), { mode: 0o600 });
    const res = await runCli(['info', '--server', daemon.url, '--home', h, '--json']);
    expect(res.code).toBe(4);
    expect(res.json.error.code).toBe('UNAUTHORIZED');
  });

  test('a FROST signature made through the real HTTP round trip verifies against the wallet address', async () => {
    const { response, proof } = await registerWallet(new ApiClient(daemon.url), { name: 'Signer' });
    const address = new Uint8Array(getAddressEncoder().encode(String(response.address) as never));
    expect(ed25519.verify(proof.signature, proof.message, address)).toBe(true);
    const other = proof.message.slice();
    other[other.length - 2] = other[other.length - 2]! ^ 1;
    expect(ed25519.verify(proof.signature, other, address)).toBe(false);
  });

  test('export from one home and import into a fresh one; the 6th key release in 24 h is refused; a tampered header is refused', async () => {
    const homeA = join(tempDir('aw-home-'), 'a');
    const reg = await runCli(['register', '--name', 'Exporter', '--server', daemon.url, '--home', homeA, '--json']);
    await claim(reg.json.wallet_id);
    const file = join(tempDir('aw-wlt-'), 'wallet.wlt');
    const exp = await runCli(['export', file, '--server', daemon.url, '--home', homeA, '--json']);
    expect(exp.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const content = readFileSync(file, 'utf8');
    const original = JSON.parse(readFileSync(join(homeA, 'default.json'), 'utf8'));
    expect(content).not.toContain(original.api_key);
    expect(content).not.toContain(original.key_package);

    const tampered = join(tempDir('aw-wlt-'), 'tampered.wlt');
    writeFileSync(tampered, JSON.stringify({ ...JSON.parse(content), address: reg.json.wallet_id === 'x' ? 'y' : '11111111111111111111111111111111' }));
    const refused = await runCli(['import', tampered, '--home', join(tempDir('aw-home-'), 't'), '--json']);
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toContain('refused');

    const homeB = join(tempDir('aw-home-'), 'b');
    const imp = await runCli(['import', file, '--home', homeB, '--json']);
    expect(imp.code).toBe(0);
    expect(imp.json.wallet_id).toBe(reg.json.wallet_id);
    const imported = JSON.parse(readFileSync(join(homeB, 'default.json'), 'utf8'));
    expect(imported.key_package).toBe(original.key_package);
    expect(imported.api_key).toBe(original.api_key);
    const info = await runCli(['balance', '--home', homeB, '--json']);
    expect(info.code).toBe(0);

    // The imported profile signs: it pays another wallet through the FROST round.
    await runCli(['admin', 'faucet', reg.json.address, '10', '--data-dir', daemon.dataDir]);
    const payee = await runCli(['register', '--name', 'Payee', '--server', daemon.url, '--home', join(tempDir('aw-home-'), 'p'), '--json']);
    const paid = await runCli(['pay', payee.json.username, '2', '--home', homeB, '--json']);
    expect(paid.code).toBe(0);
    expect(paid.json.status).toBe('completed');

    // Releases so far: the tampered try (1) and the import (2); three more are allowed, the 6th is refused.
    const api = new ApiClient(daemon.url);
    const f = JSON.parse(content);
    for (let i = 0; i < 3; i++) await api.call('bot', 'wallet_import_key', { export_id: f.export_id, import_token: f.import_token });
    const sixth = await runCli(['import', file, '--home', join(tempDir('aw-home-'), 'c'), '--json']);
    expect(sixth.code).toBe(1);
    expect(sixth.json.error.code).toBe('RATE_LIMITED');
  });
});
