/**
 * A refresh commit proves the caller holds the refreshed agent share, through the real daemon, the
 * real client and the real simnet: whoever holds only a wallet's bot API key (no key share) cannot
 * switch the daemon to a refreshed key nobody holds — the agent would never sign again, and with no
 * recovery kit the funds would be stuck — nor get the wallet's next API key from it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ApiClient } from '../../src/client/api.ts';
import { refreshKey } from '../../src/client/recovery-refresh.ts';
import { getWallet } from '../../src/db/wallets.ts';
import { decodeSecretState } from '../../src/frost/codec.ts';
import { AGENT_ID } from '../../src/frost/ids.ts';
import { refreshContribution } from '../../src/frost/recovery-share.ts';
import { Secret } from '../../src/frost/secret.ts';
import { proveShare } from '../../src/frost/share-proof.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import { decodePublicPackage } from '../../src/frost/wire.ts';
import { bytesToHex } from '@noble/hashes/utils.js';
import { errorOf } from '../helpers/errors.ts';
import { payFromDisk, profileOnDisk, saveTo } from '../helpers/profile-disk.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let bob: Agent;

beforeAll(async () => {
  world = await startWorld();
  bob = await world.agent('Bob', { claimBy: 'bob-owner@example.com' });
  await world.fund(bob.address, 0n);
});
afterAll(async () => {
  await world?.stop();
});


/** A proof for `refreshId` made with a random scalar in place of the refreshed agent share. */
function forgedProof(walletId: string, refreshId: string, publicPackage: unknown): string {
  const key = new Secret<KeyPackage>({ public: decodePublicPackage(publicPackage), secret: { identifier: AGENT_ID, signingShare: Uint8Array.from(refreshContribution()) } });
  return bytesToHex(proveShare(key, { walletId, refreshId }));
}

describe('a refresh commit without the agent share (the bot API key alone)', () => {
  test('init then a commit with the matching public package and a forged proof, or none, is refused: the daemon keeps its key, the agent pays with its old share and API key and refreshes afterwards', async () => {
    const kate = await world.agent('Kate', { claimBy: 'kate-owner@example.com' });
    await world.fund(kate.address, 20_000_000n);
    const walletBefore = (await getWallet(world.services.db, kate.walletId))!;
    const profileBefore = profileOnDisk(kate);

    // The thief has the bot API key only: the init's answer gives the refreshed public package.
    const thief = new ApiClient(kate.api.baseUrl, profileBefore.api_key);
    const init = await thief.call<{ refresh_id: string; public_package: unknown; api_key: string }>('bot', 'recovery_refresh_init', { contribution: bytesToHex(refreshContribution()) });
    const none = await errorOf(thief.call('bot', 'recovery_refresh_commit', { refresh_id: init.refresh_id, public_package: init.public_package }));
    expect(none.errorCode).toBe('VALIDATION_ERROR');
    expect(none.message).toContain('share_proof');
    const forged = await errorOf(thief.call('bot', 'recovery_refresh_commit', { refresh_id: init.refresh_id, public_package: init.public_package, share_proof: forgedProof(kate.walletId, init.refresh_id, init.public_package) }));
    expect(forged.errorCode).toBe('VALIDATION_ERROR');
    expect(forged.message).toContain('share_proof');
    expect(forged.message).toContain('does not prove');
    expect(forged.howToFix).toBeTruthy();

    // Nothing changed: the daemon's key and API key, and the key the init offered never works.
    const walletAfter = (await getWallet(world.services.db, kate.walletId))!;
    expect(walletAfter.public_package).toBe(walletBefore.public_package);
    expect(walletAfter.server_key).toEqual(walletBefore.server_key);
    expect((await errorOf(new ApiClient(kate.api.baseUrl, init.api_key).call('bot', 'balance'))).errorCode).toBe('UNAUTHORIZED');
    const audit = await (await world.ownerClient('kate-owner@example.com')).call<any>('owner', 'audit_log', { wallet_id: kate.walletId });
    expect(audit.items.map((i: any) => i.kind)).not.toContain('key.refreshed');

    // The real agent, old share and old API key, pays on chain; then its own refresh goes through.
    expect(await payFromDisk(kate, bob.username)).toBe('completed');
    expect(profileOnDisk(kate).api_key).toBe(profileBefore.api_key);
    const done = await refreshKey(new ApiClient(kate.api.baseUrl, profileBefore.api_key), profileOnDisk(kate), saveTo(kate));
    expect(done).toMatchObject({ status: 'committed', api_key_rotated: true });
    expect(profileOnDisk(kate).public_package).toEqual(JSON.parse((await getWallet(world.services.db, kate.walletId))!.public_package));
    expect(await payFromDisk(kate, bob.username)).toBe('completed');
  }, 90_000);

  test("a replayed commit of a committed refresh answers as before with the agent's proof, and is refused with another", async () => {
    const liam = await world.agent('Liam', { claimBy: 'liam-owner@example.com' });
    await world.fund(liam.address, 20_000_000n);
    const done = await refreshKey(liam.api, profileOnDisk(liam), saveTo(liam));
    const profile = profileOnDisk(liam);
    const api = new ApiClient(liam.api.baseUrl, profile.api_key);
    const key = new Secret(decodeSecretState(Buffer.from(profile.key_package, 'base64')) as KeyPackage);
    const params = { refresh_id: done.refresh_id, public_package: profile.public_package };
    const proof = bytesToHex(proveShare(key, { walletId: liam.walletId, refreshId: done.refresh_id }));
    expect(await api.call<any>('bot', 'recovery_refresh_commit', { ...params, share_proof: proof })).toMatchObject({ status: 'committed', current: true });
    const wrong = await errorOf(api.call('bot', 'recovery_refresh_commit', { ...params, share_proof: forgedProof(liam.walletId, done.refresh_id, profile.public_package) }));
    expect(wrong.errorCode).toBe('VALIDATION_ERROR');
    // A proof of this share for another refresh id does not count for this one.
    const elsewhere = bytesToHex(proveShare(key, { walletId: liam.walletId, refreshId: `kr_${'0'.repeat(26)}` }));
    expect((await errorOf(api.call('bot', 'recovery_refresh_commit', { ...params, share_proof: elsewhere }))).errorCode).toBe('VALIDATION_ERROR');
    expect(await payFromDisk(liam, bob.username)).toBe('completed');
  }, 90_000);
});
