/**
 * `agent-wallet mcp` end to end: the SDK's own Client over StdioClientTransport spawns the real
 * command (bun + src/main.ts mcp) against the real app on simnet (startWorld), as an MCP host would.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ContractAction } from '../../src/contract/action.ts';
import { APPROVALS } from '../../src/contract/approvals.ts';
import { PAYMENTS } from '../../src/contract/payments.ts';
import { SYSTEM } from '../../src/contract/system.ts';
import { WALLET } from '../../src/contract/wallet.ts';
import { AGENT_EXPORTS } from '../../src/contract/wallet-keys.ts';
import { EARNING } from '../../src/contract/earning.ts';
import { X402 } from '../../src/contract/x402.ts';
import { WITHDRAWALS } from '../../src/contract/withdrawals.ts';
import { BOT_RECEIPTS } from '../../src/contract/receipts.ts';
import type { Address } from '@solana/kit';
import { MAIN, runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';


interface Connected {
  client: Client;
  stderr: () => string;
  close: () => Promise<void>;
}

/** Spawns `command args` with `env` as an MCP host does and connects the SDK client. */
async function connect(command: string, args: string[], env: Record<string, string>): Promise<Connected> {
  const transport = new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const client = new Client({ name: 'agent-wallet-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err, close: () => client.close() };
}

let world: World;
let bob: Agent;
let home: string;
let mcp: Connected;
let tools: Tool[];
let aliceAddress: Address;
let aliceWalletId: string;

async function call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult & { structuredContent: any }> {
  return (await mcp.client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: any };
}

function text(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

beforeAll(async () => {
  world = await startWorld();
  bob = await world.agent('Bob');
  await world.claim(bob.walletId, 'bob-owner@example.com');
  home = join(tempDir('aw-mcp-'), 'home');
  mcp = await connect(process.execPath, [MAIN, 'mcp'], { AGENT_WALLET_URL: world.url, AGENT_WALLET_HOME: home });
  tools = (await mcp.client.listTools()).tools;
});
afterAll(async () => {
  await mcp?.close();
  await world?.stop();
});

describe('tools', () => {
  test('every agent action is a snake_case tool whose input schema is a valid JSON Schema object, with hints from the contract', () => {
    const names = tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,128}$/);
    expect(names).toEqual(
      expect.arrayContaining([
        'register', 'info', 'balance', 'deposit_address', 'rename', 'set_owner', 'lookup', 'can_i_afford', 'pay', 'confirm_payment',
        'cancel_payment', 'list_payments', 'transactions', 'my_limits', 'pending_approvals', 'approval_status', 'events', 'mark_read',
        'wallet_export', 'wallet_import', 'withdraw', 'confirm_withdrawal', 'get_withdrawal',
      ]),
    );
    const ajv = new Ajv2020({ strict: true });
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(ajv.validateSchema(t.inputSchema)).toBe(true);
      expect(() => ajv.compile(t.inputSchema)).not.toThrow();
      expect(t.description?.length).toBeGreaterThan(10);
    }
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    for (const read of ['info', 'balance', 'lookup', 'can_i_afford', 'events', 'my_limits', 'approval_status', 'get_withdrawal']) {
      expect(hints[read]).toMatchObject({ readOnlyHint: true });
    }
    for (const money of ['pay', 'confirm_payment', 'withdraw', 'confirm_withdrawal']) expect(hints[money]).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    // MCP defaults destructiveHint to true: harmless writes say false explicitly.
    for (const write of ['rename', 'set_owner', 'mark_read', 'cancel_payment']) expect(hints[write]).toMatchObject({ readOnlyHint: false, destructiveHint: false });
  });

  test('input schemas are generated from the contract: every passed-through property deep-equals the API action schema', () => {
    const contract = new Map<string, ContractAction>(
      [SYSTEM, WALLET, PAYMENTS, APPROVALS, WITHDRAWALS, EARNING, X402, AGENT_EXPORTS, BOT_RECEIPTS].flatMap((g) => Object.entries(g as Record<string, ContractAction>).map(([name, def]) => [`${def.endpoint}/${name}`, def] as const)),
    );
    // The intentional differences: register fills the DKG fields itself, the signing tools their FROST
    // commitments; composite tools take a few extras.
    const omitted: Record<string, string[]> = {
      register: ['dkg_session_id', 'proof_signature'],
      pay: ['commitments'],
      confirm_payment: ['commitments'],
      confirm_withdrawal: ['commitments'],
    };
    const extras: Record<string, string[]> = {
      pay: ['idempotency_key', 'confirm', 'max_amount', 'accept_new_address', 'accept_new_fees'],
      confirm_payment: ['max_amount', 'accept_new_address', 'accept_new_fees'],
      confirm_withdrawal: ['to_address', 'amount', 'accept_new_fees'],
      withdraw: ['idempotency_key'],
      wallet_export: ['file', 'overwrite'],
      x402_fetch: ['idempotency_key', 'accept_new_address'],
      request_funds: ['idempotency_key'],
    };
    const mapped = tools.filter((t) => t._meta?.['agent-wallet/action']);
    expect(tools.filter((t) => !t._meta?.['agent-wallet/action']).map((t) => t.name).sort()).toEqual(['wallet_import', 'x402_call_tool', 'x402_resume']);
    expect(Object.fromEntries(mapped.map((t) => [t.name, t._meta!['agent-wallet/action']]))).toMatchObject({
      deposit_address: 'get_deposit_address',
      rename: 'update_name',
      set_owner: 'update_owner',
      pay: 'pay',
      confirm_payment: 'confirm_payment',
    });
    for (const t of mapped) {
      const action = contract.get(`${String(t._meta!['agent-wallet/endpoint'])}/${String(t._meta!['agent-wallet/action'])}`);
      expect(action).toBeDefined();
      const api = JSON.parse(JSON.stringify(action!.params)) as { properties: Record<string, unknown>; required?: string[] };
      const mine = t.inputSchema as { properties?: Record<string, unknown>; required?: string[] };
      const passed = Object.keys(api.properties).filter((k) => !(omitted[t.name] ?? []).includes(k));
      expect(Object.keys(mine.properties ?? {}).sort()).toEqual([...passed, ...(extras[t.name] ?? [])].sort());
      for (const k of passed) expect(mine.properties![k]).toEqual(api.properties[k]);
      expect((mine.required ?? []).sort()).toEqual((api.required ?? []).filter((k) => passed.includes(k)).sort());
      expect(t.description).toBeTruthy();
    }
    // Spot check: the money field is the contract's Amount (number or decimal string), not a hand-written copy.
    const pay = tools.find((t) => t.name === 'pay')!.inputSchema as any;
    expect(pay.properties.amount.anyOf.map((s: any) => s.type)).toEqual(['number', 'string']);
  });
});

