/**
 * The money races of one node (money-races, approvals-and-rails, signing-safety, setup-fee-holds)
 * with their two parties on two daemons of one PostgreSQL ledger (DESIGN §10.2): each race is
 * fired at once (Promise.all) through node A and node B, with the real client over HTTP. Every
 * figure that says money moved once is read from the chain, and each wallet's ledger is then
 * compared with it. Setup the single-node tests also write to the ledger directly (a claim, an
 * owner's API token) is written here the same way.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { ApiClient, ApiError } from '../../src/client/api.ts';
import type { ProfileData } from '../../src/client/profile.ts';
import { registerWallet } from '../../src/client/register.ts';
import { AgentRound, confirmSignSubmit, type RoundAnswer } from '../../src/client/sign.ts';
import { newId } from '../../src/contract/ids.ts';
import type { Ledger } from '../../src/db/ledger.ts';
import { ensureOwner, insertOwnerToken } from '../../src/db/owners.ts';
import { markClaimed } from '../../src/db/wallets.ts';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { createRpcChainPort, type ChainPort } from '../../src/solana/port.ts';
import { openDataDirLedger } from '../helpers/daemon.ts';
import { errorOf } from '../helpers/errors.ts';
import { startNodes, type Nodes } from '../helpers/nodes.ts';
import { pgServerForFile, type PgCluster } from '../helpers/pg.ts';
import { until } from '../helpers/poll.ts';

const USDC = 1_000_000n;
const PLATFORM_FEE = 10_000n; // 0.01: the minimum, above 0.5 % of 1 or 2 USDC
const SETUP_FEE = 250_000n;

let simnet: Simnet;
let cluster: PgCluster | null = null;
let nodes: Nodes;
/** The shared ledger, opened by the test for setup writes (claims, owner tokens) and reads. */
let ledger: Ledger;
let chain: ChainPort;
let treasury: Address;
/** Node A's and node B's API URLs. */
let urls: [string, string];

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 100 });
  const server = await pgServerForFile('the two-node race tests', 'fail');
  cluster = server.cluster;
  nodes = await startNodes(server.url, simnet, 2);
  urls = [nodes.nodes[0]!.url, nodes.nodes[1]!.url];
  ledger = await openDataDirLedger(nodes.nodes[0]!.dataDir);
  chain = createRpcChainPort(simnet.url);
  treasury = nodes.nodes[0]!.started.fee_payer as Address;
  // A PostgreSQL cluster and two daemons: longer than the default 5 s on a loaded machine.
}, 60_000);
afterAll(async () => {
  await ledger?.close();
  await nodes?.stop();
  await simnet?.stop();
  await cluster?.stop();
}, 30_000);

const A = 0;
const B = 1;

interface Party {
  profile: ProfileData;
  walletId: string;
  address: Address;
  username: string;
  /** The agent's client on node `node`. */
  on(node: number): ApiClient;
}

const ownerTokens = new Map<string, string>();

/** Claims the wallets for `email` in the ledger (as the claim flow would) and returns that owner's client on `node`. */
async function claim(walletIds: string[], email: string, node = A): Promise<ApiClient> {
  const db = ledger.store;
  const key = ownerTokens.has(email) ? null : newApiKey('owner');
  await db.transaction(async () => {
    const { owner } = await ensureOwner(db, email, newId('owner'), Date.now());
    for (const id of walletIds) await markClaimed(db, id, owner.owner_id, Date.now());
    if (key) await insertOwnerToken(db, { token_id: newId('ownerToken'), owner_id: owner.owner_id, token_hash: key.hash, label: 'test', now: Date.now() });
  });
  if (key) ownerTokens.set(email, key.key);
  return new ApiClient(urls[node]!, ownerTokens.get(email));
}

/** A wallet registered through `node` (DKG over HTTP), claimed by `email`, holding `usdc` on chain (its token account made even for 0). */
async function party(name: string, node: number, email: string, usdc = 0n): Promise<Party> {
  const { profile } = await registerWallet(new ApiClient(urls[node]!), { name });
  await claim([profile.wallet_id], email);
  await simnet.faucet(profile.address as Address, usdc);
  return { profile, walletId: profile.wallet_id, address: profile.address as Address, username: profile.username, on: (n) => new ApiClient(urls[n]!, profile.api_key) };
}

const onChain = (address: Address) => chain.getTokenBalance(address, simnet.mint);

