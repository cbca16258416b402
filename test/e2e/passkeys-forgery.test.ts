/**
 * The operator with database access tries to forge the owner's word (issue 44, "Must show").
 *
 * A real world: the embedded simnet, the daemon's app on a real port over a SQLite FILE, agents
 * registered with the real client (FROST keys), an owner with a passkey (the soft authenticator)
 * and approval_above 20 on the payers. The honest path first: the owner approves on the dashboard
 * with the passkey, the agent confirms with the real client, the payment lands, and the exported
 * decision log passes `agent-wallet owner verify-log`.
 *
 * Then the operator opens the same SQLite file (bun:sqlite, a second connection, as `sqlite3
 * wallet.db` would) and flips a pending approval and its transaction to approved: with no
 * assertion, with the assertion of another (approved) approval copied in, with the owner's actor
 * name and a decision-log row chained onto the log, with the decision's time moved before the
 * owner's first passkey, or by pointing a new transaction at an approval the owner really signed.
 * The daemon refuses to co-sign each (confirm through the real agent client answers an error,
 * nothing lands on chain), and the export with a forged row fails verify-log at that row.
 */
import { Database } from 'bun:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { ProfileStore } from '../../src/client/profile.ts';
import { registerWallet } from '../../src/client/register.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { loadConfig } from '../../src/config.ts';
import { newId } from '../../src/contract/ids.ts';
import { buildServices } from '../../src/daemon/services.ts';
import { decideAsOwner, setGuardRails } from '../../src/actions/owner.ts';
import { getApproval } from '../../src/db/approvals.ts';
import { openDatabase } from '../../src/db/open.ts';
import { ensureOwner, insertOwnerToken } from '../../src/db/owners.ts';
import { markClaimed } from '../../src/db/wallets.ts';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { rowHash } from '../../src/domain/decision-log.ts';
import { ownerActor } from '../../src/domain/owner-actor.ts';
import { createLogger } from '../../src/log.ts';
import { approvalDecision } from '../../src/owner/passkeys.ts';
import { loadFeePayer, loadMasterKey } from '../../src/secret-files.ts';
import type { Services } from '../../src/services.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { createRpcChainPort, type ChainPort } from '../../src/solana/port.ts';
import { runCli } from '../helpers/daemon.ts';
import { startTestServer, tempDir } from '../helpers/services.ts';
import type { SoftAuthenticator } from '../helpers/soft-authenticator.ts';
import { enrol, newAuthenticator, sign } from '../owner/passkey-fixtures.ts';

const EMAIL = 'owner@example.com';

interface Agent {
  api: ApiClient;
  profile: Awaited<ReturnType<typeof registerWallet>>['profile'];
  walletId: string;
  address: Address;
  username: string;
}

let simnet: Simnet;
let chain: ChainPort;
let services: Services;
let server: { url: string; stop: () => Promise<void> };
let dbFile: string;
let ownerId: string;
let ownerToken: string;
let key: SoftAuthenticator;
let alice: Agent;
let carol: Agent;
let bob: Agent;
let dave: Agent;
let dir: string;
const errors: string[] = [];

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 200 });
  chain = createRpcChainPort(simnet.url);
  const dataDir = tempDir('aw-forgery-');
  dbFile = join(dataDir, 'wallet.db');
  const config = loadConfig({ dataDir }, { AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '1000000', AGENT_WALLET_RATE_LIMITS_PER_KEY_PER_MINUTE: '1000000' });
  config.rpcUrl = simnet.url;
  services = buildServices({
    config,
    // The ledger in a file, so the operator can open it beside the daemon.
    db: openDatabase(dbFile, { network: config.solana.network }),
    log: createLogger({ level: 'error', write: (l) => (errors.push(l), process.stderr.write(l)) }),
    masterKey: loadMasterKey(dataDir),
    feePayer: loadFeePayer(dataDir, 'fee-payer.json'),
    chain,
    listenUrl: () => 'http://127.0.0.1:8787',
  });
  await simnet.airdrop(services.feePayer.address, 100_000_000_000n);
  await simnet.faucet(services.feePayer.address, 0n);
  server = await startTestServer(services);
  const agent = async (name: string): Promise<Agent> => {
    const { profile } = await registerWallet(new ApiClient(server.url), { name });
    new ProfileStore(join(tempDir('aw-agent-'), 'home')).save('default', profile);
    return { api: new ApiClient(server.url, profile.api_key), profile, walletId: profile.wallet_id, address: profile.address as Address, username: profile.username };
  };
  alice = await agent('Alice');
  carol = await agent('Carol');
  bob = await agent('Bob');
  dave = await agent('Dave');
  const apiKey = newApiKey('owner');
  ownerId = await services.db.transaction(async () => {
    const { owner } = await ensureOwner(services.db, EMAIL, newId('owner'), Date.now());
    for (const a of [alice, carol, bob, dave]) await markClaimed(services.db, a.walletId, owner.owner_id, Date.now());
    await insertOwnerToken(services.db, { token_id: newId('ownerToken'), owner_id: owner.owner_id, token_hash: apiKey.hash, label: 'export', now: Date.now() });
    return owner.owner_id;
  });
  ownerToken = apiKey.key;
  await simnet.faucet(alice.address, 1_000_000_000n);
  await simnet.faucet(carol.address, 1_000_000_000n);
  await simnet.faucet(bob.address, 0n);
  await simnet.faucet(dave.address, 1_000_000_000n);
  for (const a of [alice, carol, dave]) await setGuardRails(services, ownerId, a.walletId, { approval_above: '20' }, 'dashboard');
  key = await newAuthenticator(services);
  await enrol(services, ownerId, key);
  dir = mkdtempSync(join(tmpdir(), 'aw-forgery-log-'));
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await simnet?.stop();
  await services?.db.close();
});

