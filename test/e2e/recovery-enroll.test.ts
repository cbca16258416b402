/**
 * Enrolling the owner's recovery share through the real daemon and the real client (issue 25):
 * the owner's CLI code on one side, the agent's on the other, the daemon between them — here
 * behind a recording proxy that stands in the daemon's place and keeps every byte it relays.
 * The kit verifies, the address and payments are unchanged, the recorded transcript plus f(2)
 * (or, for the agent, its own calls plus f(1)) yields no f(3), a lie from either side is refused
 * naming that side, and replayed or cross-wallet enrollment messages are refused.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { ApiClient, ApiError } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { agentEnroll, OwnerEnrollmentStore, ownerFinishEnrollment, ownerStartEnrollment } from '../../src/client/recovery-enroll.ts';
import { openKit, readKit } from '../../src/client/recovery-kit.ts';
import { newId } from '../../src/contract/ids.ts';
import { getWallet } from '../../src/db/wallets.ts';
import { walletKeyPackage } from '../../src/frost/coordinator-dkg.ts';
import { decodeSecretState } from '../../src/frost/codec.ts';
import { enrollmentKeyPair, formatEnrollmentCode, parseEnrollmentCode, sealToOwner } from '../../src/frost/recovery-box.ts';
import { OWNER_ID, ownerVerifyingShare, recoveryAggregate, recoveryFingerprint, recoverySignShare, repairSplit, repairSum } from '../../src/frost/recovery-share.ts';
import { commit } from '../../src/frost/party.ts';
import { ed25519Verifies } from '../../src/frost/native-ed25519.ts';
import { decodePublicPackage } from '../../src/frost/wire.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import { Secret } from '../../src/frost/secret.ts';
import { tempDir } from '../helpers/services.ts';
import { runCli } from '../helpers/daemon.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

const Fn = ed25519.Point.Fn;
const PASSPHRASE = 'a long enough kit passphrase';

let world: World;
let proxy: ReturnType<typeof Bun.serve>;
let proxyUrl: string;
/** Everything the daemon's stand-in saw, per caller: request and response bodies as text. */
const transcript: { caller: 'agent' | 'owner'; action: string; request: string; response: string }[] = [];
/** A hook a test sets to change a response on its way back (a lying daemon). */
let rewrite: ((action: string, body: any) => any) | null = null;

