import { describe, expect, test } from 'bun:test';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { getAddressEncoder } from '@solana/kit';
import { createApp } from '../../src/api/app.ts';
import { openDatabase } from '../../src/db/open.ts';
import { buildServices } from '../../src/daemon/services.ts';
import { loadConfig } from '../../src/config.ts';
import { loadFeePayer, loadMasterKey } from '../../src/secret-files.ts';
import { AGENT_ID, SERVER_ID } from '../../src/frost/ids.ts';
import { aggregate, commit, dkgRound1, dkgRound2, dkgRound3, signShare } from '../../src/frost/party.ts';
import { commitmentList } from '../../src/frost/commitments.ts';
import { decodeCommitments, decodeRound1, decodeRound2, decodeSignatureShare, encodeCommitments, encodeRound1, encodeRound2 } from '../../src/frost/wire.ts';
import { walletKeyPackage } from '../../src/frost/coordinator-dkg.ts';
import { SealError } from '../../src/frost/errors.ts';
import { decodeSecretState } from '../../src/frost/codec.ts';
import { open } from '../../src/frost/seal.ts';
import { AAD } from '../../src/frost/aad.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import { call, memoryLogger, tempDir, testServices } from '../helpers/services.ts';

type App = ReturnType<typeof createApp>;

/** The agent side of registration, step by step, so tests can tamper with any package. */
async function agentRegistration(app: App, tamper: { round1?: (w: any) => any; round2?: (w: any) => any; proof?: (sig: Uint8Array) => Uint8Array } = {}) {
  const mine = dkgRound1(AGENT_ID);
  const r1wire = (tamper.round1 ?? ((w) => w))(encodeRound1(mine.pkg));
  const init = await call(app, '/v1/bot', { action: 'dkg_init', round1: r1wire });
  if (!init.body.success) return { failedAt: 'dkg_init', res: init, r1wire } as const;
  const serverR1 = decodeRound1(init.body.data.round1, SERVER_ID);
  const { forOther } = dkgRound2(mine.state, serverR1);
  const result = dkgRound3(mine.state, serverR1, decodeRound2(init.body.data.round2, SERVER_ID));
  const { nonces, commitments } = commit(result.keyPackage);
  const complete = await call(app, '/v1/bot', {
    action: 'dkg_complete',
    dkg_session_id: init.body.data.dkg_session_id,
    round2: (tamper.round2 ?? ((w) => w))(encodeRound2(forOther)),
    commitments: encodeCommitments(commitments),
  });
  if (!complete.body.success) return { failedAt: 'dkg_complete', res: complete, init: init.body.data } as const;
  const d = complete.body.data;
  const message = new Uint8Array(Buffer.from(d.proof.message, 'base64'));
  const list = commitmentList(commitments, decodeCommitments(d.proof.server_commitments, SERVER_ID));
  const share = signShare(result.keyPackage, nonces, list, message);
  let signature = aggregate(result.publicPackage, list, message, { [AGENT_ID]: share, [SERVER_ID]: decodeSignatureShare(d.proof.server_share, SERVER_ID) });
  if (tamper.proof) signature = tamper.proof(signature);
  const reg = await call(app, '/v1/bot', { action: 'register', dkg_session_id: init.body.data.dkg_session_id, proof_signature: bytesToHex(signature), name: 'Test Agent' });
  return { failedAt: reg.body.success ? null : 'register', res: reg, init: init.body.data, complete: d, message, signature, registerBody: { action: 'register', dkg_session_id: init.body.data.dkg_session_id, proof_signature: bytesToHex(signature), name: 'Again' } } as const;
}

async function count(services: ReturnType<typeof testServices>, table: string): Promise<number> {
  return Number(((await services.db.get(`SELECT count(*) AS n FROM ${table}`)) as { n: bigint }).n);
}