/** An intent above approval_above: awaiting the owner. */
async function pendingPayment(payer: Agent, amount: number): Promise<{ transaction_id: string; approval_id: string }> {
  const intent = await payer.api.call<{ transaction_id: string; approval_id: string; status: string }>('bot', 'pay', { to: bob.username, amount });
  expect(intent.status).toBe('awaiting_approval');
  return intent;
}

/** The operator's hands on the SQLite file. */
function operator<T>(fn: (db: Database) => T): T {
  const db = new Database(dbFile, { strict: true, safeIntegers: true });
  try {
    db.run('PRAGMA busy_timeout = 5000');
    return db.transaction(() => fn(db))();
  } finally {
    db.close();
  }
}

/** Flips an approval and its transaction to approved, as the daemon's decideApproval would write them. */
function flip(db: Database, approvalId: string, o: { evidence?: string | null; decidedAt?: number } = {}): void {
  const approval = db.query<{ subject_id: string }, [string]>('SELECT subject_id FROM approvals WHERE approval_id = ?').get(approvalId)!;
  db.run("UPDATE transactions SET status = 'approved', updated_at = ? WHERE transaction_id = ? AND status = 'awaiting_approval'", [Date.now(), approval.subject_id]);
  db.run("UPDATE approvals SET status = 'approved', decided_at = ?, decided_by = ?, evidence = ? WHERE approval_id = ?", [o.decidedAt ?? Date.now(), ownerActor(ownerId, 'email'), o.evidence ?? null, approvalId]);
}

/** Appends `data` as a row of the wallet's decision log, chained to the last row (no head: the next export signs one over it). */
function appendRow(db: Database, walletId: string, kind: string, data: Record<string, unknown>): number {
  const last = db.query<{ seq: bigint; hash: Uint8Array }, [string]>('SELECT seq, hash FROM decision_log WHERE wallet_id = ? ORDER BY seq DESC LIMIT 1').get(walletId)!;
  const row = { wallet_id: walletId, seq: Number(last.seq) + 1, at: Date.now(), kind, data: JSON.stringify(data) };
  db.run('INSERT INTO decision_log (wallet_id, seq, at, kind, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', [row.wallet_id, row.seq, row.at, row.kind, row.data, last.hash, rowHash(last.hash, row)]);
  db.run('INSERT INTO audit_log (wallet_id, actor, kind, data, created_at) VALUES (?, ?, ?, ?, ?)', [walletId, String(data.actor), kind, row.data, row.at]);
  return row.seq;
}

/** The approval.approved row the honest path logged, to copy its shape (and its assertion). */
async function honestRow(walletId: string): Promise<Record<string, any>> {
  const r = await services.db.get<{ data: string }>("SELECT data FROM decision_log WHERE wallet_id = ? AND kind = 'approval.approved' ORDER BY seq LIMIT 1", walletId);
  return JSON.parse(r!.data);
}