/** What the ledger says a wallet holds: completed incoming (deposits the chain watch recorded, payments received) minus completed outgoing with fees. */
async function ledgerBalance(walletId: string): Promise<bigint> {
  const row = await ledger.store.get<{ b: bigint }>(
    `SELECT coalesce(sum(CASE WHEN direction = 'in' THEN amount ELSE -(amount + fee + setup_fee) END), 0) AS b FROM transactions WHERE wallet_id = ? AND status = 'completed'`,
    walletId,
  );
  return BigInt(row!.b);
}

/** Each wallet's ledger equals its chain balance, once the chain watch (one node's, every 3 s) has recorded the faucet's deposits. */
async function ledgerMatchesChain(parties: Party[]): Promise<void> {
  const last: Record<string, { ledger: bigint; chain: bigint }> = {};
  try {
    await until(
      'ledger = chain',
      async () => {
        for (const p of parties) last[p.username] = { ledger: await ledgerBalance(p.walletId), chain: await onChain(p.address) };
        return Object.values(last).every((v) => v.ledger === v.chain);
      },
      20_000,
      200,
    );
  } catch (err) {
    // The figures that stayed apart, not just "timed out".
    expect(last).toEqual(Object.fromEntries(Object.entries(last).map(([k, v]) => [k, { ledger: v.chain, chain: v.chain }])));
    throw err;
  }
}

/** Setup fees the ledger charged on completed payments to `address`. */
async function setupFeesCharged(address: string): Promise<bigint> {
  const row = await ledger.store.get<{ s: bigint }>("SELECT coalesce(sum(setup_fee), 0) AS s FROM transactions WHERE to_address = ? AND direction = 'out' AND status = 'completed'", address);
  return BigInt(row!.s);
}

/** Landed transactions that touched `owner`'s USDC account. */
async function landedTransfersTo(owner: Address): Promise<number> {
  const ata = await usdcAta(owner, simnet.mint);
  return (await chain.getSignaturesForAddress(ata, { limit: 1000 })).filter((s) => s.err === null).length;
}

type Outcome = { done: Record<string, any> } | { refused: ApiError };

/** One payment the whole way through `api` (pay → confirm → FROST → submit), as an agent's client makes it; a refusal is an outcome. */
async function payThrough(api: ApiClient, profile: ProfileData, params: Record<string, unknown>): Promise<Outcome> {
  try {
    const intent = await api.call<any>('bot', 'pay', params);
    if (intent.status !== 'pre_approved') return { done: intent };
    return { done: await confirmSignSubmit(api, profile, intent.transaction_id) };
  } catch (err) {
    if (err instanceof ApiError) return { refused: err };
    throw err;
  }
}

const completed = (outcomes: Outcome[]) => outcomes.flatMap((o) => ('done' in o && o.done.status === 'completed' ? [o.done] : []));
const refusals = (outcomes: Outcome[]) => outcomes.flatMap((o) => ('refused' in o ? [o.refused.errorCode] : []));

test('4 agents on alternating nodes pay one fixed paylink at once: one completes, 3 INVALID_STATUS; the payee receives the amount once on chain; ledger = chain', async () => {
  const payee = await party('Paylink Payee', A, 'paylink-payee@example.com');
  const payers = await Promise.all([0, 1, 2, 3].map((i) => party(`Paylink Payer ${i}`, i % 2, `paylink-payer-${i}@example.com`, 5n * USDC)));
  const link = await payee.on(A).call<any>('bot', 'create_payment_request', { description: 'One order', amount: '2' });
  const before = await Promise.all([payee, ...payers].map((p) => onChain(p.address)));

  const outcomes = await Promise.all(payers.map((p, i) => payThrough(p.on(i % 2), p.profile, { payment_request_id: link.request_id })));

  const winners = outcomes.flatMap((o, i) => ('done' in o ? [i] : []));
  expect(winners).toHaveLength(1);
  expect(completed(outcomes)).toHaveLength(1);
  expect(refusals(outcomes)).toEqual(['INVALID_STATUS', 'INVALID_STATUS', 'INVALID_STATUS']);
  const after = await Promise.all([payee, ...payers].map((p) => onChain(p.address)));
  expect(after[0]! - before[0]!).toBe(2n * USDC);
  for (const i of payers.keys()) {
    const paid = i === winners[0] ? 2n * USDC + PLATFORM_FEE : 0n;
    expect({ payer: i, spent: before[i + 1]! - after[i + 1]! }).toEqual({ payer: i, spent: paid });
  }
  for (const node of [A, B]) {
    expect(await payee.on(node).call<any>('bot', 'get_payment_request', { request_id: link.request_id })).toMatchObject({ status: 'paid', paid_amount: 2, rejected_payments: [] });
  }
  await ledgerMatchesChain([payee, ...payers]);
}, 60_000);

