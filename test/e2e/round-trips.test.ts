/**
 * The fast path (issue 15 part 3, DESIGN §6.2): a pre-approved payment in two HTTP round trips and
 * an approved one in three, counted by the daemon's own request counters in /metrics, from the
 * real CLI and the real MCP server; and the rules the fast path keeps — a payment that waits for
 * the owner opens no signing session, a replayed pay opens no second one, malformed commitments
 * create nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { randomUUID } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import type { ApiClient } from '../../src/client/api.ts';
import { AgentRound, completePay, type RoundAnswer } from '../../src/client/sign.ts';
import { commitsOf } from '../../src/db/commit-count.ts';
import { getTx } from '../../src/db/transactions.ts';
import { MAIN, runCli } from '../helpers/daemon.ts';
import { errorOf } from '../helpers/errors.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';


/** `hex` (a commitment) plus a point of order 8: still canonical and on the curve, no longer in the prime-order subgroup. */
function withTorsion(hex: string): string {
  return ed25519.Point.fromHex(hex).add(ed25519.Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a')).toHex();
}

let world: World;
let alice: Agent;
let bob: Agent;
let owner: ApiClient;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice');
  bob = await world.agent('Bob');
  owner = await world.claim(alice.walletId, 'owner@example.com');
  await world.claim(bob.walletId, 'other@example.com');
  await world.fund(alice.address, 1_000_000_000n);
});
afterAll(() => world.stop());

/** The /bot request counters by action (all statuses), from the daemon's /metrics. */
async function botRequests(): Promise<Map<string, number>> {
  const text = await (await fetch(world.url.replace(/\/v1$/, '/metrics'))).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^agent_wallet_requests_total\{endpoint="bot",action="([a-z_0-9]+)",status="\d+"\} (\d+)$/gm)) {
    counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return counts;
}

/** The requests made while `run` ran, by action. */
async function requestsDuring(run: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = await botRequests();
  await run();
  const after = await botRequests();
  const delta: Record<string, number> = {};
  for (const [action, n] of after) if (n !== (before.get(action) ?? 0)) delta[action] = n - (before.get(action) ?? 0);
  return delta;
}

const sessionsOf = async (txId: string) => ((await world.services.db.get('SELECT count(*) AS n FROM sign_sessions WHERE transaction_id = ?', txId)) as { n: bigint }).n;
const cli = (agent: Agent, ...args: string[]) => runCli([...args, '--server', world.url, '--home', agent.home, '--json']);
const setRails = (rails: Record<string, unknown>) => owner.call('owner', 'set_guard_rails', { wallet_id: alice.walletId, rails });

