/**
 * The owner + daemon sweep (issue 25) through the real daemon, the real owner client and CLI: the
 * agent's key is revoked when the sweep is announced; nothing can be signed before the delay and a
 * cancel leaves everything; after it the whole balance lands at the owner's address and the ledger
 * agrees with the chain. Another owner, a wallet without a kit, another wallet's kit, a daemon that
 * builds another message, and a replayed share get nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { OwnerEnrollmentStore, agentEnroll, ownerFinishEnrollment, ownerStartEnrollment } from '../../src/client/recovery-enroll.ts';
import { openKit, readKit, type RecoveryKit } from '../../src/client/recovery-kit.ts';
import { commit } from '../../src/frost/party.ts';
import { SERVER_ID } from '../../src/frost/ids.ts';
import { OWNER_ID, recoverySignShare } from '../../src/frost/recovery-share.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../../src/frost/wire.ts';
import { liveSweepOf, signSweep } from '../../src/client/recovery-owner-sweep.ts';
import { listMail } from '../../src/db/mail.ts';
import { outstandingOut } from '../../src/db/transactions.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { buildUsdcTransfer } from '../../src/solana/transfer.ts';
import { errorOf } from '../helpers/errors.ts';
import { drainFeePayer } from '../helpers/fee-payer.ts';
import { runCli } from '../helpers/daemon.ts';
import { startLyingProxy, type LyingProxy } from '../helpers/lying-proxy.ts';
import { tempDir } from '../helpers/services.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { ledgerChainViolations, ledgerBalance } from '../reliability/money-invariants.ts';

const PASSPHRASE = 'a long enough kit passphrase';
const HOUR = 3_600_000;
let world: World;
let proxy: LyingProxy;
const store = new OwnerEnrollmentStore(tempDir('aw-sweep-owner-'));
let n = 0;

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_RECOVERY_SWEEP_DELAY_SECONDS: '3600' } });
  proxy = startLyingProxy(world.url);
});
afterAll(async () => {
  await proxy?.stop();
  await world?.stop();
});

/** A claimed, funded agent with its owner's token and an enrolled kit. */
async function enrolledAgent(usdc: bigint): Promise<{ agent: Agent; owner: ApiClient; token: string; kit: RecoveryKit; kitPath: string; email: string }> {
  const email = `sweeper-${++n}@example.com`;
  const agent = await world.agent(`Sweepable ${n}`, { claimBy: email });
  await world.fund(agent.address, usdc);
  await scanDeposits(world.services);
  const token = await world.ownerToken(email);
  const owner = new ApiClient(world.url, token);
  const started = await ownerStartEnrollment(owner, store, agent.walletId);
  await agentEnroll(agent.api, agent.profile, started.code);
  const kitPath = join(tempDir('aw-sweep-kit-'), 'kit.json');
  await ownerFinishEnrollment(owner, store, started.enrollment_id, { passphrase: PASSPHRASE, out: kitPath });
  return { agent, owner, token, kit: readKit(kitPath), kitPath, email };
}

const ownerCli = (token: string, ...args: string[]) =>
  runCli(['owner', 'recover', ...args, '--server', world.url, '--json'], { AGENT_WALLET_OWNER_TOKEN: token, AGENT_WALLET_KIT_PASSPHRASE: PASSPHRASE });

const ledgerOf = async (walletId: string): Promise<bigint> => await ledgerBalance(world.services.db, walletId);

/** Runs `fn` with the clock past an announced sweep's delay. */
async function afterDelay<T>(fn: () => Promise<T>): Promise<T> {
  world.clock.offsetMs += HOUR + 1_000;
  try {
    return await fn();
  } finally {
    world.clock.offsetMs -= HOUR + 1_000;
  }
}

/** Opens a signing round of the sweep with a fresh commitment of the kit, as the owner's CLI does before checking the message. */
function openRound(owner: ApiClient, kit: RecoveryKit, sweepId: string): Promise<{ sign_session_id: string; message: string }> {
  return owner.call('owner', 'recovery_sweep_sign', { sweep_id: sweepId, commitments: encodeCommitments(commit(openKit(kit, PASSPHRASE)).commitments) });
}