test('a daily budget for one payment, two payments at once through node A and node B: one pre_approved and completed, the other rejected by the budget; the chain moved once; ledger = chain', async () => {
  const payer = await party('Budget Payer', A, 'budget@example.com', 10n * USDC);
  const payee = await party('Budget Payee', B, 'budget-payee@example.com');
  // 1 + 0.01 fee = 1.01: the daily budget holds exactly one of them.
  const owner = await claim([], 'budget@example.com', B);
  await owner.call('owner', 'set_guard_rails', { wallet_id: payer.walletId, rails: { budgets: { daily: '1.01' }, on_budget_exceeded: 'reject' } });
  const [p0, q0] = await Promise.all([onChain(payer.address), onChain(payee.address)]);

  const outcomes = await Promise.all([A, B].map((node) => payThrough(payer.on(node), payer.profile, { to: payee.username, amount: '1' })));

  expect(refusals(outcomes)).toEqual([]);
  const statuses = outcomes.map((o) => ('done' in o ? o.done.status : null)).sort();
  expect(statuses).toEqual(['completed', 'rejected']);
  const rejected = outcomes.flatMap((o) => ('done' in o && o.done.status === 'rejected' ? [o.done] : []))[0]!;
  expect(rejected.decision).toMatchObject({ rule: expect.stringContaining('budget') });
  expect((await errorOf(payer.on(A).call('bot', 'confirm_payment', { transaction_id: rejected.transaction_id }))).errorCode).toBe('INVALID_STATUS');
  for (const node of [A, B]) {
    const limits = await payer.on(node).call<any>('bot', 'my_limits');
    expect({ node, used: limits.used.daily, remaining: limits.remaining.daily }).toEqual({ node, used: 1.01, remaining: 0 });
  }
  expect((await onChain(payee.address)) - q0).toBe(USDC);
  expect(p0 - (await onChain(payer.address))).toBe(USDC + PLATFORM_FEE);
  await ledgerMatchesChain([payer, payee]);
}, 60_000);

test('an approval decided at once through both nodes (approve on A with reject on B, then approve on A with approve on B): one decision holds, the other is INVALID_STATUS; the payment moves at most once on chain', async () => {
  const payer = await party('Approval Payer', A, 'approval@example.com', 100n * USDC);
  const payee = await party('Approval Payee', B, 'approval-payee@example.com');
  const owners = [await claim([], 'approval@example.com', A), await claim([], 'approval@example.com', B)];
  await owners[A]!.call('owner', 'set_guard_rails', { wallet_id: payer.walletId, rails: { approval_above: '20' } });
  const p0 = await onChain(payer.address);
  const q0 = await onChain(payee.address);
  let moved = 0n;

  for (const pair of [['approve', 'reject'], ['approve', 'approve']] as const) {
    const intent = await payer.on(A).call<any>('bot', 'pay', { to: payee.username, amount: '21' });
    expect(intent.status).toBe('awaiting_approval');
    const outcomes = await Promise.all(
      pair.map((action, node) => owners[node]!.call('owner', action, { approval_id: intent.approval_id }).then(() => `${action} won`, (err: ApiError) => err.errorCode)),
    );
    const won = outcomes.filter((o) => o.endsWith('won'));
    expect({ pair, won: won.length }).toEqual({ pair, won: 1 });
    expect(outcomes.filter((o) => !o.endsWith('won'))).toEqual(['INVALID_STATUS']);
    const decision = won[0]!.startsWith('approve') ? 'approved' : 'rejected';
    for (const node of [A, B]) expect((await payer.on(node).call<any>('bot', 'approval_status', { approval_id: intent.approval_id })).status).toBe(decision);
    // One decision in the wallet's decision log.
    const decided = await ledger.store.all<{ kind: string }>("SELECT kind FROM audit_log WHERE wallet_id = ? AND data LIKE ? AND kind LIKE 'approval.%'", payer.walletId, `%${intent.approval_id}%`);
    expect(decided).toHaveLength(1);
    // The agent confirms through node B: an approved payment completes once, a rejected one is refused.
    if (decision === 'approved') {
      expect((await confirmSignSubmit(payer.on(B), payer.profile, intent.transaction_id)).status).toBe('completed');
      moved += 21n * USDC;
    } else {
      expect((await errorOf(confirmSignSubmit(payer.on(B), payer.profile, intent.transaction_id))).errorCode).toBe('INVALID_STATUS');
    }
    expect((await onChain(payee.address)) - q0).toBe(moved);
  }
  // 0.5 % of 21 USDC: 0.105 fee per payment that moved.
  expect(p0 - (await onChain(payer.address))).toBe(moved + (moved / (21n * USDC)) * 105_000n);
  await ledgerMatchesChain([payer, payee]);
}, 60_000);

