/**
 * Custody through a key refresh (issue 40, items 2, 3 and 9), through the real daemon, the real
 * client and CLI, and the real simnet: two refresh runs racing on one profile never leave the
 * agent on another key than the daemon's; a refresh revokes every earlier export and rotates the
 * bot key, so a leaked kit plus an old `.wlt` no longer sweeps; and the agent cannot take the
 * owner's kit away (an enrolled kit is superseded only with the owner's approval, never on a
 * frozen wallet).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient, type CallOptions } from '../../src/client/api.ts';
import { ProfileStore, type ProfileData } from '../../src/client/profile.ts';
import { OwnerEnrollmentStore, agentEnroll, ownerFinishEnrollment, ownerStartEnrollment } from '../../src/client/recovery-enroll.ts';
import { readKit } from '../../src/client/recovery-kit.ts';
import { refreshCommitParams, refreshKey, type RefreshResult } from '../../src/client/recovery-refresh.ts';
import { recoveryPair } from '../../src/client/recovery-sweep.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import type { Endpoint } from '../../src/contract/action.ts';
import { getWallet } from '../../src/db/wallets.ts';
import { decodeSecretState, encodeSecretState } from '../../src/frost/codec.ts';
import { refreshKeyPackage } from '../../src/frost/recovery-share.ts';
import { Secret } from '../../src/frost/secret.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import type { PublicPackageWire } from '../../src/frost/wire.ts';
import { hexToBytes } from '@noble/hashes/utils.js';
import { runCli } from '../helpers/daemon.ts';
import { errorOf } from '../helpers/errors.ts';
import { tempDir } from '../helpers/services.ts';
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

/** A claimed, funded agent of its own owner. */
async function fundedAgent(name: string, owner: string): Promise<Agent> {
  const a = await world.agent(name, { claimBy: owner });
  await world.fund(a.address, 20_000_000n);
  return a;
}

const KIT_PASSPHRASE = 'a long enough kit passphrase';

/** The owner enrolls a recovery kit for `a` (owner's CLI and agent's half, real); the kit file. */
async function enrollKit(a: Agent, ownerEmail: string): Promise<string> {
  const owner = await world.ownerClient(ownerEmail);
  const ownerStore = new OwnerEnrollmentStore(tempDir('aw-refresh-owner-'));
  const started = await ownerStartEnrollment(owner, ownerStore, a.walletId);
  await agentEnroll(new ApiClient(a.api.baseUrl, profileOnDisk(a).api_key), profileOnDisk(a), started.code);
  const out = join(tempDir('aw-refresh-kit-'), 'kit.json');
  await ownerFinishEnrollment(owner, ownerStore, started.enrollment_id, { passphrase: KIT_PASSPHRASE, out });
  return out;
}

/** The pending refresh the agent's client would store for an init run by hand with `contribution` (its refreshed share). */
function pendingOf(a: Agent, contribution: string, init: { refresh_id: string; contribution: string; public_package: PublicPackageWire }) {
  const key = new Secret(decodeSecretState(Buffer.from(profileOnDisk(a).key_package, 'base64')) as KeyPackage);
  const refreshed = refreshKeyPackage(key, { agent: hexToBytes(contribution), daemon: hexToBytes(init.contribution) });
  return { refresh_id: init.refresh_id, key_package: Buffer.from(encodeSecretState(refreshed.reveal())).toString('base64'), public_package: init.public_package };
}


/**
 * A client that runs `gates[action]` once before it first sends that action, and
 * `gates['after:' + action]` once after its answer came: forces an interleaving.
 */
class GatedApi extends ApiClient {
  constructor(
    a: Agent,
    private readonly gates: Record<string, () => Promise<unknown>>,
  ) {
    super(a.api.baseUrl, profileOnDisk(a).api_key);
  }

  private async pass(name: string): Promise<void> {
    const gate = this.gates[name];
    if (!gate) return;
    delete this.gates[name];
    await gate();
  }

  override async call<T = Record<string, unknown>>(endpoint: Endpoint, action: string, params: Record<string, unknown> = {}, opts: CallOptions = {}): Promise<T> {
    await this.pass(action);
    const answer = await super.call<T>(endpoint, action, params, opts);
    await this.pass(`after:${action}`);
    return answer;
  }
}

const settled = <T>(p: Promise<T>) => p.then((value) => ({ value, error: null }), (error: Error) => ({ value: null, error }));