describe('the owner + daemon sweep', () => {
  test("announced from the CLI: the agent's key is 401 at once, the owner is mailed; not signable before the delay; after it the whole balance lands at the owner's address, ledger = chain", async () => {
    const { agent, owner, token, kit, kitPath, email } = await enrolledAgent(30_000_000n);
    const to = (await generateKeyPairSigner()).address;
    const announced = await ownerCli(token, 'sweep', '--kit', kitPath, '--to', to);
    expect(announced.code).toBe(5);
    expect((await errorOf(agent.api.call('bot', 'info'))).errorCode).toBe('UNAUTHORIZED');
    expect((await listMail(world.services.db, 200)).some((m) => m.kind === 'recovery' && m.to_addr === email)).toBe(true);
    const audit = await owner.call<any>('owner', 'audit_log', { wallet_id: agent.walletId });
    expect(audit.items.map((e: any) => e.kind)).toContain('recovery.sweep_announced');
    // Too early, from the CLI (exit 5) and the API (INVALID_STATUS).
    expect((await ownerCli(token, 'sweep', '--kit', kitPath, '--to', to)).code).toBe(5);
    const sweep = (await liveSweepOf(owner, agent.walletId))!;
    expect((await errorOf(signSweep(owner, kit, PASSPHRASE, sweep))).errorCode).toBe('INVALID_STATUS');
    expect(await world.balance(agent.address)).toBe(30_000_000n);

    world.clock.offsetMs += HOUR + 1_000;
    try {
      const done = await signSweep(owner, kit, PASSPHRASE, sweep);
      expect(done).toMatchObject({ status: 'completed', amount: 30 });
    } finally {
      world.clock.offsetMs -= HOUR + 1_000;
    }
    expect(await world.balance(to)).toBe(30_000_000n);
    expect(await world.balance(agent.address)).toBe(0n);
    expect(ledgerChainViolations('an owner + daemon sweep', [{ account: agent.username, ledger: await ledgerOf(agent.walletId), chain: await world.balance(agent.address) }])).toEqual([]);
    const [status] = (await owner.call<any>('owner', 'recovery_sweeps', { wallet_id: agent.walletId })).items;
    expect(status.transaction).toMatchObject({ status: 'completed', amount: 30 });
  }, 60_000);

  test('a cancel during the delay leaves everything: nothing can be signed, the balance stays', async () => {
    const { agent, owner, token, kit, kitPath } = await enrolledAgent(5_000_000n);
    const to = (await generateKeyPairSigner()).address;
    await ownerCli(token, 'sweep', '--kit', kitPath, '--to', to);
    const sweep = (await liveSweepOf(owner, agent.walletId))!;
    const cancelled = await ownerCli(token, 'cancel', sweep.sweep_id);
    expect(cancelled.json).toMatchObject({ status: 'cancelled' });
    world.clock.offsetMs += HOUR + 1_000;
    try {
      expect((await errorOf(signSweep(owner, kit, PASSPHRASE, sweep))).errorCode).toBe('INVALID_STATUS');
    } finally {
      world.clock.offsetMs -= HOUR + 1_000;
    }
    expect(await world.balance(agent.address)).toBe(5_000_000n);
    expect(await world.balance(to)).toBe(0n);
  }, 60_000);

  test('another owner, a wallet without a kit, another wallet\'s kit, a daemon that builds another message, and a replayed share get nothing', async () => {
    const a = await enrolledAgent(7_000_000n);
    const b = await enrolledAgent(1_000_000n);
    const to = (await generateKeyPairSigner()).address;
    expect((await errorOf(b.owner.call('owner', 'recovery_sweep_start', { wallet_id: a.agent.walletId, to_address: to }))).errorCode).toBe('NOT_FOUND');
    const bare = await world.agent('No Kit', { claimBy: a.email });
    expect((await errorOf(a.owner.call('owner', 'recovery_sweep_start', { wallet_id: bare.walletId, to_address: to }))).errorCode).toBe('INVALID_STATUS');

    await a.owner.call('owner', 'recovery_sweep_start', { wallet_id: a.agent.walletId, to_address: to });
    const sweep = (await liveSweepOf(a.owner, a.agent.walletId))!;
    world.clock.offsetMs += HOUR + 1_000;
    try {
      // B's kit share for A's sweep (a client that does not check): the daemon refuses it; nothing is signed or sent.
      const bKey = openKit(b.kit, PASSPHRASE);
      const round = commit(bKey);
      const opened = await a.owner.call<any>('owner', 'recovery_sweep_sign', { sweep_id: sweep.sweep_id, commitments: encodeCommitments(round.commitments) });
      const message = new Uint8Array(Buffer.from(opened.message, 'base64'));
      const share = recoverySignShare(bKey, round.nonces, [round.commitments, decodeCommitments(opened.server_commitments, SERVER_ID)], message);
      const refused = await errorOf(a.owner.call('owner', 'recovery_sweep_complete', { sweep_id: sweep.sweep_id, sign_session_id: opened.sign_session_id, signature_share: encodeSignatureShare(OWNER_ID, share) }));
      expect(refused.errorCode).toBe('VALIDATION_ERROR');
      expect(await world.balance(a.agent.address)).toBe(7_000_000n);
      expect((await liveSweepOf(a.owner, a.agent.walletId))!.transaction).toMatchObject({ status: 'approved', signature: null });

      // A daemon that asks the kit to sign a payment to someone else gets no share.
      const thief = (await generateKeyPairSigner()).address as Address;
      const lyingOwner = new ApiClient(proxy.url, a.token);
      proxy.lie = async (action, _p, data) => {
        if (action !== 'recovery_sweep_sign') return data;
        const { messageBytes } = await buildUsdcTransfer({
          wallet: a.agent.address, mint: world.simnet.mint, recipientOwner: thief, amount: 7_000_000n, fee: 0n, treasuryOwner: thief, feePayer: world.services.feePayer.address,
          createRecipientAta: true, memo: 'agent-wallet recovery sweep', blockhash: await world.services.chain.getLatestBlockhash(),
        });
        return { ...data, message: Buffer.from(messageBytes).toString('base64') };
      };
      const completes = proxy.count('recovery_sweep_complete');
      const lied = await signSweep(lyingOwner, a.kit, PASSPHRASE, sweep).catch((e: unknown) => e as Error);
      proxy.lie = null;
      expect((lied as Error).name).toBe('CustodyCheckError');
      expect(proxy.count('recovery_sweep_complete')).toBe(completes);

      // The honest round completes; a replayed share of it is refused.
      const done = await signSweep(a.owner, a.kit, PASSPHRASE, sweep);
      expect(done.status).toBe('completed');
      const replay = await errorOf(a.owner.call('owner', 'recovery_sweep_complete', { sweep_id: sweep.sweep_id, sign_session_id: 'sig_x', signature_share: { identifier: '03'.padEnd(64, '0'), share: '01'.padEnd(64, '0') } }));
      expect(['INVALID_STATUS', 'NOT_FOUND']).toContain(replay.errorCode);
    } finally {
      proxy.lie = null;
      world.clock.offsetMs -= HOUR + 1_000;
    }
    expect(await world.balance(to)).toBe(7_000_000n);
  }, 60_000);

  test('a cancel after a signing round was opened releases the balance: the agent, given a new key, can pay with it', async () => {
    const { agent, owner, kit } = await enrolledAgent(4_000_000n);
    const to = (await generateKeyPairSigner()).address;
    const { sweep_id } = await owner.call<{ sweep_id: string }>('owner', 'recovery_sweep_start', { wallet_id: agent.walletId, to_address: to });
    await afterDelay(() => openRound(owner, kit, sweep_id));
    // The owner finds the agent's share after all: the sweep is called off and the agent gets a new key.
    await owner.call('owner', 'recovery_sweep_cancel', { sweep_id });
    const { api_key } = await owner.call<{ api_key: string }>('owner', 'rotate_api_key', { wallet_id: agent.walletId });
    const paid = await new ApiClient(world.url, api_key).call<{ status: string }>('bot', 'pay', { to: (await generateKeyPairSigner()).address, amount: 3 });
    expect(['pre_approved', 'awaiting_approval']).toContain(paid.status);
    expect((await owner.call<any>('owner', 'recovery_sweeps', { wallet_id: agent.walletId })).items[0].transaction.status).toBe('cancelled');
    expect(await world.balance(agent.address)).toBe(4_000_000n);
  }, 60_000);

  test('concurrent signing rounds of one sweep set the balance aside once, and the sweep still lands whole', async () => {
    const { agent, owner, kit } = await enrolledAgent(6_000_000n);
    const to = (await generateKeyPairSigner()).address;
    await owner.call('owner', 'recovery_sweep_start', { wallet_id: agent.walletId, to_address: to });
    const sweep = (await liveSweepOf(owner, agent.walletId))!;
    await afterDelay(async () => {
      await Promise.all([1, 2, 3].map(() => openRound(owner, kit, sweep.sweep_id)));
      expect(await outstandingOut(world.services.db, agent.walletId)).toBe(6_000_000n);
      expect((await signSweep(owner, kit, PASSPHRASE, sweep)).status).toBe('completed');
    });
    expect(await world.balance(to)).toBe(6_000_000n);
    expect(await outstandingOut(world.services.db, agent.walletId)).toBe(0n);
  }, 60_000);

  test("a sweep whose transaction failed (the operator's fee payer out of SOL) is signed again once it is topped up, or cancelled; nothing moved meanwhile", async () => {
    const a = await enrolledAgent(2_000_000n);
    const b = await enrolledAgent(3_000_000n);
    const to = (await generateKeyPairSigner()).address;
    for (const w of [a, b]) await w.owner.call('owner', 'recovery_sweep_start', { wallet_id: w.agent.walletId, to_address: to });
    const [sweepA, sweepB] = [(await liveSweepOf(a.owner, a.agent.walletId))!, (await liveSweepOf(b.owner, b.agent.walletId))!];
    const sol = await world.services.chain.getSolBalance(world.services.feePayer.address);
    await drainFeePayer(world, 0n);
    try {
      await afterDelay(async () => {
        expect((await signSweep(a.owner, a.kit, PASSPHRASE, sweepA)).status).toBe('failed');
        expect((await signSweep(b.owner, b.kit, PASSPHRASE, sweepB)).status).toBe('failed');
      });
    } finally {
      await world.simnet.airdrop(world.services.feePayer.address, sol);
    }
    expect(await world.balance(to)).toBe(0n);
    await afterDelay(async () => {
      expect(await signSweep(a.owner, a.kit, PASSPHRASE, (await liveSweepOf(a.owner, a.agent.walletId))!)).toMatchObject({ status: 'completed', amount: 2 });
    });
    expect((await b.owner.call<{ status: string }>('owner', 'recovery_sweep_cancel', { sweep_id: sweepB.sweep_id })).status).toBe('cancelled');
    expect(await world.balance(to)).toBe(2_000_000n);
    expect(await world.balance(b.agent.address)).toBe(3_000_000n);
    expect(ledgerChainViolations('a sweep signed again after a failure', [{ account: a.agent.username, ledger: await ledgerOf(a.agent.walletId), chain: await world.balance(a.agent.address) }])).toEqual([]);
  }, 60_000);

  test('after a completed sweep, a later deposit is swept by a new announcement', async () => {
    const { agent, owner, kit } = await enrolledAgent(1_000_000n);
    const to = (await generateKeyPairSigner()).address;
    await owner.call('owner', 'recovery_sweep_start', { wallet_id: agent.walletId, to_address: to });
    await afterDelay(async () => expect((await signSweep(owner, kit, PASSPHRASE, (await liveSweepOf(owner, agent.walletId))!)).status).toBe('completed'));
    // A payer who still had the wallet's address pays it after the sweep.
    await world.fund(agent.address, 500_000n);
    await scanDeposits(world.services);
    const again = await owner.call<{ sweep_id: string; status: string }>('owner', 'recovery_sweep_start', { wallet_id: agent.walletId, to_address: to });
    expect(again.status).toBe('waiting');
    await afterDelay(async () => expect(await signSweep(owner, kit, PASSPHRASE, (await liveSweepOf(owner, agent.walletId))!)).toMatchObject({ status: 'completed', amount: 0.5 }));
    expect(await world.balance(to)).toBe(1_500_000n);
    expect(await world.balance(agent.address)).toBe(0n);
  }, 60_000);

  test("announcing a sweep revokes the wallet's exports with its key: a .wlt made before it releases nothing", async () => {
    const { agent, owner } = await enrolledAgent(1_000_000n);
    const exported = await agent.api.call<{ export_id: string; import_token: string }>('bot', 'wallet_export', {});
    await owner.call('owner', 'recovery_sweep_start', { wallet_id: agent.walletId, to_address: (await generateKeyPairSigner()).address });
    const imported = await errorOf(new ApiClient(world.url).call('bot', 'wallet_import_key', { export_id: exported.export_id, import_token: exported.import_token }));
    expect(imported.errorCode).toBe('INVALID_STATUS');
    const audit = await owner.call<any>('owner', 'audit_log', { wallet_id: agent.walletId });
    expect(audit.items.find((e: any) => e.kind === 'recovery.sweep_announced').data.revoked_exports).toEqual([exported.export_id]);
  }, 60_000);

  test("the owner's CLI signs once the daemon's clock passed the delay, whatever the owner's machine's clock says, and the balance lands", async () => {
    const { agent, token, kitPath } = await enrolledAgent(9_000_000n);
    const to = (await generateKeyPairSigner()).address;
    expect((await ownerCli(token, 'sweep', '--kit', kitPath, '--to', to)).code).toBe(5);
    // The daemon's clock runs an hour ahead of the owner's machine (the CLI runs on the real clock).
    const signed = await afterDelay(() => ownerCli(token, 'sweep', '--kit', kitPath, '--to', to));
    expect(signed.code).toBe(0);
    expect(signed.json).toMatchObject({ status: 'completed', amount: 9 });
    expect(await world.balance(to)).toBe(9_000_000n);
    expect(await world.balance(agent.address)).toBe(0n);
  }, 60_000);

  test('the very same complete sent again after the sweep landed is refused: one signature, one transfer', async () => {
    const { agent, owner, kit } = await enrolledAgent(2_500_000n);
    const to = (await generateKeyPairSigner()).address;
    const { sweep_id } = await owner.call<{ sweep_id: string }>('owner', 'recovery_sweep_start', { wallet_id: agent.walletId, to_address: to });
    await afterDelay(async () => {
      const key = openKit(kit, PASSPHRASE);
      const round = commit(key);
      const opened = await owner.call<any>('owner', 'recovery_sweep_sign', { sweep_id, commitments: encodeCommitments(round.commitments) });
      const share = recoverySignShare(key, round.nonces, [round.commitments, decodeCommitments(opened.server_commitments, SERVER_ID)], new Uint8Array(Buffer.from(opened.message, 'base64')));
      const body = { sweep_id, sign_session_id: opened.sign_session_id, signature_share: encodeSignatureShare(OWNER_ID, share) };
      expect(await owner.call<any>('owner', 'recovery_sweep_complete', body)).toMatchObject({ status: 'completed', amount: 2.5 });
      expect((await errorOf(owner.call('owner', 'recovery_sweep_complete', body))).errorCode).toBe('INVALID_STATUS');
    });
    const rows = await world.services.db.all("SELECT status FROM transactions WHERE wallet_id = ? AND decision_rule = 'recovery_sweep'", agent.walletId);
    expect(rows).toEqual([{ status: 'completed' }]);
    expect(await world.balance(to)).toBe(2_500_000n);
  }, 60_000);
});
