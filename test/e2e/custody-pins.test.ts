/**
 * Issue 19: the pins the agent keeps next to its key share, through the real CLI against the real
 * app on simnet (a real proxy counts the signing calls). A first payment pins the username;
 * `payees` lists it and `payees forget` drops it; an export/import carries the pins; a merchant's
 * payout change is refused until accepted, and the accept moves the pin; a paylink above the
 * agent's ceiling is refused before anything is signed; a withdrawal is held to the agent's own
 * address and amount; a profile made before pins gets them on first use.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ApiClient } from '../../src/client/api.ts';
import { ProfileStore } from '../../src/client/profile.ts';
import { buildUsdcTransfer } from '../../src/solana/transfer.ts';
import { MAIN, runCli } from '../helpers/daemon.ts';
import { startLyingProxy, type LyingProxy } from '../helpers/lying-proxy.ts';
import { tempDir } from '../helpers/services.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';


let world: World;
let proxy: LyingProxy;
let alice: Agent;
let bob: Agent;
let owner: ApiClient;
let merchant: { api: ApiClient; username: string; payout: Address };

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice');
  bob = await world.agent('Bob');
  owner = await world.claim(alice.walletId, 'alice-owner@example.com');
  await world.claim(bob.walletId, 'bob-owner@example.com');
  await world.fund(alice.address, 200_000_000n);
  const payout = (await generateKeyPairSigner()).address;
  const data = await new ApiClient(world.url).call<any>('merchant', 'register', { name: 'Pin Shop', username: 'pin-shop', payout_address: payout });
  merchant = { api: new ApiClient(world.url, data.api_key), username: 'pin-shop', payout };
  proxy = startLyingProxy(world.url);
});
afterAll(async () => {
  await proxy?.stop();
  await world?.stop();
});

const cli = (home: string, ...args: string[]) => runCli([...args, '--server', proxy.url, '--home', home, '--json']);

/** The real MCP server (bun src/main.ts mcp) on `home`, through the proxy, as an MCP host starts it. */
async function connectMcp(home: string) {
  const client = new Client({ name: 'custody-pins-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp'], env: { PATH: process.env.PATH ?? '', AGENT_WALLET_URL: proxy.url, AGENT_WALLET_HOME: home }, stderr: 'pipe' }));
  return {
    call: async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent: any },
    close: () => client.close(),
  };
}

describe('payee pins', () => {
  test('a first payment to a username pins it; payees lists address, first and last paid, count; forget drops it', async () => {
    expect((await cli(alice.home, 'payees')).json.items).toEqual([]);
    expect((await cli(alice.home, 'pay', bob.username, '1')).json.status).toBe('completed');
    expect((await cli(alice.home, 'pay', bob.username, '1')).json.status).toBe('completed');
    const [pin] = (await cli(alice.home, 'payees')).json.items;
    expect(pin).toMatchObject({ username: bob.username, address: bob.address, kind: 'wallet', count: 2 });
    expect(Date.parse(pin.last_paid)).toBeGreaterThanOrEqual(Date.parse(pin.first_paid));
    const human = await runCli(['payees', '--server', proxy.url, '--home', alice.home]);
    expect(human.stdout).toContain(`@${bob.username}  wallet  ${bob.address}`);
    // The pin sits in the profile file itself, next to the key share.
    expect(new ProfileStore(alice.home).load('default').custody?.payees[bob.username]?.address).toBe(bob.address);
  });

  test('an export carries the pins; the imported profile refuses what the original would', async () => {
    const file = join(tempDir('aw-wlt-'), 'alice.wlt');
    expect((await cli(alice.home, 'export', file)).code).toBe(0);
    const home = join(tempDir('aw-import-'), 'home');
    expect((await cli(home, 'import', file)).code).toBe(0);
    const imported = (await cli(home, 'payees')).json.items;
    expect(imported).toEqual((await cli(alice.home, 'payees')).json.items);
    const pins = new ProfileStore(home).load('default').custody!;
    expect(pins).toMatchObject({ mint: world.simnet.mint, treasury: world.services.feePayer.address, fee_payer: world.services.feePayer.address, source: 'registration' });
    // What they were pinned from: ping and info publish the schedule the daemon charges by.
    const schedule = { payment_bps: 50, payment_min: 0.01, account_setup_fee: 0.25, withdrawal_fee: 0.1 };
    expect((await cli(home, 'info')).json.fees).toEqual(schedule);
    expect(await new ApiClient(world.url).call<any>('bot', 'ping')).toMatchObject({ fees: schedule, treasury: world.services.feePayer.address, fee_payer: world.services.feePayer.address });
    expect(pins.fees).toEqual({ payment_bps: 50, payment_min: '0.01', account_setup_fee: '0.25', withdrawal_fee: '0.1' });
  });

  test("a merchant's payout change is refused until accepted; the accept moves the pin", async () => {
    expect((await cli(alice.home, 'pay', merchant.username, '1')).json.status).toBe('completed');
    const moved = (await generateKeyPairSigner()).address;
    // The operator changes the payout address (the API has no such action; the ledger does).
    await world.services.db.run('UPDATE merchants SET payout_address = ? WHERE username = ?', moved, merchant.username);
    const completes = proxy.count('frost_sign_complete');
    const refused = await cli(alice.home, 'pay', merchant.username, '1');
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ code: 'CLIENT_CUSTODY_CHECK', username: merchant.username, pinned_address: merchant.payout, offered_address: moved, cancelled: true });
    // The refused intent was cancelled: it holds no budget and no account-setup fee for the new address.
    const cancelled = await alice.api.call<any>('bot', 'list_payments', { status: 'cancelled' });
    expect(cancelled.items.map((t: any) => t.transaction_id)).toContain(refused.json.error.transaction_id);
    expect(refused.json.error.how_to_fix).toContain('--accept-new-address');
    expect(proxy.count('frost_sign_complete')).toBe(completes);
    const accepted = await cli(alice.home, 'pay', merchant.username, '1', '--accept-new-address');
    expect(accepted.json.status).toBe('completed');
    expect(await world.balance(moved)).toBe(1_000_000n);
    const pin = (await cli(alice.home, 'payees')).json.items.find((p: any) => p.username === merchant.username);
    expect(pin).toMatchObject({ kind: 'merchant', address: moved, count: 2 });
  });

  test('forget drops a pin: the next payment pins again', async () => {
    expect((await cli(alice.home, 'payees', 'forget', merchant.username)).code).toBe(0);
    expect((await cli(alice.home, 'payees')).json.items.map((p: any) => p.username)).toEqual([bob.username]);
  });
});