test("one signing round opened on node A, its agent share sent to node A and node B at once: one signature, one used round, one transfer on chain; replayed afterwards through either node it signs nothing new, and another share for the used round is INVALID_STATUS", async () => {
  const payer = await party('Nonce Payer', A, 'nonce@example.com', 10n * USDC);
  const payee = await party('Nonce Payee', B, 'nonce-payee@example.com');
  const q0 = await onChain(payee.address);
  const landed0 = await landedTransfersTo(payee.address);
  // The fast path: pay with the agent's commitments opens the round on node A.
  const round = new AgentRound(payer.profile);
  const answer = await payer.on(A).call<RoundAnswer & { transaction_id: string; status: string }>('bot', 'pay', { to: payee.username, amount: '1', commitments: round.commitments });
  expect(answer.status).toBe('pre_approved');
  expect(answer.sign_session_id).toBeString();
  const share = round.share(answer.server_commitments, new Uint8Array(Buffer.from(answer.message, 'base64')));
  const complete = (node: number, signatureShare = share) =>
    payer.on(node).call<any>('bot', 'frost_sign_complete', { transaction_id: answer.transaction_id, sign_session_id: answer.sign_session_id, signature_share: signatureShare, submit: true, wait: true });

  const raced = await Promise.all([A, B].map((node) => complete(node).then((done) => ({ node, done }), (err: ApiError) => ({ node, refused: err.errorCode }))));

  // Each answer names the one signature (an identical share answers the stored result, signing-safety's rule) or is INVALID_STATUS; at least one signed.
  const signed = raced.flatMap((r) => ('done' in r ? [r.done.signature as string] : []));
  expect(signed.length).toBeGreaterThanOrEqual(1);
  expect(new Set(signed).size).toBe(1);
  for (const r of raced) if ('refused' in r) expect(r.refused).toBe('INVALID_STATUS');
  const signature = signed[0]!;
  const done = await payer.on(A).call<any>('bot', 'submit_signed_tx', { transaction_id: answer.transaction_id, wait: true });
  expect(done).toMatchObject({ status: 'completed', signature });
  const used = await ledger.store.get<{ n: bigint }>("SELECT count(*) AS n FROM sign_sessions WHERE transaction_id = ? AND status = 'used'", answer.transaction_id);
  expect(BigInt(used!.n)).toBe(1n);
  // One node signed: one signing decision in the wallet's decision log.
  const decisions = await ledger.store.get<{ n: bigint }>("SELECT count(*) AS n FROM decision_log WHERE wallet_id = ? AND kind = 'signing.signed' AND data LIKE ?", payer.walletId, `%${answer.transaction_id}%`);
  expect(BigInt(decisions!.n)).toBe(1n);

  // The completed round's package replayed through each node: the stored bytes again, never a second signature.
  for (const node of [B, A]) expect(await complete(node)).toMatchObject({ transaction_id: answer.transaction_id, status: 'completed', signature });
  // Another share for the used round (its first byte changed) is refused on both nodes, and so is a new round.
  const other = { ...share, share: share.share.replace(/^../, (h: string) => ((parseInt(h, 16) + 1) % 256).toString(16).padStart(2, '0')) };
  for (const node of [B, A]) expect((await errorOf(complete(node, other))).errorCode).toBe('INVALID_STATUS');
  const fresh = new AgentRound(payer.profile);
  for (const node of [B, A]) {
    const again = await errorOf(payer.on(node).call('bot', 'frost_sign_init', { transaction_id: answer.transaction_id, commitments: fresh.commitments }));
    expect(['INVALID_STATUS', 'ALREADY_COMPLETED']).toContain(again.errorCode);
  }

  expect((await onChain(payee.address)) - q0).toBe(USDC);
  expect(await landedTransfersTo(payee.address)).toBe(landed0 + 1);
  await ledgerMatchesChain([payer, payee]);
}, 60_000);