/** Confirming through the real agent client is refused; nothing moves on chain; the transaction is not signed. */
async function coSignRefused(payer: Agent, transactionId: string): Promise<string> {
  const before = await chain.getTokenBalance(bob.address, simnet.mint);
  const errorsBefore = errors.length;
  const err = await confirmSignSubmit(payer.api, payer.profile, transactionId).then(
    (r) => {
      throw new Error(`the daemon co-signed a forged approval: ${JSON.stringify(r)}`);
    },
    (e: { errorCode?: string; message: string }) => e,
  );
  expect(err.errorCode).toBe('AWAITING_APPROVAL');
  expect(err.message).toContain('The daemon does not sign this');
  const tx = await services.db.get<{ status: string; signature: string | null; signed_tx: Uint8Array | null }>('SELECT status, signature, signed_tx FROM transactions WHERE transaction_id = ?', transactionId);
  expect(tx!.signed_tx).toBeNull();
  expect(await chain.getTokenBalance(bob.address, simnet.mint)).toBe(before);
  expect(errors.slice(errorsBefore).join('\n')).toContain('refused to co-sign');
  return err.message;
}

let exports = 0;
/** `agent-wallet owner export-log` then `owner verify-log --key <the daemon's published key>`, both the real CLI. */
async function exportAndVerify(walletId: string): Promise<{ code: number; json: any; stdout: string }> {
  const out = join(dir, `log-${++exports}.jsonl`);
  const exported = await runCli(['owner', 'export-log', walletId, '--out', out, '--server', server.url, '--json'], { AGENT_WALLET_OWNER_TOKEN: ownerToken });
  expect(exported.code).toBe(0);
  const keyUrl = `${new URL(server.url).origin}/.well-known/agent-wallet/log-key`;
  const r = await runCli(['owner', 'verify-log', out, '--key', keyUrl, '--json']);
  return { code: r.code, json: r.json, stdout: r.stdout + r.stderr };
}

describe('the honest path', () => {
  test('the owner approves with the passkey, the agent confirms, the payment lands; the log verifies with the owner’s signature', async () => {
    const intent = await pendingPayment(alice, 25);
    const approval = (await getApproval(services.db, intent.approval_id))!;
    await decideAsOwner(services, ownerId, intent.approval_id, 'approved', 'dashboard', await sign(services, ownerId, approvalDecision(ownerId, approval), key));
    const before = await chain.getTokenBalance(bob.address, simnet.mint);
    expect((await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id)).status).toBe('completed');
    expect((await chain.getTokenBalance(bob.address, simnet.mint)) - before).toBe(25_000_000n);
    const v = await exportAndVerify(alice.walletId);
    expect(v.code).toBe(0);
    expect(v.json.owner_signatures).toMatchObject({ ok: true, first_bad: null, keys_added: 1 });
    expect(v.json.owner_signatures.signed_decisions).toBeGreaterThanOrEqual(1);
  }, 30_000);
});

describe('the operator forges an approval in the SQLite file', () => {
  test('approval and transaction flipped to approved, no assertion: the daemon refuses to co-sign, nothing lands', async () => {
    const intent = await pendingPayment(alice, 30);
    operator((db) => flip(db, intent.approval_id));
    expect((await getApproval(services.db, intent.approval_id))!.status).toBe('approved');
    expect(await coSignRefused(alice, intent.transaction_id)).toContain('carries no passkey assertion');
  }, 30_000);

  test('flipped with the assertion of another, really approved, approval copied in: refused, nothing lands', async () => {
    const intent = await pendingPayment(alice, 40);
    const copied = (await getApproval(services.db, (await honestRow(alice.walletId)).approval_id))!.evidence!;
    expect(JSON.parse(copied).credential_id).toBe(key.id);
    operator((db) => flip(db, intent.approval_id, { evidence: copied }));
    expect(await coSignRefused(alice, intent.transaction_id)).toContain('does not check');
  }, 30_000);

  test('flipped with an approval.approved row (no assertion) chained onto the log: refused, and the exported log fails verify-log at that row', async () => {
    const intent = await pendingPayment(alice, 50);
    const honest = await honestRow(alice.walletId);
    const { passkey: _dropped, ...shape } = honest;
    void _dropped;
    const seq = operator((db) => {
      flip(db, intent.approval_id);
      return appendRow(db, alice.walletId, 'approval.approved', { ...shape, transaction_id: intent.transaction_id, approval_id: intent.approval_id, amount: honest.amount * 2 });
    });
    await coSignRefused(alice, intent.transaction_id);
    const v = await exportAndVerify(alice.walletId);
    expect(v.code).toBe(1);
    expect(v.json.ok).toBe(false);
    expect(v.json.owner_signatures.first_bad.seq).toBe(seq);
    expect(v.json.owner_signatures.first_bad.reason).toContain('carries no passkey assertion');
  }, 30_000);

  test('flipped with a copied assertion and a chained row carrying it: refused, and verify-log fails at that row', async () => {
    // Carol's wallet: its log is clean, so verify-log's first bad row is this one.
    const first = await pendingPayment(carol, 25);
    await decideAsOwner(services, ownerId, first.approval_id, 'approved', 'dashboard', await sign(services, ownerId, approvalDecision(ownerId, (await getApproval(services.db, first.approval_id))!), key));
    expect((await confirmSignSubmit(carol.api, carol.profile, first.transaction_id)).status).toBe('completed');
    expect((await exportAndVerify(carol.walletId)).code).toBe(0);
    const intent = await pendingPayment(carol, 60);
    const honest = await honestRow(carol.walletId);
    const seq = operator((db) => {
      flip(db, intent.approval_id, { evidence: JSON.stringify(honest.passkey) });
      return appendRow(db, carol.walletId, 'approval.approved', { ...honest, transaction_id: intent.transaction_id, approval_id: intent.approval_id, amount: 60_300_000 });
    });
    await coSignRefused(carol, intent.transaction_id);
    const v = await exportAndVerify(carol.walletId);
    expect(v.code).toBe(1);
    expect(v.json.owner_signatures.first_bad.seq).toBe(seq);
    expect(v.json.owner_signatures.first_bad.reason).toMatch(/another decision|does not check/);
  }, 60_000);
});