describe('DKG registration', () => {
  test('a full registration yields a wallet whose address verifies the FROST-signed proof', async () => {
    const services = testServices();
    const app = createApp(services);
    const r = await agentRegistration(app);
    expect(r.failedAt).toBeNull();
    if (r.failedAt !== null) return;
    const data = r.res.body.data;
    expect(data.address).toBe(r.complete.address);
    expect(data.api_key).toMatch(/^wallet_bot_/);
    expect(data.claim_code).toMatch(/^[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}$/);
    expect(data.username).toMatch(/^test-agent-[0-9a-z]{4}$/);
    expect(ed25519.verify(r.signature, r.message, new Uint8Array(getAddressEncoder().encode(data.address)))).toBe(true);
  });

  test('a replayed dkg_init package is refused and creates no second session', async () => {
    const services = testServices();
    const app = createApp(services);
    const wire = encodeRound1(dkgRound1(AGENT_ID).pkg);
    expect((await call(app, '/v1/bot', { action: 'dkg_init', round1: wire })).status).toBe(200);
    const again = await call(app, '/v1/bot', { action: 'dkg_init', round1: wire });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('VALIDATION_ERROR');
    expect(again.body.error.message).toContain('already used');
    expect(await count(services, 'dkg_sessions')).toBe(1);
  });

  test('a round-1 package with a bad proof of knowledge is refused and nothing is created', async () => {
    const services = testServices();
    const r = await agentRegistration(createApp(services), {
      round1: (w) => ({ ...w, proof_of_knowledge: w.proof_of_knowledge.slice(0, 64) + (w.proof_of_knowledge[64] === '0' ? '1' : '0') + w.proof_of_knowledge.slice(65) }),
    });
    expect(r.failedAt).toBe('dkg_init');
    expect(r.res.body.error.code).toBe('VALIDATION_ERROR');
    expect(await count(services, 'dkg_sessions')).toBe(0);
  });

  test('a round-1 package claiming the server identity is refused', async () => {
    const services = testServices();
    const r = await agentRegistration(createApp(services), { round1: (w) => ({ ...w, identifier: SERVER_ID }) });
    expect(r.failedAt).toBe('dkg_init');
    expect(r.res.body.error.code).toBe('VALIDATION_ERROR');
  });

  test('a tampered round-2 share is refused and no key is derived', async () => {
    const services = testServices();
    const r = await agentRegistration(createApp(services), {
      round2: (w) => ({ ...w, signing_share: (w.signing_share[0] === '0' ? '1' : '0') + w.signing_share.slice(1) }),
    });
    expect(r.failedAt).toBe('dkg_complete');
    expect(r.res.body.error.code).toBe('VALIDATION_ERROR');
    expect(r.res.body.error.message).toContain('round-2');
    const row = (await services.db.get("SELECT status, result FROM dkg_sessions")) as { status: string; result: unknown };
    expect(row).toEqual({ status: 'started', result: null });
    expect(await count(services, 'wallets')).toBe(0);
  });

  test('a proof signature that does not verify is refused and no wallet is created', async () => {
    const services = testServices();
    const r = await agentRegistration(createApp(services), {
      proof: (sig) => {
        const bad = sig.slice();
        bad[40] = bad[40]! ^ 1;
        return bad;
      },
    });
    expect(r.failedAt).toBe('register');
    expect(r.res.body.error.message).toContain('/proof_signature');
    expect(await count(services, 'wallets')).toBe(0);
  });

  test('a DKG session is single use: a second register or dkg_complete is refused', async () => {
    const services = testServices();
    const app = createApp(services);
    const r = await agentRegistration(app);
    if (r.failedAt !== null) throw new Error('registration failed');
    const again = await call(app, '/v1/bot', r.registerBody);
    expect(again.body.error.code).toBe('VALIDATION_ERROR');
    expect(again.body.error.message).toContain('already created a wallet');
    const complete = await call(app, '/v1/bot', {
      action: 'dkg_complete',
      dkg_session_id: r.init.dkg_session_id,
      round2: { identifier: AGENT_ID, signing_share: '01'.padEnd(64, '0') },
      commitments: encodeCommitments(commit(await walletKey(services, r.res.body.data.wallet_id)).commitments),
    });
    expect(complete.body.error.code).toBe('VALIDATION_ERROR');
    expect(complete.body.error.message).toContain('single use');
    expect(await count(services, 'wallets')).toBe(1);
  });

  test('an expired DKG session is NOT_FOUND', async () => {
    let now = Date.now();
    const services = testServices({ now: () => new Date(now) });
    const app = createApp(services);
    const init = await call(app, '/v1/bot', { action: 'dkg_init', round1: encodeRound1(dkgRound1(AGENT_ID).pkg) });
    now += 10 * 60 * 1000 + 1;
    const res = await call(app, '/v1/bot', {
      action: 'dkg_complete',
      dkg_session_id: init.body.data.dkg_session_id,
      round2: { identifier: AGENT_ID, signing_share: '01'.padEnd(64, '0') },
      commitments: { identifier: AGENT_ID, hiding: init.body.data.round1.commitment[0], binding: init.body.data.round1.commitment[1] },
    });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

async function walletKey(services: ReturnType<typeof testServices>, walletId: string) {
  const row = (await services.db.get('SELECT server_key FROM wallets WHERE wallet_id = ?', walletId)) as { server_key: Uint8Array };
  return walletKeyPackage(services.masterKey, walletId, row.server_key);
}

describe('secrets at rest', () => {
  test('the DB file and the logs hold no plaintext API key, claim code, server share or DKG secret', async () => {
    const dataDir = tempDir();
    const config = loadConfig({ dataDir }, {});
    const db = openDatabase(join(dataDir, 'wallet.db'), { network: 'simnet' });
    const { log, lines } = memoryLogger();
    const services = buildServices({ config, db, log, masterKey: loadMasterKey(dataDir), feePayer: loadFeePayer(dataDir, 'fee-payer.json'), listenUrl: () => 'http://127.0.0.1:1' });
    const app = createApp(services);
    const r = await agentRegistration(app);
    if (r.failedAt !== null) throw new Error('registration failed');
    const { api_key: apiKey, claim_code: claimCode, wallet_id: walletId } = r.res.body.data;
    const key = (await walletKey(services, walletId)).reveal() as KeyPackage;
    const serverShare = key.secret.signingShare as Uint8Array;
    await db.run('PRAGMA wal_checkpoint(FULL)');
    const files = ['wallet.db', 'wallet.db-wal'].map((f) => join(dataDir, f)).filter(existsSync);
    const haystacks = [...files.map((f) => readFileSync(f)), Buffer.from(lines.join('\n'))];
    const needles: [string, Buffer][] = [
      ['api key', Buffer.from(apiKey)],
      ['api key body', Buffer.from(apiKey.slice('wallet_bot_'.length))],
      ['claim code', Buffer.from(claimCode)],
      ['server share (raw)', Buffer.from(serverShare)],
      ['server share (hex)', Buffer.from(bytesToHex(serverShare))],
      ['server share (base64)', Buffer.from(Buffer.from(serverShare).toString('base64'))],
    ];
    for (const h of haystacks) for (const [name, n] of needles) expect({ name, found: h.includes(n) }).toEqual({ name, found: false });
    expect(lines.length).toBeGreaterThanOrEqual(3);
  });

  test("swapping two wallets' sealed shares makes decryption fail", async () => {
    const services = testServices();
    const app = createApp(services);
    const a = await agentRegistration(app);
    const b = await agentRegistration(app);
    if (a.failedAt !== null || b.failedAt !== null) throw new Error('registration failed');
    const idA = a.res.body.data.wallet_id;
    const idB = b.res.body.data.wallet_id;
    const sealedOf = async (id: string) => ((await services.db.get('SELECT server_key FROM wallets WHERE wallet_id = ?', id)) as { server_key: Uint8Array }).server_key;
    const [sa, sb] = [await sealedOf(idA), await sealedOf(idB)];
    await services.db.run('UPDATE wallets SET server_key = ? WHERE wallet_id = ?', sb, idA);
    await services.db.run('UPDATE wallets SET server_key = ? WHERE wallet_id = ?', sa, idB);
    expect(async () => await walletKey(services, idA)).toThrow(SealError);
    expect(async () => await walletKey(services, idB)).toThrow(SealError);
    // Under their own ids the shares still open.
    expect(decodeSecretState(open(services.masterKey, sa, AAD.walletKey(idA)))).toBeTruthy();
  });
});