describe('ceilings and the agent’s own words', () => {
  test('a paylink above the ceiling is refused client-side; --max-amount lets the agent pay it', async () => {
    expect((await cli(alice.home, 'ceiling', '5')).json).toEqual({ max_amount: '5' });
    const link = await bob.api.call<any>('bot', 'create_payment_request', { amount: '10', description: 'ten' });
    const completes = proxy.count('frost_sign_complete');
    const a0 = await world.balance(alice.address);
    const refused = await cli(alice.home, 'pay', '--request', link.request_id);
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ code: 'CLIENT_CUSTODY_CHECK', amount: '10', max_amount: '5' });
    expect(proxy.count('frost_sign_complete')).toBe(completes);
    expect(await world.balance(alice.address)).toBe(a0);
    expect(refused.json.error.how_to_fix).toContain('--max-amount 10');
    expect(refused.json.error.cancelled).toBe(true);
    const paid = await cli(alice.home, 'pay', '--request', link.request_id, '--max-amount', '10');
    expect(paid.json.status).toBe('completed');
  });

  test('a withdrawal is held to the address and amount the agent gave, not to the confirm answer', async () => {
    const mine = (await generateKeyPairSigner()).address;
    const thief = (await generateKeyPairSigner()).address;
    const w = await cli(alice.home, 'withdraw', '3', mine, '--reason', 'cold storage');
    expect(w.code).toBe(5);
    await owner.call('owner', 'approve', { approval_id: w.json.approval_id });
    // A consistent lie: the answer and the message both pay the thief (the daemon's own builder).
    proxy.lie = async (action, _p, data) => {
      if (action !== 'confirm_withdrawal') return data;
      const { messageBytes } = await buildUsdcTransfer({
        wallet: alice.address, mint: world.simnet.mint, recipientOwner: thief, amount: 3_000_000n, fee: 100_000n,
        treasuryOwner: world.services.feePayer.address, feePayer: world.services.feePayer.address, createRecipientAta: true,
        blockhash: await world.services.chain.getLatestBlockhash(),
      });
      return { ...data, message: Buffer.from(messageBytes).toString('base64'), summary: { ...data.summary, to_address: thief } };
    };
    const completes = proxy.count('frost_sign_complete');
    const refused = await cli(alice.home, 'withdraw', 'confirm', w.json.withdrawal_id).finally(() => {
      proxy.lie = null;
    });
    expect(refused.json.error.code).toBe('CLIENT_CUSTODY_CHECK');
    expect(refused.json.error.message).toContain(mine);
    expect(proxy.count('frost_sign_complete')).toBe(completes);
    const done = await cli(alice.home, 'withdraw', 'confirm', w.json.withdrawal_id);
    expect(done.json.status).toBe('completed');
    expect(await world.balance(mine)).toBe(3_000_000n);
  });
});