describe('a wallet through MCP', () => {
  test('register runs the DKG and saves the profile (0600) without showing the API key; an unclaimed wallet answers WALLET_NOT_CLAIMED as a tool error', async () => {
    const reg = await call('register', { name: 'Alice MCP', agent_model: 'test-model' });
    expect(reg.isError).toBeFalsy();
    const data = reg.structuredContent;
    expect(data.wallet_id).toMatch(/^wal_/);
    expect(data.claim_url).toBeString();
    expect(data.api_key).toBe('saved in the profile file');
    expect(text(reg)).not.toContain('wallet_bot_');
    expect(data.profile_path).toBe(join(home, 'default.json'));
    expect(statSync(data.profile_path).mode & 0o777).toBe(0o600);
    aliceAddress = data.address;
    aliceWalletId = data.wallet_id;

    const info = await call('info');
    expect(info.structuredContent).toMatchObject({ wallet_id: aliceWalletId, address: aliceAddress });

    const bal = await call('balance');
    expect(bal.isError).toBe(true);
    expect(bal.structuredContent.error.code).toBe('WALLET_NOT_CLAIMED');
    expect(text(bal)).toContain('WALLET_NOT_CLAIMED');
    expect(text(bal)).toContain('How to fix: Ask your human owner');

    const again = await call('register', { name: 'Alice again' });
    expect(again.isError).toBe(true);
    expect(again.structuredContent.error.code).toBe('CLIENT_PROFILE');
  });

  test('pay confirms, signs and submits: completed, balances move on chain; a retry with the returned idempotency key pays nothing more', async () => {
    await world.claim(aliceWalletId, 'alice-owner@example.com');
    await world.fund(aliceAddress, 20_000_000n);
    const [a0, b0] = await Promise.all([world.balance(aliceAddress), world.balance(bob.address)]);
    const paid = await call('pay', { to: bob.username, amount: '2.5', note: 'via mcp' });
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ status: 'completed', amount: 2.5 });
    const key = paid.structuredContent.idempotency_key;
    expect(key).toBeString();
    expect(text(paid)).toContain('is completed');
    const fee = BigInt(Math.round(paid.structuredContent.fee * 1e6));
    const [a1, b1] = await Promise.all([world.balance(aliceAddress), world.balance(bob.address)]);
    expect(b1 - b0).toBe(2_500_000n);
    expect(a0 - a1).toBe(2_500_000n + fee);

    const retry = await call('pay', { to: bob.username, amount: '2.5', note: 'via mcp', idempotency_key: key });
    expect(retry.isError).toBeFalsy();
    expect(retry.structuredContent).toMatchObject({ transaction_id: paid.structuredContent.transaction_id, status: 'completed', idempotency_key: key });
    expect(await world.balance(bob.address)).toBe(b1);
  });

  test('a running MCP server keeps paying after the CLI beside it refreshed the key shares (issue 25): it loads the changed profile again', async () => {
    const refreshed = await runCli(['recovery', 'refresh', '--server', world.url, '--home', home, '--json']);
    expect({ code: refreshed.code, status: refreshed.json.status }).toEqual({ code: 0, status: 'committed' });
    const paid = await call('pay', { to: bob.username, amount: '1' });
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ status: 'completed', amount: 1 });
  });

  test('business errors are tool results with code and how_to_fix; bad input is VALIDATION_ERROR; an unknown tool is a protocol error', async () => {
    const nobody = await call('pay', { to: 'nobody-here', amount: 1 });
    expect(nobody.isError).toBe(true);
    expect(nobody.structuredContent).toMatchObject({ success: false, error: { code: 'INVALID_RECIPIENT' } });
    expect(text(nobody)).toContain('Error INVALID_RECIPIENT');
    expect(text(nobody)).toContain('How to fix:');

    const extra = await call('pay', { to: bob.username, amount: 1, tip: 5 });
    expect(extra.isError).toBe(true);
    expect(extra.structuredContent.error.code).toBe('VALIDATION_ERROR');
    expect(extra.structuredContent.error.message).toContain('/tip');

    await expect(mcp.client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/unknown tool/);
  });

  test('withdraw waits for the owner (idempotency key returned); confirm_withdrawal before approval is AWAITING_APPROVAL', async () => {
    const wd = await call('withdraw', { amount: '1', to_address: bob.address, reason: 'test' });
    expect(wd.isError).toBeFalsy();
    expect(wd.structuredContent).toMatchObject({ status: 'awaiting_approval' });
    expect(wd.structuredContent.idempotency_key).toBeString();
    const early = await call('confirm_withdrawal', { transaction_id: wd.structuredContent.transaction_id });
    expect(early.isError).toBe(true);
    expect(early.structuredContent.error.code).toBe('AWAITING_APPROVAL');
  });

  test('paylinks and the x402 catalog are tools too: create_paylink returns the checkout URL, x402_catalog the public list', async () => {
    const link = await call('create_paylink', { description: 'MCP test', amount: 2.5 });
    expect(link.isError).toBeFalsy();
    expect(link.structuredContent).toMatchObject({ amount: 2.5, status: 'open' });
    expect(String(link.structuredContent.url)).toContain('/pay/');
    const listed = await call('list_paylinks', {});
    expect(listed.structuredContent.items.map((r: any) => r.request_id)).toContain(link.structuredContent.request_id);
    const catalog = await call('x402_catalog', {});
    expect(catalog.isError).toBeFalsy();
    expect(Array.isArray(catalog.structuredContent.items)).toBe(true);
  });

  test('events show the payment; mark_read clears them; the status resource summarises wallet, balance and approvals', async () => {
    const events = await call('events', { limit: 50 });
    const types = events.structuredContent.items.map((e: any) => e.type);
    expect(types).toEqual(expect.arrayContaining(['payment.created', 'payment.completed']));
    const read = await call('mark_read', { all: true });
    expect(read.isError).toBeFalsy();
    expect((await call('events', { unread_only: true })).structuredContent.items).toEqual([]);

    const { resources } = await mcp.client.listResources();
    expect(resources.map((r) => r.uri)).toContain('agent-wallet://status');
    const res = await mcp.client.readResource({ uri: 'agent-wallet://status' });
    const content = res.contents[0] as { mimeType?: string; text: string };
    expect(content.mimeType).toBe('application/json');
    const status = JSON.parse(content.text);
    expect(status.wallet.wallet_id).toBe(aliceWalletId);
    expect(typeof status.balance.balance).toBe('number');
    expect(status.pending_approvals.items.length).toBeGreaterThanOrEqual(1);
    // Logs go to stderr (stdout is the protocol): the server logged its calls there.
    expect(mcp.stderr()).toContain('"tool":"pay"');
  });
});