/** A pay with an idempotency key, as raw HTTP: status, the replay marker and the body as sent. */
async function rawPay(node: number, apiKey: string, body: Record<string, unknown>, key: string) {
  const res = await fetch(`${urls[node]}/bot`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'x-idempotency-key': key },
    body: JSON.stringify({ action: 'pay', ...body }),
  });
  return { node, status: res.status, replayed: res.headers.get('idempotent-replayed'), text: await res.text() };
}

test('the same pay with the same X-Idempotency-Key through node A and node B at once: one payment, every answer its transaction_id or the 409 still-running refusal; retries through either node replay the same answer, also after it completed', async () => {
  const payer = await party('Idempotent Payer', A, 'idem@example.com', 10n * USDC);
  const payee = await party('Idempotent Payee', B, 'idem-payee@example.com');
  const body = { to: payee.username, amount: '0.77' };
  const key = `order-${newId('transaction')}`;
  const q0 = await onChain(payee.address);

  const raced = await Promise.all([A, B, A, B, A, B].map((node) => rawPay(node, payer.profile.api_key, body, key)));

  const ok = raced.filter((r) => r.status === 200);
  expect(ok.length).toBeGreaterThanOrEqual(1);
  for (const r of raced) if (r.status !== 200) expect({ node: r.node, status: r.status, code: JSON.parse(r.text).error.code }).toEqual({ node: r.node, status: 409, code: 'IDEMPOTENCY_CONFLICT' });
  const ids = new Set(ok.map((r) => JSON.parse(r.text).data.transaction_id as string));
  const created = await ledger.store.all<{ transaction_id: string }>("SELECT transaction_id FROM transactions WHERE wallet_id = ? AND direction = 'out'", payer.walletId);
  expect({ answered: [...ids], created: created.map((r) => r.transaction_id) }).toEqual({ answered: [...ids].slice(0, 1), created: [...ids].slice(0, 1) });
  const first = ok[0]!;
  const txId = [...ids][0]!;

  // A retry through either node replays the recorded answer.
  for (const node of [A, B]) expect(await rawPay(node, payer.profile.api_key, body, key)).toMatchObject({ status: 200, replayed: 'true', text: first.text });
  expect((await confirmSignSubmit(payer.on(B), payer.profile, txId)).status).toBe('completed');
  for (const node of [B, A]) expect(await rawPay(node, payer.profile.api_key, body, key)).toMatchObject({ status: 200, replayed: 'true', text: first.text });
  expect((await onChain(payee.address)) - q0).toBe(770_000n);
  await ledgerMatchesChain([payer, payee]);
}, 60_000);

test('two agents, one on each node, pay the same new raw address at once: both complete, the account is created once and one setup fee is charged on chain; ledger = chain', async () => {
  const payers = await Promise.all([A, B].map((node) => party(`Setup Payer ${node}`, node, `setup-${node}@example.com`, 5n * USDC)));
  const outside = (await generateKeyPairSigner()).address;
  expect(await chain.tokenAccountExists(outside, simnet.mint)).toBe(false);
  const before = await Promise.all(payers.map((p) => onChain(p.address)));
  const t0 = await onChain(treasury);

  const outcomes = await Promise.all(payers.map((p, node) => payThrough(p.on(node), p.profile, { to: outside, amount: '1' })));

  expect(refusals(outcomes)).toEqual([]);
  const done = completed(outcomes);
  expect(done).toHaveLength(2);
  expect(done.filter((d) => d.fee_breakdown.account_setup_fee > 0)).toHaveLength(1);
  const after = await Promise.all(payers.map((p) => onChain(p.address)));
  // One payer's debit carries the setup fee, the other's does not.
  expect(payers.map((_, i) => before[i]! - after[i]!).sort((x, y) => (x < y ? -1 : 1))).toEqual([USDC + PLATFORM_FEE, USDC + PLATFORM_FEE + SETUP_FEE]);
  expect(await onChain(outside)).toBe(2n * USDC);
  expect((await onChain(treasury)) - t0).toBe(2n * PLATFORM_FEE + SETUP_FEE);
  expect(await chain.tokenAccountExists(outside, simnet.mint)).toBe(true);
  expect(await setupFeesCharged(outside)).toBe(SETUP_FEE);
  await ledgerMatchesChain(payers);
}, 60_000);
