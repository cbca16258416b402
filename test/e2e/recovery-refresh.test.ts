/**
 * Refreshing the wallet key (issue 25) through the real daemon and the real client: the address
 * stays and payments go on as before; a kit enrolled before no longer signs (refused before
 * anything is sent, and its share signs no valid signature with either refreshed share), the owner is
 * mailed to enroll again and a new enrollment works; a lying daemon is refused with nothing stored; a
 * crash between the two phases leaves both sides on one key; another wallet cannot commit it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { ApiClient } from '../../src/client/api.ts';
import { ProfileStore } from '../../src/client/profile.ts';
import { OwnerEnrollmentStore, agentEnroll, ownerFinishEnrollment, ownerStartEnrollment } from '../../src/client/recovery-enroll.ts';
import { openKit, readKit } from '../../src/client/recovery-kit.ts';
import { refreshCommitParams, refreshKey } from '../../src/client/recovery-refresh.ts';
import { pinsOf } from '../../src/client/pins.ts';
import { recoveryPair } from '../../src/client/recovery-sweep.ts';
import { AgentRound, completePay, confirmSignSubmit } from '../../src/client/sign.ts';
import { saver } from '../../src/cli/custody-commands.ts';
import { listMail } from '../../src/db/mail.ts';
import { getWallet } from '../../src/db/wallets.ts';
import { walletKeyPackage } from '../../src/frost/coordinator-dkg.ts';
import { decodeSecretState } from '../../src/frost/codec.ts';
import { commit } from '../../src/frost/party.ts';
import { OWNER_ID, ownerKeyPackage, recoveryAggregate, recoverySignShare, refreshKeyPackage } from '../../src/frost/recovery-share.ts';
import { proveShare } from '../../src/frost/share-proof.ts';
import { AggregateError } from '../../src/frost/rfc9591.ts';
import { Secret } from '../../src/frost/secret.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import { decodePublicPackage } from '../../src/frost/wire.ts';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { errorOf } from '../helpers/errors.ts';
import { runCli } from '../helpers/daemon.ts';
import { startLyingProxy, type LyingProxy } from '../helpers/lying-proxy.ts';
import { tempDir } from '../helpers/services.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

const PASSPHRASE = 'a long enough kit passphrase';
let world: World;
let alice: Agent;
let bob: Agent;
let proxy: LyingProxy;
let owner: ApiClient;
const ownerStore = new OwnerEnrollmentStore(tempDir('aw-refresh-owner-'));

beforeAll(async () => {
  world = await startWorld();
  ({ alice, bob } = await world.payerAndPayee(50_000_000n));
  owner = await world.ownerClient('owner@example.com');
  proxy = startLyingProxy(world.url);
});
afterAll(async () => {
  await proxy?.stop();
  await world?.stop();
});

const save = (a: Agent) => saver({ store: new ProfileStore(a.home), profileName: 'default' });
const fromDisk = (a: Agent) => new ProfileStore(a.home).load('default');

async function pay(a: Agent, amount: number): Promise<string> {
  const intent = await a.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount });
  return String((await confirmSignSubmit(a.api, a.profile, intent.transaction_id)).status);
}

/** A recovery pair's signature ({1, 3} or {2, 3}), aggregated and checked under the group key of `keys[0]`. */
function pairSignature(keys: [Secret<KeyPackage>, Secret<KeyPackage>], message: Uint8Array): Uint8Array {
  const rounds = keys.map((k) => ({ k, ...commit(k) }));
  const list = rounds.map((r) => r.commitments);
  const shares = Object.fromEntries(rounds.map((r) => [r.k.reveal().secret.identifier, recoverySignShare(r.k, r.nonces, list, message)]));
  return recoveryAggregate(keys[0].reveal().public, list, message, shares);
}

/** The owner lets the next refresh supersede the enrolled kit (none is needed while no kit is enrolled). */
const allowRefresh = (a: Agent) => owner.call('owner', 'recovery_refresh_allow', { wallet_id: a.walletId });