/**
 * Forgeries that move or grow what the owner approved (src/payments/recheck.ts ownerSignatureMissing →
 * src/owner/passkeys.ts approvalUnsigned): a back-dated decision, an approval cleared or pointed at
 * another transaction, a raised amount; and the log check that a waiting payment is signed only after
 * the owner's approval row.
 */
describe('forgeries the co-sign check must also refuse', () => {
  test('an approval whose decided_at is moved before the owner’s first passkey: refused, nothing lands', async () => {
    const intent = await pendingPayment(alice, 21);
    operator((db) => flip(db, intent.approval_id, { decidedAt: 1 }));
    await coSignRefused(alice, intent.transaction_id);
  }, 30_000);

  test('a transaction set to approved with its approval_id cleared (one UPDATE, no approval at all): refused, nothing lands', async () => {
    const intent = await pendingPayment(alice, 27);
    operator((db) => db.run("UPDATE transactions SET status = 'approved', approval_id = NULL WHERE transaction_id = ?", [intent.transaction_id]));
    await coSignRefused(alice, intent.transaction_id);
  }, 30_000);

  test('a new transaction pointed at an approval the owner really signed (another payment’s): refused, nothing lands', async () => {
    const intent = await pendingPayment(alice, 22);
    const signed = (await honestRow(alice.walletId)).approval_id as string;
    operator((db) => db.run("UPDATE transactions SET status = 'approved', approval_id = ? WHERE transaction_id = ?", [signed, intent.transaction_id]));
    await coSignRefused(alice, intent.transaction_id);
  }, 30_000);

  test('the amount of a transaction the owner really approved raised in the file (25 → 90): refused, nothing lands', async () => {
    const intent = await pendingPayment(alice, 25);
    await decideAsOwner(services, ownerId, intent.approval_id, 'approved', 'dashboard', await sign(services, ownerId, approvalDecision(ownerId, (await getApproval(services.db, intent.approval_id))!), key));
    operator((db) => db.run('UPDATE transactions SET amount = ? WHERE transaction_id = ?', [90_000_000, intent.transaction_id]));
    await coSignRefused(alice, intent.transaction_id);
  }, 30_000);

  test('a payment that waited for the owner never both lands and verifies: without an owner-signed approval row, verify-log fails', async () => {
    // Dave's wallet: a clean log. The backdated flip above, without a log row.
    const intent = await pendingPayment(dave, 23);
    operator((db) => flip(db, intent.approval_id, { decidedAt: 1 }));
    const r = await confirmSignSubmit(dave.api, dave.profile, intent.transaction_id).catch((e: { errorCode?: string }) => e);
    if ((r as { status?: string }).status !== 'completed') {
      expect((r as { errorCode?: string }).errorCode).toBe('AWAITING_APPROVAL');
      return;
    }
    // It landed: the log has the intent (awaiting approval), the signing and the completion, and no approval by the owner.
    const v = await exportAndVerify(dave.walletId);
    expect(v.code).toBe(1);
  }, 30_000);
});