describe('the server side of the fast path', () => {
  test('pay with commitments answers with the message, summary and signing round; frost_sign_complete with submit and wait answers completed, and a retry the same transaction', async () => {
    const round = new AgentRound(alice.profile);
    const answer = await alice.api.call<RoundAnswer & { transaction_id: string; status: string; sign_expires_at: string }>('bot', 'pay', { to: bob.username, amount: '1', commitments: round.commitments });
    expect(answer.status).toBe('pre_approved');
    expect(answer.signed).toBe(false);
    expect(answer.message.length).toBeGreaterThan(100);
    expect(answer.summary).toMatchObject({ to: bob.username, to_address: bob.address, amount: 1 });
    expect(answer.sign_session_id).toMatch(/^sig_/);
    expect(Object.keys(answer.server_commitments as object).sort()).toEqual(['binding', 'hiding', 'identifier']);
    expect(Date.parse(answer.sign_expires_at)).toBeGreaterThan(Date.now());
    expect(await sessionsOf(answer.transaction_id)).toBe(1n);
    const share = round.share(answer.server_commitments, new Uint8Array(Buffer.from(answer.message, 'base64')));
    // The nonces signed once; they never sign again.
    expect(() => round.share(answer.server_commitments, new Uint8Array(8))).toThrow('used once');
    const complete = () => alice.api.call<Record<string, unknown>>('bot', 'frost_sign_complete', { transaction_id: answer.transaction_id, sign_session_id: answer.sign_session_id, signature_share: share, submit: true, wait: true });
    const done = await complete();
    expect(done).toMatchObject({ transaction_id: answer.transaction_id, status: 'completed' });
    expect(done.signature).toBeString();
    // An identical retry answers with the same transaction: the stored bytes, never a second signature.
    expect(await complete()).toMatchObject({ status: 'completed', signature: done.signature });
    const again = await errorOf(alice.api.call('bot', 'confirm_payment', { transaction_id: answer.transaction_id, commitments: new AgentRound(alice.profile).commitments }));
    expect(again.errorCode).toBe('ALREADY_COMPLETED');
    expect(await sessionsOf(answer.transaction_id)).toBe(1n);
  });

  test('the fast path commits twice: pay (intent, its idempotent answer, message and round) once, frost_sign_complete once; the completion is its look’s one commit', async () => {
    const { db } = world.services;
    const round = new AgentRound(alice.profile);
    let before = commitsOf(db);
    const answer = await alice.api.call<RoundAnswer & { transaction_id: string }>('bot', 'pay', { to: bob.username, amount: '0.5', commitments: round.commitments }, { idempotencyKey: randomUUID() });
    expect(commitsOf(db) - before).toBe(1);
    expect(await sessionsOf(answer.transaction_id)).toBe(1n);
    const share = round.share(answer.server_commitments, new Uint8Array(Buffer.from(answer.message, 'base64')));
    before = commitsOf(db);
    const sent = await alice.api.call<Record<string, unknown>>('bot', 'frost_sign_complete', { transaction_id: answer.transaction_id, sign_session_id: answer.sign_session_id, signature_share: share, submit: true });
    expect(sent.status).toBe('pending');
    expect(commitsOf(db) - before).toBe(1);
    before = commitsOf(db);
    const done = await alice.api.call<Record<string, unknown>>('bot', 'submit_signed_tx', { transaction_id: answer.transaction_id, wait: true });
    expect(done.status).toBe('completed');
    expect(commitsOf(db) - before).toBe(1);
  });

  test('a replayed pay returns the intent as created: no second session, no second server commitments', async () => {
    const key = randomUUID();
    const first = await alice.api.call<Record<string, any>>('bot', 'pay', { to: bob.username, amount: '1.5', commitments: new AgentRound(alice.profile).commitments }, { idempotencyKey: key });
    expect(first.sign_session_id).toBeString();
    // A retry carries fresh commitments (a new run of the command): the same request all the same.
    const res = await fetch(`${world.url}/bot`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${alice.profile.api_key}`, 'x-idempotency-key': key },
      body: JSON.stringify({ action: 'pay', to: bob.username, amount: '1.5', commitments: new AgentRound(alice.profile).commitments }),
    });
    expect(res.headers.get('idempotent-replayed')).toBe('true');
    const replay = ((await res.json()) as { data: Record<string, unknown> }).data;
    expect(replay).toMatchObject({ transaction_id: first.transaction_id, status: 'pre_approved' });
    expect(replay.sign_session_id).toBeUndefined();
    expect(replay.server_commitments).toBeUndefined();
    expect(await sessionsOf(first.transaction_id)).toBe(1n);
    // The client finishes a replayed answer with confirm + fresh nonces: one payment, signed once.
    const done = await completePay(alice.api, alice.profile, replay, new AgentRound(alice.profile), { expect: { amount: 1_500_000n, username: bob.username } });
    expect(done.status).toBe('completed');
    const used = (await world.services.db.get("SELECT count(*) AS n FROM sign_sessions WHERE transaction_id = ? AND status = 'used'", first.transaction_id)) as { n: bigint };
    expect(used.n).toBe(1n);
  });

  test('a payment that waits for the owner opens no signing session', async () => {
    await setRails({ approval_above: '20' });
    try {
      const answer = await alice.api.call<Record<string, any>>('bot', 'pay', { to: bob.username, amount: '25', commitments: new AgentRound(alice.profile).commitments });
      expect(answer.status).toBe('awaiting_approval');
      expect(answer.sign_session_id).toBeUndefined();
      expect(answer.message).toBeUndefined();
      expect(await sessionsOf(answer.transaction_id)).toBe(0n);
      const early = await errorOf(alice.api.call('bot', 'confirm_payment', { transaction_id: answer.transaction_id, commitments: new AgentRound(alice.profile).commitments }));
      expect(early.errorCode).toBe('AWAITING_APPROVAL');
      expect(await sessionsOf(answer.transaction_id)).toBe(0n);
      await alice.api.call('bot', 'cancel_payment', { transaction_id: answer.transaction_id });
    } finally {
      await setRails({});
    }
  });

  test('malformed commitments (the identity point, a non-canonical encoding, a small-order part) are refused before any intent exists', async () => {
    const before = (await alice.api.call<{ total: number }>('bot', 'list_payments')).total;
    const good = new AgentRound(alice.profile).commitments;
    const identity = `01${'00'.repeat(31)}`;
    const nonCanonical = `ed${'ff'.repeat(30)}7f`;
    for (const commitments of [{ ...good, hiding: identity }, { ...good, binding: nonCanonical }, { ...good, hiding: withTorsion(good.hiding) }]) {
      const err = await errorOf(alice.api.call('bot', 'pay', { to: bob.username, amount: '1', commitments }));
      expect(err.errorCode).toBe('VALIDATION_ERROR');
      expect(err.message).toContain('/commitments');
    }
    // A valid commitment plus a point of order 8: on the curve, canonical, refused for its small-order part.
    const torsion = await errorOf(alice.api.call('bot', 'pay', { to: bob.username, amount: '1', commitments: { ...good, binding: withTorsion(good.binding) } }));
    expect(torsion.message).toContain('prime-order subgroup');
    expect((await alice.api.call<{ total: number }>('bot', 'list_payments')).total).toBe(before);
  });

  test("a daemon whose round carries a commitment with a small-order part gets no share: the agent refuses before signing, and nothing is signed", async () => {
    const round = new AgentRound(alice.profile);
    const answer = await alice.api.call<RoundAnswer>('bot', 'pay', { to: bob.username, amount: '0.5', commitments: round.commitments });
    const lie = { ...answer, server_commitments: { ...(answer.server_commitments as Record<string, string>), hiding: withTorsion((answer.server_commitments as Record<string, string>).hiding!) } };
    const refused = await completePay(alice.api, alice.profile, lie, round).then(() => null, (e: Error) => e);
    expect(refused?.message).toContain('prime-order subgroup');
    const tx = (await getTx(world.services.db, answer.transaction_id))!;
    expect(tx.status).toBe('pre_approved');
    expect(tx.signed_tx).toBeNull();
  });
});

describe('round trips counted by /metrics', () => {
  test('CLI pay, pre-approved: 2 requests (pay + frost_sign_complete), to a pinned username and to an address', async () => {
    // The first payment to a username pins it (one lookup); the counted ones are after that.
    expect((await cli(alice, 'pay', bob.username, '0.5')).code).toBe(0);
    const toUser = await requestsDuring(async () => {
      const res = await cli(alice, 'pay', bob.username, '0.5');
      expect(res.json.status).toBe('completed');
    });
    expect(toUser).toEqual({ pay: 1, frost_sign_complete: 1 });
    const toAddress = await requestsDuring(async () => {
      const res = await cli(alice, 'pay', bob.address, '0.5');
      expect(res.json.status).toBe('completed');
    });
    expect(toAddress).toEqual({ pay: 1, frost_sign_complete: 1 });
  });

  test("CLI pay needing the owner, then confirm after the owner's decision: 3 requests (pay; confirm_payment + frost_sign_complete)", async () => {
    await setRails({ approval_above: '20' });
    try {
      let txId = '';
      const counted = await requestsDuring(async () => {
        const res = await cli(alice, 'pay', bob.username, '21');
        expect(res.code).toBe(5);
        txId = res.json.transaction_id;
        await owner.call('owner', 'approve', { approval_id: res.json.approval_id });
        const confirmed = await cli(alice, 'confirm', txId);
        expect(confirmed.json.status).toBe('completed');
      });
      expect(counted).toEqual({ pay: 1, confirm_payment: 1, frost_sign_complete: 1 });
      expect(await sessionsOf(txId)).toBe(1n);
    } finally {
      await setRails({});
    }
  });

  test("MCP pay, pre-approved: 2 requests; MCP withdraw then confirm_withdrawal after the owner's decision: 3", async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp'], env: { PATH: process.env.PATH ?? '', AGENT_WALLET_URL: world.url, AGENT_WALLET_HOME: alice.home }, stderr: 'pipe' });
    const client = new Client({ name: 'round-trips-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const pay = async () => ((await client.callTool({ name: 'pay', arguments: { to: bob.username, amount: '0.25' } })) as { structuredContent: Record<string, unknown> }).structuredContent;
      // The profile pinned bob in the CLI tests above: no lookup.
      const counted = await requestsDuring(async () => {
        expect(await pay()).toMatchObject({ status: 'completed', amount: 0.25 });
      });
      expect(counted).toEqual({ pay: 1, frost_sign_complete: 1 });

      const tool = async (name: string, args: Record<string, unknown>) => ((await client.callTool({ name, arguments: args })) as { structuredContent: Record<string, any> }).structuredContent;
      const withdrawal = await requestsDuring(async () => {
        const w = await tool('withdraw', { amount: '1', to_address: bob.address, reason: 'round trips' });
        expect(w.status).toBe('awaiting_approval');
        await owner.call('owner', 'approve', { approval_id: w.approval_id });
        expect(await tool('confirm_withdrawal', { transaction_id: w.transaction_id })).toMatchObject({ status: 'completed' });
      });
      expect(withdrawal).toEqual({ withdraw: 1, confirm_withdrawal: 1, frost_sign_complete: 1 });
    } finally {
      await client.close();
    }
  });
});