describe('withdraw confirm WD_ID is held to what this profile recorded for that id (issue 24.1)', () => {
  test("a server that answers another withdrawal's transaction (to an attacker, no intent recorded) gets no share; neither does one for a withdrawal this profile never asked for, unless --to/--amount hold it", async () => {
    const mine = (await generateKeyPairSigner()).address;
    const thief = (await generateKeyPairSigner()).address;
    const w = await cli(alice.home, 'withdraw', '2', mine, '--reason', 'savings');
    await owner.call('owner', 'approve', { approval_id: w.json.approval_id });
    // Another withdrawal of the same wallet, made with the API key alone (no intent in this profile): 60 USDC to the thief, approved.
    const other = await alice.api.call<any>('bot', 'withdraw', { amount: '60', to_address: thief, reason: 'looks routine' }, { idempotencyKey: crypto.randomUUID() });
    await owner.call('owner', 'approve', { approval_id: other.approval_id });
    proxy.lie = (action, _p, data) => (action === 'get_withdrawal' ? { ...data, transaction_id: other.transaction_id, amount: 60, to_address: thief } : data);
    const signs = proxy.count('frost_sign_complete');
    const refused = await cli(alice.home, 'withdraw', 'confirm', w.json.withdrawal_id).finally(() => {
      proxy.lie = null;
    });
    expect(refused.json.error.code).toBe('CLIENT_CUSTODY_CHECK');
    expect(refused.json.error.message).toContain(other.transaction_id);
    expect(proxy.count('frost_sign_complete')).toBe(signs);
    expect(await world.balance(thief)).toBe(0n);

    // The attacker's withdrawal by its own id: this profile never asked for it, so it signs nothing without the agent's own words…
    const unasked = await cli(alice.home, 'withdraw', 'confirm', other.withdrawal_id);
    expect(unasked.json.error.code).toBe('CLIENT_CUSTODY_CHECK');
    expect(unasked.json.error.how_to_fix).toContain('--to ADDRESS --amount AMOUNT');
    // …and words that differ from its message (the agent meant its own address) refuse it too.
    const held = await cli(alice.home, 'withdraw', 'confirm', other.withdrawal_id, '--to', mine, '--amount', '60');
    expect(held.json.error.code).toBe('CLIENT_CUSTODY_CHECK');
    expect(proxy.count('frost_sign_complete')).toBe(signs);
    expect(await world.balance(thief)).toBe(0n);

    // The honest answer for the agent's own withdrawal completes.
    const done = await cli(alice.home, 'withdraw', 'confirm', w.json.withdrawal_id);
    expect(done.json.status).toBe('completed');
    expect(await world.balance(mine)).toBe(2_000_000n);
  });

  test("the MCP server's confirm_withdrawal is held the same way: a withdrawal this profile never asked for gets no share without the agent's own to_address and amount; one it asked for is recorded under its withdrawal id too", async () => {
    const mine = (await generateKeyPairSigner()).address;
    const thief = (await generateKeyPairSigner()).address;
    const mcp = await connectMcp(alice.home);
    try {
      // A withdrawal of the same wallet made with the API key alone (no intent in this profile): 30 USDC to the thief, approved.
      const other = await alice.api.call<any>('bot', 'withdraw', { amount: '30', to_address: thief, reason: 'looks routine' }, { idempotencyKey: crypto.randomUUID() });
      await owner.call('owner', 'approve', { approval_id: other.approval_id });
      const signs = proxy.count('frost_sign_complete');
      const unasked = await mcp.call('confirm_withdrawal', { transaction_id: other.transaction_id });
      expect(unasked.isError).toBe(true);
      expect(unasked.structuredContent.error.code).toBe('CLIENT_CUSTODY_CHECK');
      expect(unasked.structuredContent.error.how_to_fix).toContain('to_address and amount');
      // Words that differ from its message (the agent meant its own address) refuse it too.
      const held = await mcp.call('confirm_withdrawal', { transaction_id: other.transaction_id, to_address: mine, amount: 30 });
      expect(held.structuredContent.error.code).toBe('CLIENT_CUSTODY_CHECK');
      expect(proxy.count('frost_sign_complete')).toBe(signs);
      expect(await world.balance(thief)).toBe(0n);

      // The agent's own withdrawal through MCP: the CLI beside it confirms it by its withdrawal id.
      const asked = await mcp.call('withdraw', { amount: '4', to_address: mine, reason: 'savings' });
      await owner.call('owner', 'approve', { approval_id: asked.structuredContent.approval_id });
      const done = await cli(alice.home, 'withdraw', 'confirm', asked.structuredContent.withdrawal_id);
      expect(done.json.status).toBe('completed');
      expect(await world.balance(mine)).toBe(4_000_000n);
    } finally {
      await mcp.close();
    }
  });
});