describe('two refresh runs on one profile (item 2)', () => {
  test('run A begins and stores its share between run B\'s init and B\'s store: A, which the daemon committed, is the key the profile signs with, B fails loudly, and a payment lands', async () => {
    const carol = await fundedAgent('Carol', 'carol-owner@example.com');
    // Two processes' copies of one profile (the CLI and a long-running MCP server).
    const copyA: ProfileData = profileOnDisk(carol);
    const copyB: ProfileData = profileOnDisk(carol);
    let aAtCommit!: () => void;
    const aReady = new Promise<void>((r) => (aAtCommit = r));
    let bSettled!: () => void;
    const bDone = new Promise<void>((r) => (bSettled = r));
    let runA: Promise<{ value: RefreshResult | null; error: Error | null }> | undefined;
    // A's init replaces B's pending refresh on the daemon; A commits only once B is over.
    const apiA = new GatedApi(carol, { recovery_refresh_commit: () => (aAtCommit(), bDone) });
    const apiB = new GatedApi(carol, {
      'after:recovery_refresh_init': async () => {
        runA = settled(refreshKey(apiA, copyA, saveTo(carol)));
        await Promise.race([aReady, runA]);
      },
    });
    const b = await settled(refreshKey(apiB, copyB, saveTo(carol)).finally(bSettled));
    const a = await runA!;

    expect(b.error?.name).toBe('CustodyCheckError');
    expect(a.value?.status).toBe('committed');
    const disk = profileOnDisk(carol);
    expect(disk.pending_refresh).toBeUndefined();
    expect(disk.public_package).toEqual(JSON.parse((await getWallet(world.services.db, carol.walletId))!.public_package));
    expect(await payFromDisk(carol, bob.username)).toBe('completed');
  }, 60_000);

  test('run B starts while run A waits to commit its stored share: B finishes A first, then its own; the profile ends on the daemon\'s key and a payment lands', async () => {
    const erin = await fundedAgent('Erin', 'erin-owner@example.com');
    const copyA: ProfileData = profileOnDisk(erin);
    const copyB: ProfileData = profileOnDisk(erin);
    let bAtCommit!: () => void;
    const bReady = new Promise<void>((r) => (bAtCommit = r));
    let aSettled!: () => void;
    const aDone = new Promise<void>((r) => (aSettled = r));
    let runB: Promise<{ value: RefreshResult | null; error: Error | null }> | undefined;
    const apiB = new GatedApi(erin, { recovery_refresh_commit: () => (bAtCommit(), aDone) });
    const apiA = new GatedApi(erin, {
      recovery_refresh_commit: async () => {
        runB = settled(refreshKey(apiB, copyB, saveTo(erin)));
        await Promise.race([bReady, runB]);
      },
    });
    const a = await settled(refreshKey(apiA, copyA, saveTo(erin)).finally(aSettled));
    const b = await runB!;
    for (const o of [a, b]) if (o.error) expect(o.error.name).toBe('CustodyCheckError');
    const disk = profileOnDisk(erin);
    expect(disk.pending_refresh).toBeUndefined();
    expect(disk.public_package).toEqual(JSON.parse((await getWallet(world.services.db, erin.walletId))!.public_package));
    expect(await payFromDisk(erin, bob.username)).toBe('completed');
  }, 60_000);

  test('a signing command holding a stale pending refresh that the daemon dropped leaves the refresh run under way alone: that run switches the profile, and both sign', async () => {
    const dave = await fundedAgent('Dave', 'dave-owner@example.com');
    // A refresh the daemon abandoned (a later init replaced it), still held by a long-running signer's copy.
    const stale = await dave.api.call<{ refresh_id: string; public_package: never }>('bot', 'recovery_refresh_init', { contribution: '09'.padEnd(64, '0') });
    const signerCopy: ProfileData = { ...profileOnDisk(dave), pending_refresh: { refresh_id: stale.refresh_id, key_package: profileOnDisk(dave).key_package, public_package: stale.public_package } };
    let signed: Promise<{ value: string | null; error: Error | null }> | undefined;
    const api = new GatedApi(dave, {
      // The refresh run has stored its share (its init abandoned the stale one): the signer runs now.
      recovery_refresh_commit: async () => {
        const signerApi = new ApiClient(dave.api.baseUrl, signerCopy.api_key);
        const intent = await signerApi.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount: 1 });
        signed = settled(confirmSignSubmit(signerApi, signerCopy, intent.transaction_id, { save: saveTo(dave) }).then((r) => String(r.status)));
        await signed;
      },
    });
    const done = await refreshKey(api, profileOnDisk(dave), saveTo(dave));
    expect(done.status).toBe('committed');
    expect((await signed!).value).toBe('completed');
    const disk = profileOnDisk(dave);
    expect(disk.pending_refresh).toBeUndefined();
    expect(disk.public_package).toEqual(JSON.parse((await getWallet(world.services.db, dave.walletId))!.public_package));
    expect(await payFromDisk(dave, bob.username)).toBe('completed');
  }, 60_000);
});