const daemonKey = async (a: Agent) => walletKeyPackage(world.services.masterKey, a.walletId, (await getWallet(world.services.db, a.walletId))!.server_key);
const agentKey = (a: Agent) => new Secret(decodeSecretState(Buffer.from(fromDisk(a).key_package, 'base64')) as KeyPackage);

async function enroll(a: Agent, name: string): Promise<string> {
  const started = await ownerStartEnrollment(owner, ownerStore, a.walletId);
  await agentEnroll(a.api, a.profile, started.code);
  const out = join(tempDir('aw-refresh-kit-'), name);
  await ownerFinishEnrollment(owner, ownerStore, started.enrollment_id, { passphrase: PASSPHRASE, out });
  return out;
}

describe('a refresh', () => {
  test('keeps the address and payments (client and CLI); the old kit signs with neither refreshed share, the owner is mailed to enroll again, and a new enrollment works', async () => {
    const kit = await enroll(alice, 'old.json');
    expect(await pay(alice, 1)).toBe('completed');
    const before = (await getWallet(world.services.db, alice.walletId))!;
    const oldShare = openKit(readKit(kit), PASSPHRASE);
    const message = new TextEncoder().encode('a sweep message');
    expect(pairSignature([await daemonKey(alice), oldShare], message)).toHaveLength(64);

    await allowRefresh(alice);
    const done = await refreshKey(alice.api, alice.profile, save(alice));
    expect(done).toMatchObject({ status: 'committed', address: alice.address, finished_pending: null });
    const after = (await getWallet(world.services.db, alice.walletId))!;
    expect(after.address).toBe(before.address);
    expect(after.public_package).not.toBe(before.public_package);
    expect(fromDisk(alice).key_package).toBe(alice.profile.key_package);
    expect(fromDisk(alice).pending_refresh).toBeUndefined();

    expect(await pay(alice, 1)).toBe('completed');
    const cli = await runCli(['pay', bob.username, '1', '--server', world.url, '--home', alice.home, '--json']);
    expect(cli.json.status).toBe('completed');

    // The old kit: off the key (no share for the new verifying share 3), refused before any sweep is built.
    const pub = decodePublicPackage(JSON.parse(after.public_package));
    expect(() => ownerKeyPackage(pub, new Secret(ed25519.Point.Fn.fromBytes(oldShare.reveal().secret.signingShare)))).toThrow(/refreshed since/);
    expect(() => recoveryPair(fromDisk(alice), readKit(kit), PASSPHRASE)).toThrow(/refreshed/);
    // Signing anyway, with the daemon's ({2, 3}) or the agent's ({1, 3}) refreshed share: no signature verifies under the group key.
    const stale = new Secret<KeyPackage>({ public: pub, secret: oldShare.reveal().secret });
    for (const helper of [await daemonKey(alice), agentKey(alice)]) {
      const err = (() => {
        try {
          pairSignature([helper, stale], message);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(AggregateError);
      expect((err as AggregateError).cheaters).toEqual([OWNER_ID]);
    }
    // The owner is told the kit no longer works.
    const mail = (await listMail(world.services.db, 200)).filter((m) => m.kind === 'recovery' && m.to_addr === 'owner@example.com');
    expect(mail).toHaveLength(1);
    expect(mail[0]!.subject).toContain('no longer works');
    expect(mail[0]!.body).toContain(readKit(kit).fingerprint);
    expect(await owner.call<any>('owner', 'recovery_status', { wallet_id: alice.walletId })).toMatchObject({ enrolled: false });
    const statuses = (await world.services.db.all('SELECT status FROM recovery_enrollments WHERE wallet_id = ?', alice.walletId)) as { status: string }[];
    expect(statuses.map((s) => s.status)).toContain('superseded');

    const fresh = await enroll(alice, 'new.json');
    expect(readKit(fresh).fingerprint).not.toBe(readKit(kit).fingerprint);
    expect(() => recoveryPair(fromDisk(alice), readKit(fresh), PASSPHRASE)).not.toThrow();
  }, 60_000);

  test('a payment whose signing round was open at the refresh: that round is refused, the agent signs it again with its refreshed share', async () => {
    const round = new AgentRound(alice.profile);
    const intent = await alice.api.call<Record<string, unknown>>('bot', 'pay', { to: bob.username, amount: 1, commitments: round.commitments });
    expect(typeof intent.sign_session_id).toBe('string');
    await allowRefresh(alice);
    await refreshKey(alice.api, alice.profile, save(alice));
    const stale = await errorOf(completePay(alice.api, alice.profile, intent, round));
    expect({ code: stale.errorCode, message: stale.message }).toEqual({ code: 'INVALID_STATUS', message: 'This signing session is closed or expired.' });
    expect(String((await confirmSignSubmit(alice.api, alice.profile, String(intent.transaction_id))).status)).toBe('completed');
  }, 60_000);

  test('an enrollment in progress is superseded with both reports dropped (they were of the old shares): the owner cannot finish it, a new one works', async () => {
    const started = await ownerStartEnrollment(owner, ownerStore, alice.walletId);
    await agentEnroll(alice.api, alice.profile, started.code);
    await refreshKey(alice.api, alice.profile, save(alice));
    const row = await world.services.db.get('SELECT status, daemon_report, agent_box FROM recovery_enrollments WHERE enrollment_id = ?', started.enrollment_id);
    expect(row).toEqual({ status: 'superseded', daemon_report: null, agent_box: null });
    const refused = await errorOf(ownerFinishEnrollment(owner, ownerStore, started.enrollment_id, { passphrase: PASSPHRASE, out: join(tempDir('aw-refresh-kit-'), 'k.json') }));
    expect({ code: refused.errorCode, message: refused.message }).toEqual({ code: 'INVALID_STATUS', message: 'This enrollment is superseded.' });
    const fresh = await enroll(alice, 'again.json');
    expect(() => recoveryPair(fromDisk(alice), readKit(fresh), PASSPHRASE)).not.toThrow();
  }, 60_000);

  test('a daemon that answers another key is refused: nothing is stored, the key is unchanged, payments go on', async () => {
    await allowRefresh(alice);
    const profileBefore = fromDisk(alice);
    const walletBefore = (await getWallet(world.services.db, alice.walletId))!;
    const lying = { ...alice, api: new ApiClient(proxy.url, alice.profile.api_key) };
    proxy.lie = (action, _p, data) => (action === 'recovery_refresh_init' ? { ...data, contribution: '07'.padEnd(64, '0') } : data);
    try {
      const err = await refreshKey(lying.api, alice.profile, save(alice)).catch((e: unknown) => e);
      expect((err as Error).name).toBe('CustodyCheckError');
    } finally {
      proxy.lie = null;
    }
    expect(fromDisk(alice)).toEqual(profileBefore);
    expect((await getWallet(world.services.db, alice.walletId))!.public_package).toBe(walletBefore.public_package);
    expect(await pay(alice, 1)).toBe('completed');
  }, 60_000);

  test("a daemon whose init answers no new bot API key is refused: nothing is stored, the key and the API key are unchanged, payments go on", async () => {
    await allowRefresh(alice);
    const profileBefore = fromDisk(alice);
    const walletBefore = (await getWallet(world.services.db, alice.walletId))!;
    const lying = new ApiClient(proxy.url, alice.profile.api_key);
    proxy.lie = (action, _p, data) => (action === 'recovery_refresh_init' ? { ...data, api_key: 'not-a-bot-key' } : data);
    try {
      const err = await refreshKey(lying, alice.profile, save(alice)).catch((e: unknown) => e);
      expect((err as Error).name).toBe('CustodyCheckError');
      expect((err as Error).message).toContain('no new bot API key');
    } finally {
      proxy.lie = null;
    }
    expect(fromDisk(alice)).toEqual(profileBefore);
    expect((await getWallet(world.services.db, alice.walletId))!.public_package).toBe(walletBefore.public_package);
    expect(await pay(alice, 1)).toBe('completed');
  }, 60_000);

  test('a crash between the phases: before the commit both keep the old key; the next refresh finishes or drops it', async () => {
    // The agent stored its refreshed share and died before committing.
    await allowRefresh(alice);
    const contribution = '09'.padEnd(64, '0');
    const init = await alice.api.call<any>('bot', 'recovery_refresh_init', { contribution });
    expect(init.refresh_id).toMatch(/^kr_/);
    // What the agent's client commits with: its refreshed share's proof.
    const refreshed = refreshKeyPackage(agentKey(alice), { agent: hexToBytes(contribution), daemon: hexToBytes(init.contribution) });
    const proof = bytesToHex(proveShare(refreshed, { walletId: alice.walletId, refreshId: init.refresh_id }));
    expect(await pay(alice, 1)).toBe('completed');
    // Another wallet cannot commit it; a wrong public package changes nothing.
    expect((await errorOf(bob.api.call('bot', 'recovery_refresh_commit', { refresh_id: init.refresh_id, public_package: init.public_package, share_proof: proof }))).errorCode).toBe('NOT_FOUND');
    const wrong = { ...init.public_package, commitments: [...init.public_package.commitments].reverse() };
    expect((await errorOf(alice.api.call('bot', 'recovery_refresh_commit', { refresh_id: init.refresh_id, public_package: wrong, share_proof: proof }))).errorCode).toBe('VALIDATION_ERROR');
    // The next refresh abandons it (the daemon keeps one pending refresh) and completes its own.
    const done = await refreshKey(alice.api, alice.profile, save(alice));
    expect(done.status).toBe('committed');
    expect((await errorOf(alice.api.call('bot', 'recovery_refresh_commit', { refresh_id: init.refresh_id, public_package: init.public_package, share_proof: proof }))).errorCode).toBe('INVALID_STATUS');
    expect(await pay(alice, 1)).toBe('completed');
    // A replayed commit of the committed refresh answers the same and changes nothing.
    const pub = (await getWallet(world.services.db, alice.walletId))!.public_package;
    const replayProof = bytesToHex(proveShare(agentKey(alice), { walletId: alice.walletId, refreshId: done.refresh_id }));
    expect(await alice.api.call<any>('bot', 'recovery_refresh_commit', { refresh_id: done.refresh_id, public_package: JSON.parse(pub), share_proof: replayProof })).toMatchObject({ status: 'committed' });
    expect((await getWallet(world.services.db, alice.walletId))!.public_package).toBe(pub);
  }, 60_000);

  test('a crash after the daemon committed: the pending share beside the old one is made active by the next signing run', async () => {
    const store = new ProfileStore(alice.home);
    // Phase one by hand, and a commit whose answer never reached the agent.
    const before = fromDisk(alice);
    const done = await refreshKey(alice.api, { ...before }, (change) => {
      const written = store.update('default', change);
      // Crash right after the pending share is stored: the profile keeps the old key active.
      if (written.pending_refresh) throw new Error('crash');
      return written;
    }).catch((e: Error) => e.message);
    expect(done).toBe('crash');
    const crashed = fromDisk(alice);
    expect(crashed.pending_refresh).toBeDefined();
    expect(crashed.key_package).toBe(before.key_package);
    await alice.api.call('bot', 'recovery_refresh_commit', refreshCommitParams(alice.walletId, crashed.pending_refresh!));
    // The next payment (any signing path) finishes it first, as every signing command does before its
    // first call (the commit rotated the bot key: the old one is refused), and signs with the refreshed share.
    const profile = fromDisk(alice);
    await pinsOf(alice.api, profile, save(alice));
    const intent = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount: 1 });
    expect((await confirmSignSubmit(alice.api, profile, intent.transaction_id, { save: save(alice) })).status).toBe('completed');
    expect(fromDisk(alice).pending_refresh).toBeUndefined();
    expect(fromDisk(alice).key_package).toBe(crashed.pending_refresh!.key_package);
    // And a refresh run after it finds nothing pending.
    const next = await refreshKey(alice.api, profile, save(alice));
    expect(next.finished_pending).toBeNull();
    Object.assign(alice.profile, profile);
    expect(await pay(alice, 1)).toBe('completed');
  }, 60_000);
});
