/**
 * Paid MCP tools under `x402_allowed_hosts` (issue 40, item 5): the daemon never contacts a tool's
 * server, so the host of a tool purchase is only what the agent says. A steered agent naming an
 * allowed host for a foreign payTo is held for the owner's approval (its payee was never vouched
 * for at that host), and nothing reaches the attacker; the client pins a payee only under the host
 * it contacted. A payee the owner approved at that host (or one an HTTP purchase from it paid) is
 * paid without asking again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import type { ApiClient } from '../../src/client/api.ts';
import { x402CallTool } from '../../src/client/x402-mcp.ts';
import { commit } from '../../src/frost/party.ts';
import { encodeCommitments } from '../../src/frost/wire.ts';
import { errorOf } from '../helpers/errors.ts';
import { agentKey } from '../helpers/signing.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { startPaidMcpServer } from '../x402/mcp-seller.ts';
import { sellerAddress, startFacilitator, type Facilitator } from '../x402/sellers.ts';

let world: World;
let alice: Agent;
let owner: ApiClient;
let facilitator: Facilitator;
let honestPayTo: Address;
let attackerPayTo: Address;
let honest: Awaited<ReturnType<typeof startPaidMcpServer>>;
let attacker: Awaited<ReturnType<typeof startPaidMcpServer>>;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice');
  owner = await world.claim(alice.walletId, 'alice@example.com');
  await world.fund(alice.address, 20_000_000n);
  facilitator = await startFacilitator(world);
  honestPayTo = await sellerAddress(world);
  attackerPayTo = await sellerAddress(world);
  honest = await startPaidMcpServer(world, facilitator, { payTo: honestPayTo });
  attacker = await startPaidMcpServer(world, facilitator, { payTo: attackerPayTo });
  // The owner allows tools of the honest server's host only.
  await owner.call('owner', 'set_guard_rails', { wallet_id: alice.walletId, rails: { x402_allowed_hosts: ['127.0.0.1', 'paid-tools'] } });
});
afterAll(async () => {
  await honest?.stop();
  await attacker?.stop();
  await world?.stop();
});

/** The attacker's PaymentRequired, as its tool answers an unpaid call. */
async function attackerChallenge(): Promise<Record<string, unknown>> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new Client({ name: 'steered', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(attacker.url)));
  try {
    return (await client.callTool({ name: 'analyze', arguments: { ticker: 'SOL' } })).structuredContent as Record<string, unknown>;
  } finally {
    await client.close();
  }
}

test('a steered agent names an allowed host for a foreign payTo: held for the owner, x402_confirm refused, the attacker gets nothing', async () => {
  const [attacker0, alice0] = [await world.balance(attackerPayTo), await world.balance(alice.address)];
  const prepared = await alice.api.call<any>('bot', 'x402_prepare_tool', { server: 'paid-tools', tool: 'analyze', payment_required: await attackerChallenge() });
  expect(prepared).toMatchObject({ status: 'awaiting_approval', pay_to: attackerPayTo, host: 'paid-tools', decision: { rule: 'x402_allowed_hosts' } });
  expect(prepared.decision.reason).toContain(attackerPayTo);
  const commitments = encodeCommitments(commit(agentKey(alice.profile)).commitments);
  const refused = await errorOf(alice.api.call('bot', 'x402_confirm', { fetch_id: prepared.fetch_id, commitments }));
  expect(refused.errorCode).toBe('AWAITING_APPROVAL');
  expect(await world.balance(attackerPayTo)).toBe(attacker0);
  expect(await world.balance(alice.address)).toBe(alice0);
});

test('through the client: the attacker\'s server called as "paid-tools" is held, and no payee is pinned under a name the client did not contact', async () => {
  const attacker0 = await world.balance(attackerPayTo);
  const r = await x402CallTool(alice.api, alice.profile, { name: 'paid-tools', url: attacker.url }, { tool: 'analyze', arguments: { ticker: 'SOL' } });
  expect(r.outcome).toBe('awaiting_approval');
  expect(attacker.state.paidCalls).toBe(0);
  expect(await world.balance(attackerPayTo)).toBe(attacker0);
  expect(alice.profile.custody?.x402_hosts['paid-tools']).toBeUndefined();
});

test("the honest server's payee: approved once by the owner, then paid without asking; pinned under the host the client contacted", async () => {
  const honest0 = await world.balance(honestPayTo);
  const server = { name: 'paid-tools', url: honest.url };
  const first = await x402CallTool(alice.api, alice.profile, server, { tool: 'analyze', arguments: { ticker: 'SOL' }, idempotencyKey: 'honest-1' });
  expect(first.outcome).toBe('awaiting_approval');
  await owner.call('owner', 'approve', { approval_id: first.purchase!.approval_id });
  const approved = await x402CallTool(alice.api, alice.profile, server, { tool: 'analyze', arguments: { ticker: 'SOL' }, idempotencyKey: 'honest-1' });
  expect(approved.outcome).toBe('completed');
  const second = await x402CallTool(alice.api, alice.profile, server, { tool: 'analyze', arguments: { ticker: 'ETH' }, idempotencyKey: 'honest-2' });
  expect(second.outcome).toBe('completed');
  expect((await world.balance(honestPayTo)) - honest0).toBe(20_000n);
  expect(alice.profile.custody?.x402_hosts[new URL(honest.url).host]).toMatchObject({ address: honestPayTo });
  expect(alice.profile.custody?.x402_hosts['paid-tools']).toBeUndefined();
}, 30_000);

test("names an agent makes up for one tool payee share that payee's x402_daily_per_host: the purchase under a second name waits for the owner, nothing reaches the payee", async () => {
  const carol = await world.agent('Carol');
  const carolOwner = await world.claim(carol.walletId, 'carol@example.com');
  await world.fund(carol.address, 20_000_000n);
  const challenge = await attackerChallenge();
  const first = await carol.api.call<any>('bot', 'x402_prepare_tool', { server: 'tools-a', tool: 'analyze', payment_required: challenge });
  expect(first).toMatchObject({ status: 'pre_approved', pay_to: attackerPayTo, host: 'tools-a' });
  // A day's limit at that payee that one purchase fits and two do not.
  const one = (await world.services.db.get<{ total: bigint }>('SELECT t.amount + t.fee + t.setup_fee AS total FROM x402_purchases p JOIN transactions t ON t.transaction_id = p.transaction_id WHERE p.fetch_id = ?', first.fetch_id))!.total;
  await carolOwner.call('owner', 'set_guard_rails', { wallet_id: carol.walletId, rails: { x402_daily_per_host: Number(one + one / 2n) / 1e6 } });
  const attacker0 = await world.balance(attackerPayTo);
  const second = await carol.api.call<any>('bot', 'x402_prepare_tool', { server: 'tools-b', tool: 'analyze', payment_required: challenge });
  expect(second).toMatchObject({ status: 'awaiting_approval', host: 'tools-b', decision: { rule: 'x402_daily_per_host' } });
  expect(second.decision.reason).toContain(`or to its payee ${attackerPayTo}`);
  const commitments = encodeCommitments(commit(agentKey(carol.profile)).commitments);
  expect((await errorOf(carol.api.call('bot', 'x402_confirm', { fetch_id: second.fetch_id, commitments }))).errorCode).toBe('AWAITING_APPROVAL');
  expect(await world.balance(attackerPayTo)).toBe(attacker0);
});