beforeAll(async () => {
  world = await startWorld();
  const target = new URL(world.url);
  proxy = Bun.serve({
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const request = await req.text();
      const action = (JSON.parse(request || '{}') as { action?: string }).action ?? '';
      const res = await fetch(`${target.origin}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body: request || undefined });
      let response = await res.text();
      if (rewrite && res.ok) response = JSON.stringify({ ...JSON.parse(response), data: rewrite(action, JSON.parse(response).data) });
      transcript.push({ caller: url.pathname.endsWith('/owner') ? 'owner' : 'agent', action, request, response });
      return new Response(response, { status: res.status, headers: { 'content-type': 'application/json' } });
    },
  });
  proxyUrl = `http://127.0.0.1:${proxy.port}${target.pathname}`;
});
afterAll(async () => {
  proxy?.stop(true);
  await world?.stop();
});

let n = 0;
/** A claimed agent, its owner's API client (through the proxy) and the owner's machine. */
async function setup(): Promise<{ agent: Agent; agentApi: ApiClient; ownerApi: ApiClient; ownerToken: string; store: OwnerEnrollmentStore; home: string }> {
  const agent = await world.agent(`Enrolled ${++n}`);
  const email = `recovery-${n}@example.com`;
  await world.claim(agent.walletId, email);
  const token = await world.ownerToken(email);
  const home = tempDir('aw-owner-');
  return { agent, agentApi: new ApiClient(proxyUrl, agent.profile.api_key), ownerApi: new ApiClient(proxyUrl, token), ownerToken: token, store: new OwnerEnrollmentStore(home), home };
}

const agentShare = (a: Agent) => Fn.fromBytes((decodeSecretState(Buffer.from(a.profile.key_package, 'base64')) as KeyPackage).secret.signingShare);
const serverShare = async (a: Agent) => Fn.fromBytes(walletKeyPackage(world.services.masterKey, a.walletId, (await getWallet(world.services.db, a.walletId))!.server_key).reveal().secret.signingShare);

/** Every 32-byte hex value in some text, as a scalar mod L (points too): what a party could try to combine. */
function scalarsIn(texts: string[]): bigint[] {
  const out = new Set<bigint>();
  for (const t of texts) {
    for (const m of t.matchAll(/[0-9a-f]{64}/g)) out.add(Fn.create(BigInt(`0x${bytesToHex(hexToBytes(m[0]).reverse())}`)));
  }
  return [...out];
}

/** Whether f(3) is a combination of `known` with coefficients in {-2..2}. */
function formable(known: bigint[], target: bigint): boolean {
  const coefficients = [-2n, -1n, 0n, 1n, 2n].map((c) => Fn.create(c));
  const walk = (i: number, acc: bigint): boolean => {
    if (i === known.length) return acc === target;
    return coefficients.some((c) => walk(i + 1, Fn.add(acc, Fn.mul(c, known[i]!))));
  };
  return walk(0, 0n);
}

describe('enrollment through a daemon that records everything', () => {
  test("the kit verifies (f(3)·G = verifying share 3) and signs; the address and agent payments are unchanged; the owner's record is the fingerprint only", async () => {
    const { agent, agentApi, ownerApi, store, home } = await setup();
    await world.fund(agent.address, 10_000_000n);
    const before = (await getWallet(world.services.db, agent.walletId))!;
    transcript.length = 0;
    const started = await ownerStartEnrollment(ownerApi, store, agent.walletId);
    expect(started.code.startsWith('awr1-')).toBe(true);
    expect(await agentEnroll(agentApi, agent.profile, started.code)).toEqual({ enrollment_id: started.enrollment_id, status: 'delivered' });
    const out = join(home, 'kit.json');
    const finished = await ownerFinishEnrollment(ownerApi, store, started.enrollment_id, { passphrase: PASSPHRASE, out });
    const pub = decodePublicPackage(JSON.parse(before.public_package));
    expect(finished.fingerprint).toBe(recoveryFingerprint(agent.walletId, pub));

    const owner = openKit(readKit(out), PASSPHRASE).reveal();
    expect(owner.secret.identifier).toBe(OWNER_ID);
    const f3 = Fn.fromBytes(owner.secret.signingShare);
    expect(ed25519.Point.BASE.multiply(f3).toBytes()).toEqual(ownerVerifyingShare(pub));
    // f(3) is the degree-1 key's value at 3: −f(1) + 2·f(2); with the daemon's share it signs for the address.
    expect(f3).toBe(Fn.add(Fn.neg(agentShare(agent)), Fn.mul(2n, await serverShare(agent))));
    const ownerKey = openKit(readKit(out), PASSPHRASE);
    const serverKey = walletKeyPackage(world.services.masterKey, agent.walletId, before.server_key);
    const message = new TextEncoder().encode('a sweep message');
    const rounds = [ownerKey, serverKey].map((k) => ({ k, ...commit(k) }));
    const list = rounds.map((r) => r.commitments);
    const shares = Object.fromEntries(rounds.map((r) => [r.k.reveal().secret.identifier, recoverySignShare(r.k, r.nonces, list, message)]));
    expect(ed25519Verifies(recoveryAggregate(pub, list, message, shares), message, pub.commitments[0]!)).toBe(true);

    const after = (await getWallet(world.services.db, agent.walletId))!;
    expect({ address: after.address, public_package: after.public_package, server_key: bytesToHex(after.server_key) }).toEqual({ address: before.address, public_package: before.public_package, server_key: bytesToHex(before.server_key) });
    const status = await ownerApi.call<any>('owner', 'recovery_status', { wallet_id: agent.walletId });
    expect(status).toMatchObject({ enrolled: true, fingerprint: finished.fingerprint, in_progress: null });
    // The daemon keeps neither report once enrolled.
    expect(await world.services.db.get('SELECT daemon_report, agent_box FROM recovery_enrollments WHERE enrollment_id = ?', started.enrollment_id)).toEqual({ daemon_report: null, agent_box: null });

    const bob = await world.agent(`Payee ${n}`, { claimBy: `recovery-${n}@example.com` });
    await world.fund(bob.address, 0n);
    const intent = await agent.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount: 2 });
    expect((await confirmSignSubmit(agent.api, agent.profile, intent.transaction_id)).status).toBe('completed');
    expect(await world.balance(bob.address)).toBe(2_000_000n);

    // What the daemon saw: everything relayed, plus its own share f(2). No combination is f(3).
    const daemonView = scalarsIn(transcript.flatMap((t) => [t.request, t.response]));
    expect(formable([await serverShare(agent), ...daemonView], f3)).toBe(false);
    // The agent's report never crossed it in the clear: σ1 appears nowhere in the transcript.
    const box = JSON.parse(transcript.find((t) => t.action === 'recovery_enroll_deliver')!.request).box as string;
    const collected = JSON.parse(transcript.find((t) => t.action === 'recovery_enroll_collect')!.response).data;
    const sigma2 = Fn.fromBytes(hexToBytes(collected.daemon_report.sigma));
    const sigma1 = Fn.toBytes(Fn.sub(f3, sigma2));
    const everything = transcript.map((t) => t.request + t.response).join('');
    expect(everything.includes(bytesToHex(sigma1))).toBe(false);
    expect(Buffer.from(box, 'base64').includes(Buffer.from(sigma1))).toBe(false);
    // What the agent saw (its own calls) plus f(1): no f(3) either, and never σ2.
    const agentView = scalarsIn(transcript.filter((t) => t.caller === 'agent').flatMap((t) => [t.request, t.response]));
    expect(formable([agentShare(agent), ...agentView], f3)).toBe(false);
    expect(transcript.filter((t) => t.caller === 'agent').some((t) => t.response.includes(collected.daemon_report.sigma))).toBe(false);
    // Sanity of the search itself: with both sides' views it does find f(3).
    expect(formable([sigma2, Fn.fromBytes(sigma1)], f3)).toBe(true);
  });

  test("a daemon that tampers with its report is named; nothing is written and the enrollment is not recorded", async () => {
    const { agent, agentApi, ownerApi, store, home } = await setup();
    const started = await ownerStartEnrollment(ownerApi, store, agent.walletId);
    await agentEnroll(agentApi, agent.profile, started.code);
    rewrite = (action, data) => (action === 'recovery_enroll_collect' ? { ...data, daemon_report: { ...data.daemon_report, sigma: bytesToHex(Fn.toBytes(Fn.add(Fn.fromBytes(hexToBytes(data.daemon_report.sigma)), 1n))) } } : data);
    try {
      await expect(ownerFinishEnrollment(ownerApi, store, started.enrollment_id, { passphrase: PASSPHRASE, out: join(home, 'kit.json') })).rejects.toMatchObject({ culprit: 'daemon', message: expect.stringContaining('daemon') });
    } finally {
      rewrite = null;
    }
    expect(await Bun.file(join(home, 'kit.json')).exists()).toBe(false);
    expect((await ownerApi.call<any>('owner', 'recovery_status', { wallet_id: agent.walletId })).enrolled).toBe(false);
  });

  test('a daemon that swaps in its own commitment, or answers for another wallet, is named', async () => {
    const { agent, agentApi, ownerApi, store, home } = await setup();
    const other = await setup();
    const started = await ownerStartEnrollment(ownerApi, store, agent.walletId);
    await agentEnroll(agentApi, agent.profile, started.code);
    const otherPub = decodePublicPackage(JSON.parse((await getWallet(world.services.db, other.agent.walletId))!.public_package));
    rewrite = (action, data) => (action === 'recovery_enroll_collect' ? { ...data, commitments: otherPub.commitments.map((c) => bytesToHex(c)) } : data);
    try {
      await expect(ownerFinishEnrollment(ownerApi, store, started.enrollment_id, { passphrase: PASSPHRASE, out: join(home, 'a.json') })).rejects.toMatchObject({ culprit: 'daemon' });
    } finally {
      rewrite = null;
    }
    rewrite = (action, data) => (action === 'recovery_enroll_collect' ? { ...data, address: other.agent.address } : data);
    try {
      await expect(ownerFinishEnrollment(ownerApi, store, started.enrollment_id, { passphrase: PASSPHRASE, out: join(home, 'b.json') })).rejects.toMatchObject({ culprit: 'daemon' });
    } finally {
      rewrite = null;
    }
  });

  test('an agent that tampers with its report is named', async () => {
    const { agent, agentApi, ownerApi, store, home } = await setup();
    const started = await ownerStartEnrollment(ownerApi, store, agent.walletId);
    // A misbehaving agent: its own steps, with a sum one off.
    const code = parseEnrollmentCode(started.code);
    const split = repairSplit(new Secret(decodeSecretState(Buffer.from(agent.profile.key_package, 'base64')) as KeyPackage));
    const answer = await agentApi.call<{ piece: string }>('bot', 'recovery_enroll_split', { enrollment_id: code.enrollmentId, piece: bytesToHex(split.forOther) });
    const report = repairSum(split, hexToBytes(answer.piece), 'daemon');
    const pub = (decodeSecretState(Buffer.from(agent.profile.key_package, 'base64')) as KeyPackage).public;
    const content = {
      wallet_id: agent.walletId,
      enrollment_id: code.enrollmentId,
      address: agent.address,
      commitments: pub.commitments.map((c) => bytesToHex(c)),
      report: { sigma: bytesToHex(Fn.toBytes(Fn.add(Fn.fromBytes(report.sigma), 1n))), kept: bytesToHex(report.kept), sent: bytesToHex(report.sent), received: bytesToHex(report.received) },
    };
    const box = sealToOwner(code.ownerPublicKey, code.walletId, code.enrollmentId, new TextEncoder().encode(JSON.stringify(content)));
    await agentApi.call('bot', 'recovery_enroll_deliver', { enrollment_id: code.enrollmentId, box: Buffer.from(box).toString('base64') });
    await expect(ownerFinishEnrollment(ownerApi, store, started.enrollment_id, { passphrase: PASSPHRASE, out: join(home, 'kit.json') })).rejects.toMatchObject({ culprit: 'agent', message: expect.stringContaining('agent') });
  });
});

describe('replayed and cross-wallet enrollment messages', () => {
  test("a replayed split, another wallet's agent, another owner, another wallet's code and a box for another enrollment are all refused", async () => {
    const a = await setup();
    const b = await setup();
    const started = await ownerStartEnrollment(a.ownerApi, a.store, a.agent.walletId);
    const code = parseEnrollmentCode(started.code);
    // Another wallet's agent cannot use this enrollment at all.
    await expect(b.agentApi.call('bot', 'recovery_enroll_split', { enrollment_id: code.enrollmentId, piece: bytesToHex(Fn.toBytes(5n)) })).rejects.toMatchObject({ errorCode: 'NOT_FOUND' });
    // This code given to another wallet's agent is refused by that agent's client before any call.
    await expect(agentEnroll(b.agentApi, b.agent.profile, started.code)).rejects.toThrow(/for wallet/);
    await agentEnroll(a.agentApi, a.agent.profile, started.code);
    // Replays: a second split and a different box.
    await expect(a.agentApi.call('bot', 'recovery_enroll_split', { enrollment_id: code.enrollmentId, piece: bytesToHex(Fn.toBytes(5n)) })).rejects.toMatchObject({ errorCode: 'INVALID_STATUS' });
    await expect(a.agentApi.call('bot', 'recovery_enroll_deliver', { enrollment_id: code.enrollmentId, box: Buffer.from(new Uint8Array(80).fill(7)).toString('base64') })).rejects.toMatchObject({ errorCode: 'INVALID_STATUS' });
    // Another owner sees nothing.
    await expect(b.ownerApi.call('owner', 'recovery_enroll_collect', { enrollment_id: code.enrollmentId })).rejects.toMatchObject({ errorCode: 'NOT_FOUND' });
    await expect(b.ownerApi.call('owner', 'recovery_status', { wallet_id: a.agent.walletId })).rejects.toMatchObject({ errorCode: 'NOT_FOUND' });

    // A box sealed for an earlier enrollment of the same wallet, replayed into a new one, does not open for the owner.
    const first = await ownerStartEnrollment(a.ownerApi, a.store, a.agent.walletId);
    const firstCode = parseEnrollmentCode(first.code);
    const second = await ownerStartEnrollment(a.ownerApi, a.store, a.agent.walletId);
    const secondCode = parseEnrollmentCode(second.code);
    await expect(a.agentApi.call('bot', 'recovery_enroll_split', { enrollment_id: firstCode.enrollmentId, piece: bytesToHex(Fn.toBytes(5n)) })).rejects.toMatchObject({ errorCode: 'INVALID_STATUS' });
    const split = repairSplit(new Secret(decodeSecretState(Buffer.from(a.agent.profile.key_package, 'base64')) as KeyPackage));
    await a.agentApi.call('bot', 'recovery_enroll_split', { enrollment_id: secondCode.enrollmentId, piece: bytesToHex(split.forOther) });
    const staleBox = sealToOwner(secondCode.ownerPublicKey, a.agent.walletId, firstCode.enrollmentId, new TextEncoder().encode('{}'));
    await a.agentApi.call('bot', 'recovery_enroll_deliver', { enrollment_id: secondCode.enrollmentId, box: Buffer.from(staleBox).toString('base64') });
    await expect(ownerFinishEnrollment(a.ownerApi, a.store, second.enrollment_id, { passphrase: PASSPHRASE, out: join(a.home, 'kit.json') })).rejects.toMatchObject({ culprit: 'agent' });
    // Malformed pieces are refused as validation errors.
    const third = await ownerStartEnrollment(a.ownerApi, a.store, a.agent.walletId);
    const thirdId = parseEnrollmentCode(third.code).enrollmentId;
    for (const piece of ['00'.repeat(32), 'ff'.repeat(32), 'zz'.repeat(32)]) {
      const err = await a.agentApi.call('bot', 'recovery_enroll_split', { enrollment_id: thirdId, piece }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).errorCode).toBe('VALIDATION_ERROR');
    }
    // A well-formed code for an unknown enrollment of this wallet is NOT_FOUND at the daemon.
    const forged = formatEnrollmentCode({ walletId: a.agent.walletId, enrollmentId: newId('recoveryEnrollment'), ownerPublicKey: enrollmentKeyPair().publicKey });
    await expect(agentEnroll(a.agentApi, a.agent.profile, forged)).rejects.toMatchObject({ errorCode: 'NOT_FOUND' });
  });
});