describe('backup', () => {
  test('wallet_export writes a 0600 .wlt file that wallet_import restores into another home', async () => {
    const exported = await call('wallet_export', { file: 'backup.wlt' });
    expect(exported.isError).toBeFalsy();
    expect(exported.structuredContent.file).toBe(join(home, 'backup.wlt'));
    expect(statSync(exported.structuredContent.file).mode & 0o777).toBe(0o600);
    const twice = await call('wallet_export', { file: 'backup.wlt' });
    expect(twice.structuredContent.error.code).toBe('VALIDATION_ERROR');

    const other = await connect(process.execPath, [MAIN, 'mcp'], { AGENT_WALLET_URL: world.url, AGENT_WALLET_HOME: join(tempDir('aw-mcp-'), 'home') });
    try {
      const before = (await other.client.callTool({ name: 'info', arguments: {} })) as CallToolResult & { structuredContent: any };
      expect(before.structuredContent.error.code).toBe('CLIENT_PROFILE');
      const imported = (await other.client.callTool({ name: 'wallet_import', arguments: { file: exported.structuredContent.file } })) as CallToolResult & { structuredContent: any };
      expect(imported.isError).toBeFalsy();
      expect(imported.structuredContent).toMatchObject({ wallet_id: aliceWalletId, address: aliceAddress });
      const info = (await other.client.callTool({ name: 'info', arguments: {} })) as CallToolResult & { structuredContent: any };
      expect(info.structuredContent.wallet_id).toBe(aliceWalletId);
    } finally {
      await other.close();
    }
  });
});

describe('--print-config', () => {
  test('prints the mcpServers snippet as JSON, and the command it names starts a working server', async () => {
    const res = await runCli(['mcp', '--print-config'], { AGENT_WALLET_URL: world.url, AGENT_WALLET_HOME: home });
    expect(res.code).toBe(0);
    const entry = res.json.mcpServers['agent-wallet'];
    expect(entry.command).toBe(process.execPath);
    expect(entry.args).toEqual([MAIN, 'mcp']);
    expect(entry.env).toEqual({ AGENT_WALLET_URL: world.url, AGENT_WALLET_PROFILE: 'default', AGENT_WALLET_HOME: home });

    const host = await connect(entry.command, entry.args, entry.env);
    try {
      const info = (await host.client.callTool({ name: 'info', arguments: {} })) as CallToolResult & { structuredContent: any };
      expect(info.structuredContent.wallet_id).toBe(aliceWalletId);
    } finally {
      await host.close();
    }
  });
});
