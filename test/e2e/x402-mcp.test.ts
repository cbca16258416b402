/**
 * Paid MCP tools (issue 28, item 4): a real MCP server (the SDK's Server over Streamable HTTP)
 * whose tool asks for payment through x402's MCP transport, called through our own MCP server
 * (`agent-wallet mcp`, a child process, as a host runs it) with `x402_call_tool`: paid once under
 * the guard rails, the result returned, the purchase in the history; a retry with the same key pays
 * nothing more; a server the operator did not allow is refused.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Address } from '@solana/kit';
import { MAIN } from '../helpers/daemon.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { startPaidMcpServer } from '../x402/mcp-seller.ts';
import { sellerAddress, startFacilitator, type Facilitator } from '../x402/sellers.ts';

let world: World;
let alice: Agent;
let facilitator: Facilitator;
let payTo: Address;
let paid: Awaited<ReturnType<typeof startPaidMcpServer>>;
let mcp: Client;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice', { claimBy: 'alice@example.com' });
  await world.fund(alice.address, 5_000_000n);
  facilitator = await startFacilitator(world);
  payTo = await sellerAddress(world);
  paid = await startPaidMcpServer(world, facilitator, { payTo });
  mcp = new Client({ name: 'host', version: '1.0.0' });
  await mcp.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, 'mcp'],
      env: { PATH: process.env.PATH ?? '', AGENT_WALLET_URL: world.url, AGENT_WALLET_HOME: alice.home, AGENT_WALLET_MCP_PAID_SERVERS: JSON.stringify({ 'paid-tools': { url: paid.url } }) },
      stderr: 'pipe',
    }),
  );
});
afterAll(async () => {
  await mcp?.close();
  await paid?.stop();
  await world?.stop();
});

const callTool = async (args: Record<string, unknown>) => (await mcp.callTool({ name: 'x402_call_tool', arguments: args })) as CallToolResult & { structuredContent: any };

test('a paid tool called through our MCP server: paid once on chain, its result returned, the purchase in the history; the same key again pays nothing more', async () => {
  const [seller0, alice0] = [await world.balance(payTo), await world.balance(alice.address)];
  const r = await callTool({ server: 'paid-tools', tool: 'analyze', arguments: { ticker: 'SOL' }, idempotency_key: 'call-1' });
  expect(r.isError).toBeFalsy();
  const out = r.structuredContent;
  expect(out.outcome).toBe('completed');
  expect(out.result.content[0].text).toBe('analysis of SOL: strong');
  expect(out.purchase).toMatchObject({ purchase_status: 'completed', status: 'completed', host: 'paid-tools', method: 'MCP', amount: 0.01, pay_to: payTo });
  expect(paid.state).toMatchObject({ unpaidCalls: 1, paidCalls: 1, settled: [out.purchase.signature] });
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
  expect(alice0 - (await world.balance(alice.address))).toBe(10_000n);
  const history = await alice.api.call<any>('bot', 'transactions', { type: 'x402' });
  expect(history.items[0]).toMatchObject({ status: 'completed', amount: 0.01, signature: out.purchase.signature });
  // A retry of the same call (same key): the tool asks again, the purchase is the one already paid.
  const again = await callTool({ server: 'paid-tools', tool: 'analyze', arguments: { ticker: 'SOL' }, idempotency_key: 'call-1' });
  expect(again.structuredContent.fetch_id).toBe(out.fetch_id);
  expect(paid.state.settled).toHaveLength(1);
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
});

test("a tool whose receipt names a transaction that is not ours does not complete the purchase: pending, nothing moved on chain", async () => {
  const [seller0, alice0] = [await world.balance(payTo), await world.balance(alice.address)];
  const r = await callTool({ server: 'paid-tools', tool: 'oracle', arguments: {}, idempotency_key: 'oracle-1' });
  const out = r.structuredContent;
  expect(paid.state.lies).toBe(1);
  expect(out.outcome).not.toBe('completed');
  expect(out.purchase).toMatchObject({ purchase_status: 'pending' });
  expect(out.purchase.signature).not.toBe('5'.repeat(88));
  expect(await world.balance(payTo)).toBe(seller0);
  expect(await world.balance(alice.address)).toBe(alice0);
});

test('the CLI: agent-wallet x402 mcp URL TOOL pays the tool once and prints its answer', async () => {
  const seller0 = await world.balance(payTo);
  const cli = Bun.spawn([process.execPath, MAIN, 'x402', 'mcp', paid.url, 'analyze', '--args', '{"ticker":"ETH"}', '--server', world.url, '--home', alice.home, '--json'], { stdout: 'pipe', stderr: 'pipe' });
  const [code, out] = await Promise.all([cli.exited, new Response(cli.stdout).text()]);
  expect(code).toBe(0);
  const r = JSON.parse(out);
  expect(r).toMatchObject({ outcome: 'completed', purchase: { purchase_status: 'completed', host: '127.0.0.1', method: 'MCP' } });
  expect(r.result.content[0].text).toBe('analysis of ETH: strong');
  expect((await world.balance(payTo)) - seller0).toBe(10_000n);
});

test('a free tool passes through untouched; a server the operator did not allow is refused', async () => {
  const free = await callTool({ server: 'paid-tools', tool: 'echo', arguments: { text: 'hi' } });
  expect(free.structuredContent).toMatchObject({ outcome: 'not_required', fetch_id: null, result: { content: [{ type: 'text', text: 'hi' }] } });
  const refused = await callTool({ server: 'elsewhere', tool: 'analyze', arguments: {} });
  expect(refused.isError).toBe(true);
  expect(JSON.stringify(refused.content)).toContain('AGENT_WALLET_MCP_PAID_SERVERS');
});