describe('a refresh after a kit leaked (item 3)', () => {
  test('revokes every earlier export and rotates the bot key: the leaked kit plus an old .wlt gets no key share (import refused, nothing written), the old bot key is 401, the profile pays with the new one', async () => {
    const frank = await fundedAgent('Frank', 'frank-owner@example.com');
    const kit = await enrollKit(frank, 'frank-owner@example.com');
    const wlt = join(tempDir('aw-refresh-wlt-'), 'frank.wlt');
    const exported = await runCli(['export', wlt, '--server', world.url, '--home', frank.home, '--json']);
    expect(exported.code).toBe(0);
    const oldKey = profileOnDisk(frank).api_key;

    // The owner learns the kit leaked and lets the agent refresh (item 9: an enrolled kit is superseded only so).
    await (await world.ownerClient('frank-owner@example.com')).call('owner', 'recovery_refresh_allow', { wallet_id: frank.walletId });
    const refreshed = await runCli(['recovery', 'refresh', '--server', world.url, '--home', frank.home, '--json']);
    expect(refreshed.code).toBe(0);
    expect(refreshed.json).toMatchObject({ status: 'committed', api_key_rotated: true, revoked_exports: [exported.json.export_id] });
    const text = await runCli(['recovery', 'refresh', '--server', world.url, '--home', frank.home]);
    expect(text.stdout).toContain('copies of this profile made before the refresh no longer work');

    // The holder of the leaked kit and the old export: the daemon releases nothing, so no share to sweep with.
    const thief = join(tempDir('aw-refresh-thief-'), 'home');
    const imported = await runCli(['import', wlt, '--home', thief, '--json']);
    expect(imported.code).toBe(1);
    expect(imported.json.error.code).toBe('INVALID_STATUS');
    expect(existsSync(join(thief, 'default.json'))).toBe(false);
    expect(existsSync(kit)).toBe(true);
    const releases = (await world.services.db.get('SELECT count(*) AS n FROM wallet_import_calls WHERE export_id = ?', exported.json.export_id)) as { n: bigint };
    expect(Number(releases.n)).toBe(0);

    // The old bot key is refused; the profile holds the new one and pays.
    const newKey = profileOnDisk(frank).api_key;
    expect(newKey).not.toBe(oldKey);
    expect((await errorOf(new ApiClient(frank.api.baseUrl, oldKey).call('bot', 'balance'))).errorCode).toBe('UNAUTHORIZED');
    expect(await payFromDisk(frank, bob.username)).toBe('completed');
    const audit = await (await world.ownerClient('frank-owner@example.com')).call<any>('owner', 'audit_log', { wallet_id: frank.walletId });
    // Newest first: the second refresh had nothing left to revoke.
    const refreshes = audit.items.filter((i: any) => i.kind === 'key.refreshed').map((i: any) => [i.data.api_key_rotated, i.data.revoked_exports]);
    expect(refreshes).toEqual([
      [true, []],
      [true, [exported.json.export_id]],
    ]);
  }, 60_000);

  test('a crash after the daemon committed (answer lost): the old key is refused, and the next signing command finishes the refresh with the new key and pays', async () => {
    const gina = await fundedAgent('Gina', 'gina-owner@example.com');
    const crashed = await refreshKey(gina.api, profileOnDisk(gina), (change) => {
      const written = new ProfileStore(gina.home).update('default', change);
      if (written.pending_refresh) throw new Error('crash');
      return written;
    }).catch((e: Error) => e.message);
    expect(crashed).toBe('crash');
    const pending = profileOnDisk(gina).pending_refresh!;
    // The commit reached the daemon; its answer did not reach the agent.
    await gina.api.call('bot', 'recovery_refresh_commit', refreshCommitParams(gina.walletId, pending));
    expect((await errorOf(gina.api.call('bot', 'balance'))).errorCode).toBe('UNAUTHORIZED');
    const paid = await runCli(['pay', bob.username, '1', '--server', world.url, '--home', gina.home, '--json']);
    expect(paid.json.status).toBe('completed');
    const disk = profileOnDisk(gina);
    expect(disk.pending_refresh).toBeUndefined();
    expect(disk.key_package).toBe(pending.key_package);
    expect(disk.api_key).not.toBe(gina.profile.api_key);
  }, 60_000);
});