describe('profiles made before pins', () => {
  test('get them on first use from what the server answers then (source first_use), and pay', async () => {
    const old = await world.agent('Old Timer');
    await world.claim(old.walletId, 'old-owner@example.com');
    await world.fund(old.address, 10_000_000n);
    const path = join(old.home, 'default.json');
    const { custody: _pins, ...before } = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify(before));
    expect((await cli(old.home, 'pay', bob.username, '1')).json.status).toBe('completed');
    const pins = new ProfileStore(old.home).load('default').custody!;
    expect(pins).toMatchObject({ source: 'first_use', mint: world.simnet.mint, max_amount: '100' });
    expect(pins.payees[bob.username]?.address).toBe(bob.address);
  });
});

describe('a refused key, said as a CLI user fixes it (issue 26)', () => {
  test("after the owner rotated the bot key, the CLI names set-api-key; a refused owner token names where to mint one", async () => {
    const carol = await world.agent('Rotated Carol');
    const owner = await world.claim(carol.walletId, 'carol-owner@example.com');
    await owner.call('owner', 'rotate_api_key', { wallet_id: carol.walletId });
    const refused = await cli(carol.home, 'balance');
    expect(refused.code).toBe(4);
    expect(refused.json.error).toMatchObject({ code: 'UNAUTHORIZED', how_to_fix: expect.stringContaining('agent-wallet set-api-key') });
    const badOwner = await runCli(['owner', 'recovery', 'status', carol.walletId, '--server', world.url, '--json'], { AGENT_WALLET_OWNER_TOKEN: 'wallet_owner_11111111111111111111111111111111' });
    expect(badOwner.code).toBe(4);
    expect(badOwner.json.error.how_to_fix).toContain('/dashboard/tokens');
  });
});

describe('the CLI names the next command, not the API action (issue 26)', () => {
  test('pay awaiting approval, approval --wait once approved, request create, and an unclaimed wallet each print the exact command', async () => {
    const newHome = join(tempDir('aw-next-'), 'home');
    const registered = await cli(newHome, 'register', '--name', 'Fresh Agent');
    expect(registered.code).toBe(0);
    expect(registered.json.next_step).toBe(
      `give your owner the claim URL ${registered.json.claim_url} and the claim code ${registered.json.claim_code}; until they claim it only agent-wallet info, rename and set-owner work (agent-wallet info shows the status). The API key is saved in ${registered.json.profile_path}.`,
    );
    const dave = await world.agent('Next Step Dave');
    const unclaimed = await cli(dave.home, 'balance');
    expect(unclaimed.json.error).toMatchObject({ code: 'WALLET_NOT_CLAIMED', how_to_fix: expect.stringContaining('agent-wallet info') });

    const owner = await world.claim(dave.walletId, 'dave-owner@example.com');
    await world.fund(dave.address, 20_000_000n);
    await owner.call('owner', 'set_guard_rails', { wallet_id: dave.walletId, rails: { approval_above: '1' } });
    const waiting = await cli(dave.home, 'pay', bob.username, '5');
    expect(waiting.code).toBe(5);
    expect(waiting.json.next_step).toBe(`wait for the owner: agent-wallet approval ${waiting.json.approval_id} --wait 30, then agent-wallet confirm ${waiting.json.transaction_id}`);
    await owner.call('owner', 'approve', { approval_id: waiting.json.approval_id });
    const approved = await cli(dave.home, 'approval', waiting.json.approval_id, '--wait', '1');
    expect(approved.json.next_step).toBe(`the owner approved it: agent-wallet confirm ${waiting.json.transaction_id}`);

    const link = await cli(dave.home, 'request', 'create', '--description', 'Consulting', '--amount', '3');
    expect(link.json.next_step).toContain(`agent-wallet pay --request ${link.json.request_id}`);
    expect(link.json.next_step).toContain(`agent-wallet request send ${link.json.request_id}`);
    // Run under a named profile, the next step names it: under the default one it would send another wallet's paylink.
    copyFileSync(join(dave.home, 'default.json'), join(dave.home, 'shop.json'));
    const named = await cli(dave.home, '--profile', 'shop', 'request', 'create', '--description', 'Consulting', '--amount', '3');
    expect(named.json.next_step).toContain(`agent-wallet --profile shop request send ${named.json.request_id}`);
  });
});
