/**
 * A ledger put back in time without `admin restore` or `mark-restored` — a PostgreSQL
 * point-in-time restore, an old copy of wallet.db — is caught at start: a signing round opened
 * before the point and completed after it (its nonces used, its payment landed) is open again in
 * the old ledger, and the daemon must never complete it. On SQLite the old ledger is a snapshot of
 * the file; on PostgreSQL (AW_TEST_PG_URL) a copy of the database made at that point, swapped in.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { snapshotDatabase } from '../../src/db/backup.ts';
import { commitmentList } from '../../src/frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../../src/frost/ids.ts';
import { commit, signShare } from '../../src/frost/party.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../../src/frost/wire.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { claimInLedger, customChainEnv, openDataDirLedger, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { PG_SERVER } from '../helpers/ledger.ts';
import { tempDir } from '../helpers/services.ts';
import { agentKey } from '../helpers/signing.ts';

let simnet: Simnet;
let daemon: DaemonProcess | null = null;
const dataDir = join(tempDir('aw-rewind-'), 'data');

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 50 });
});
afterAll(async () => {
  await daemon?.stop();
  await simnet.stop();
});

/** The PostgreSQL database the data dir's config names (the suite writes it there). */
const databaseOf = () => new URL(/url = "([^"]+)"/.exec(readFileSync(join(dataDir, 'config.toml'), 'utf8'))![1]!);

async function onServer(statement: string): Promise<void> {
  const admin = new SQL(PG_SERVER!, { max: 1 });
  await admin.unsafe(statement);
  await admin.close();
}

/** The ledger as it is now, kept aside (the daemon stopped on PostgreSQL: a database is copied without connections). */
async function keepPoint(): Promise<void> {
  if (!PG_SERVER) {
    snapshotDatabase(join(dataDir, 'wallet.db'), join(dataDir, '..', 'point.db'));
    return;
  }
  const name = databaseOf().pathname.slice(1);
  await onServer(`CREATE DATABASE ${name}_point TEMPLATE ${name}`);
}

/** Puts the ledger back to the point kept, the daemon stopped (on PostgreSQL the later database is dropped). */
async function rewind(): Promise<void> {
  if (!PG_SERVER) {
    for (const suffix of ['-wal', '-shm']) rmSync(join(dataDir, `wallet.db${suffix}`), { force: true });
    copyFileSync(join(dataDir, '..', 'point.db'), join(dataDir, 'wallet.db'));
    return;
  }
  const name = databaseOf().pathname.slice(1);
  await onServer(`ALTER DATABASE ${name} RENAME TO ${name}_later`);
  await onServer(`ALTER DATABASE ${name}_point RENAME TO ${name}`);
  await onServer(`DROP DATABASE ${name}_later`);
}

test('a ledger put back in time is caught at start: a round completed after the point is never completed again, and no restore command was needed', async () => {
  const env = customChainEnv(simnet.url);
  daemon = await startDaemonProcess({ dataDir, env });
  await simnet.airdrop(daemon.started.fee_payer as Address, 10_000_000_000n);
  await simnet.faucet(daemon.started.fee_payer as Address, 0n);
  const a = (await registerWallet(new ApiClient(daemon.url), { name: 'Rewind A' })).profile;
  const b = (await registerWallet(new ApiClient(daemon.url), { name: 'Rewind B' })).profile;
  await claimInLedger(dataDir, [a.wallet_id, b.wallet_id]);
  await simnet.faucet(a.address as Address, 20_000_000n);
  let api = new ApiClient(daemon.url, a.api_key);
  const first = await api.call<{ transaction_id: string }>('bot', 'pay', { to: b.username, amount: '1' });
  expect((await confirmSignSubmit(api, a, first.transaction_id)).status).toBe('completed');

  // A round opened now, before the point.
  const open = await api.call<{ transaction_id: string }>('bot', 'pay', { to: b.username, amount: '2' });
  await api.call('bot', 'confirm_payment', { transaction_id: open.transaction_id });
  const key = agentKey(a);
  const round = commit(key);
  const init = await api.call<{ sign_session_id: string; server_commitments: unknown; message: string }>('bot', 'frost_sign_init', { transaction_id: open.transaction_id, commitments: encodeCommitments(round.commitments) });
  const share = encodeSignatureShare(AGENT_ID, signShare(key, round.nonces, commitmentList(round.commitments, decodeCommitments(init.server_commitments, SERVER_ID)), new Uint8Array(Buffer.from(init.message, 'base64'))));
  if (PG_SERVER) await daemon.stop();
  await keepPoint();
  if (PG_SERVER) {
    daemon = await startDaemonProcess({ dataDir, env });
    api = new ApiClient(daemon.url, a.api_key);
  }

  // After the point: the round completes, its nonces are used, the payment lands.
  const done = await api.call<{ status: string; signature: string }>('bot', 'frost_sign_complete', { transaction_id: open.transaction_id, sign_session_id: init.sign_session_id, signature_share: share, submit: true });
  expect(done.signature).toBeTruthy();
  await daemon.stop();
  daemon = null;

  await rewind();
  const before = await openDataDirLedger(dataDir);
  expect(await before.store.get<{ status: string }>('SELECT status FROM sign_sessions WHERE sign_session_id = ?', init.sign_session_id)).toEqual({ status: 'open' });
  await before.close();

  daemon = await startDaemonProcess({ dataDir, env, timeoutMs: 60_000 });
  expect(daemon.logs()).toContain('the ledger was put back in time');
  api = new ApiClient(daemon.url, a.api_key);
  // Treated as restored: money actions wait until the ledger is reconciled with the chain.
  const held = await api.call('bot', 'frost_sign_complete', { transaction_id: open.transaction_id, sign_session_id: init.sign_session_id, signature_share: share }).then(
    () => null,
    (err: Error) => err,
  );
  expect(held?.message).toContain('reconciling its ledger with the chain');
  const deadline = Date.now() + 60_000;
  while (!daemon.logs().includes('restore: ledger reconciled with the chain')) {
    if (Date.now() > deadline) throw new Error('the ledger was never reconciled with the chain');
    await Bun.sleep(200);
  }
  const refused = await api.call('bot', 'frost_sign_complete', { transaction_id: open.transaction_id, sign_session_id: init.sign_session_id, signature_share: share }).then(
    () => null,
    (err: Error) => err,
  );
  expect(refused?.message).toContain('closed or expired');
  const after = await openDataDirLedger(dataDir);
  expect(await after.store.get<{ status: string; nonces: Uint8Array | null }>('SELECT status, nonces FROM sign_sessions WHERE sign_session_id = ?', init.sign_session_id)).toEqual({ status: 'failed', nonces: null });
  await after.close();
  // The payment that landed after the point comes back from the chain, once, with its landed
  // signature (recorded through the confirmation path, which may take a look after the reconciliation).
  const recovered = async () => (await api.call<{ items: { transaction_id: string; status: string; signature: string | null }[] }>('bot', 'list_payments', { limit: 50 })).items.filter((t) => t.transaction_id === open.transaction_id);
  const recordBy = Date.now() + 30_000;
  let rows = await recovered();
  while (rows[0]?.status !== 'completed' && Date.now() < recordBy) {
    await Bun.sleep(200);
    rows = await recovered();
  }
  expect(rows).toEqual([expect.objectContaining({ status: 'completed', signature: done.signature })]);
}, 180_000);