describe("the owner's kit and a misbehaving agent (item 9)", () => {
  test('a refresh that would supersede an enrolled kit is refused until the owner approves it (the kit still signs); the approval lets one refresh through within the hour', async () => {
    const hank = await fundedAgent('Hank', 'hank-owner@example.com');
    const owner = await world.ownerClient('hank-owner@example.com');
    const kit = await enrollKit(hank, 'hank-owner@example.com');
    const before = (await getWallet(world.services.db, hank.walletId))!.public_package;

    // The agent (or an operator steering it) tries to take the kit away: by the client, by the CLI, by hand.
    const refused = await refreshKey(hank.api, profileOnDisk(hank), saveTo(hank)).catch((e: unknown) => e);
    expect((refused as { errorCode?: string }).errorCode).toBe('AWAITING_APPROVAL');
    expect((refused as { howToFix: string }).howToFix).toContain(`agent-wallet owner recovery allow-refresh ${hank.walletId}`);
    const cli = await runCli(['recovery', 'refresh', '--server', world.url, '--home', hank.home, '--json']);
    expect(cli.code).toBe(5);
    expect(cli.json.error.code).toBe('AWAITING_APPROVAL');
    expect((await errorOf(hank.api.call('bot', 'recovery_refresh_init', { contribution: '05'.padEnd(64, '0') }))).errorCode).toBe('AWAITING_APPROVAL');
    expect((await getWallet(world.services.db, hank.walletId))!.public_package).toBe(before);
    expect(profileOnDisk(hank).pending_refresh).toBeUndefined();
    expect(await owner.call<any>('owner', 'recovery_status', { wallet_id: hank.walletId })).toMatchObject({ enrolled: true, fingerprint: readKit(kit).fingerprint });
    expect(() => recoveryPair(profileOnDisk(hank), readKit(kit), KIT_PASSPHRASE)).not.toThrow();

    // The owner approves on their machine (the CLI); the agent's next refresh goes through, and only that one.
    const allowed = await runCli(['owner', 'recovery', 'allow-refresh', hank.walletId, '--server', world.url, '--json'], { AGENT_WALLET_OWNER_TOKEN: await world.ownerToken('hank-owner@example.com') });
    expect(allowed.code).toBe(0);
    expect(allowed.json).toMatchObject({ wallet_id: hank.walletId, fingerprint: readKit(kit).fingerprint, allowed_until: expect.any(String) });
    expect((await refreshKey(hank.api, profileOnDisk(hank), saveTo(hank))).status).toBe('committed');
    expect(await owner.call<any>('owner', 'recovery_status', { wallet_id: hank.walletId })).toMatchObject({ enrolled: false });
    expect(await payFromDisk(hank, bob.username)).toBe('completed');
    const audit = await owner.call<any>('owner', 'audit_log', { wallet_id: hank.walletId });
    expect(audit.items.map((i: any) => i.kind)).toContain('key_refresh.allowed');

    // A new kit: the approval went with the old one.
    await enrollKit(hank, 'hank-owner@example.com');
    const again = await errorOf(hank.api.call('bot', 'recovery_refresh_init', { contribution: '05'.padEnd(64, '0') }));
    expect(again.errorCode).toBe('AWAITING_APPROVAL');
  }, 90_000);

  test('a frozen wallet is never refreshed: the init and a commit begun before the freeze are refused, the key and the API key stay', async () => {
    const ivy = await fundedAgent('Ivy', 'ivy-owner@example.com');
    const before = (await getWallet(world.services.db, ivy.walletId))!.public_package;
    // Begun before the freeze, committed after it.
    const contribution = '05'.padEnd(64, '0');
    const init = await ivy.api.call<any>('bot', 'recovery_refresh_init', { contribution });
    await ivy.api.call('bot', 'freeze', { reason: 'the agent froze itself' });
    // The agent's own commit: its refreshed share proves it.
    const commit = await errorOf(ivy.api.call('bot', 'recovery_refresh_commit', refreshCommitParams(ivy.walletId, pendingOf(ivy, contribution, init))));
    expect(commit.errorCode).toBe('INVALID_STATUS');
    expect(commit.message).toContain('frozen');
    const fresh = await errorOf(ivy.api.call('bot', 'recovery_refresh_init', { contribution: '05'.padEnd(64, '0') }));
    expect(fresh.errorCode).toBe('INVALID_STATUS');
    expect(fresh.howToFix).toContain('unfreeze');
    expect((await getWallet(world.services.db, ivy.walletId))!.public_package).toBe(before);
    // The old API key still works (nothing rotated).
    expect(await ivy.api.call<any>('bot', 'balance')).toBeDefined();
  }, 90_000);
});