describe('the two CLIs, as the owner and the agent run them', () => {
  test("owner recovery start → the agent's recovery enroll CODE → owner recovery finish: a 0600 kit whose fingerprint the status shows", async () => {
    const { agent, ownerToken, home } = await setup();
    const owner = { AGENT_WALLET_URL: proxyUrl, AGENT_WALLET_OWNER_TOKEN: ownerToken, AGENT_WALLET_HOME: home, AGENT_WALLET_KIT_PASSPHRASE: PASSPHRASE };
    const started = await runCli(['owner', 'recovery', 'start', agent.walletId, '--json'], owner);
    expect(started.code).toBe(0);
    const code = started.json.code as string;
    const enrolled = await runCli(['recovery', 'enroll', code, '--json'], { AGENT_WALLET_HOME: agent.home, AGENT_WALLET_URL: proxyUrl });
    expect({ code: enrolled.code, data: enrolled.json }).toEqual({ code: 0, data: { enrollment_id: started.json.enrollment_id, status: 'delivered' } });
    const out = join(home, 'kit.json');
    const finished = await runCli(['owner', 'recovery', 'finish', started.json.enrollment_id, '--out', out, '--json'], owner);
    expect(finished.code).toBe(0);
    expect((await Bun.file(out).stat()).mode & 0o777).toBe(0o600);
    expect(readKit(out).fingerprint).toBe(finished.json.fingerprint);
    const status = await runCli(['owner', 'recovery', 'status', agent.walletId, '--json'], owner);
    expect(status.json).toMatchObject({ enrolled: true, fingerprint: finished.json.fingerprint });
    // The same code again: the daemon refuses the replay, and the CLI says so with its envelope.
    const again = await runCli(['recovery', 'enroll', code, '--json'], { AGENT_WALLET_HOME: agent.home, AGENT_WALLET_URL: proxyUrl });
    expect({ code: again.code, error: again.json.error.code }).toEqual({ code: 1, error: 'INVALID_STATUS' });
    // Without a token the owner commands say how to get one.
    const anonymous = await runCli(['owner', 'recovery', 'status', agent.walletId, '--json'], { AGENT_WALLET_URL: proxyUrl, AGENT_WALLET_OWNER_TOKEN: '', AGENT_WALLET_HOME: home });
    expect({ code: anonymous.code, error: anonymous.json.error.code }).toEqual({ code: 2, error: 'CLIENT_USAGE' });
  }, 60_000);
});
