/**
 * Issue 19 and 21.3: a compromised server that lies CONSISTENTLY — its answers and the message it
 * asks the agent to sign agree — gets no signature share. A real HTTP proxy in front of the real
 * app rewrites the answers and rebuilds the message with the daemon's own builder for each row of
 * the table; the real CLI (and the real MCP server) pay through it. For every lie: the
 * refusal is CLIENT_CUSTODY_CHECK with a how_to_fix, no frost_sign_init / frost_sign_complete
 * reaches the server, and no money moves on chain. The honest path through the same proxy completes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { feeFor, toUsdcNumber } from '../../src/domain/money.ts';
import { buildUsdcTransfer } from '../../src/solana/transfer.ts';
import { MAIN, runCli } from '../helpers/daemon.ts';
import { startLyingProxy, type Lie, type LyingProxy } from '../helpers/lying-proxy.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

const OTHER_MINT = 'So11111111111111111111111111111111111111112' as Address;

let world: World;
let proxy: LyingProxy;
let alice: Agent;
let bob: Agent;
let mallory: Agent;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice');
  bob = await world.agent('Bob');
  mallory = await world.agent('Mallory');
  await world.claim(alice.walletId, 'alice-owner@example.com');
  await world.claim(bob.walletId, 'bob-owner@example.com');
  await world.fund(alice.address, 100_000_000n);
  proxy = startLyingProxy(world.url);
});
afterAll(async () => {
  await proxy?.stop();
  await world?.stop();
});

const cli = (...args: string[]) => runCli([...args, '--server', proxy.url, '--home', alice.home, '--json']);

/** The message a lying server would build: the daemon's own builder with the lie's parameters. */
async function message(p: { amount: bigint; recipient: Address; fee: bigint; mint?: Address; noAccount?: boolean }): Promise<string> {
  const { messageBytes } = await buildUsdcTransfer({
    wallet: alice.address,
    mint: p.mint ?? world.simnet.mint,
    recipientOwner: p.recipient,
    amount: p.amount,
    fee: p.fee,
    treasuryOwner: world.services.feePayer.address,
    feePayer: world.services.feePayer.address,
    createRecipientAta: !p.noAccount,
    blockhash: await world.services.chain.getLatestBlockhash(),
  });
  return Buffer.from(messageBytes).toString('base64');
}

/**
 * A consistent lie: the pay answer and the answer carrying the message (summary AND message) agree
 * on `p` — pay's own answer on the fast path, confirm_payment's on the step-by-step one.
 */
function consistentLie(p: { amount: bigint; recipient: Address; fee: bigint; mint?: Address; noAccount?: boolean }): Lie {
  return async (action, _params, data) => {
    const lied = action === 'pay' ? { ...data, amount: toUsdcNumber(p.amount), fee: toUsdcNumber(p.fee), to_address: p.recipient } : data;
    if ((action !== 'pay' && action !== 'confirm_payment') || typeof data.message !== 'string') return lied;
    return {
      ...lied,
      message: await message(p),
      summary: { ...data.summary, amount: toUsdcNumber(p.amount), fee: toUsdcNumber(p.fee), to_address: p.recipient, ...(p.mint ? { usdc_mint: p.mint } : {}) },
    };
  };
}

const honestFee = (amount: bigint) => feeFor(amount, 50n, 10_000n);

/** Runs `pay bob 2` under `lie`; asserts the refusal and that nothing was signed or moved. */
async function refused(lie: Lie, expectInMessage: string) {
  const balances = async () => Promise.all([world.balance(alice.address), world.balance(bob.address), world.balance(mallory.address)]);
  const before = await balances();
  const [inits, completes] = [proxy.count('frost_sign_init'), proxy.count('frost_sign_complete')];
  proxy.lie = lie;
  const res = await cli('pay', bob.username, '2').finally(() => {
    proxy.lie = null;
  });
  expect(res.code).toBe(1);
  expect(res.json.success).toBe(false);
  expect(res.json.error.code).toBe('CLIENT_CUSTODY_CHECK');
  expect(res.json.error.how_to_fix.length).toBeGreaterThan(20);
  expect(res.json.error.message).toContain(expectInMessage);
  expect(proxy.count('frost_sign_init')).toBe(inits);
  expect(proxy.count('frost_sign_complete')).toBe(completes);
  expect(await balances()).toEqual(before);
  return res.json.error;
}

describe('a lying server gets no share', () => {
  test('the honest path through the proxy completes and pins the payee', async () => {
    const completes = proxy.count('frost_sign_complete');
    const res = await cli('pay', bob.username, '1');
    expect(res.code).toBe(0);
    expect(res.json.status).toBe('completed');
    expect(proxy.count('frost_sign_complete')).toBe(completes + 1);
    const payees = await cli('payees');
    expect(payees.json.items).toEqual([expect.objectContaining({ username: bob.username, address: bob.address, kind: 'wallet', count: 1 })]);
  });

  test('pay USER 2 answered as a payment of 7 (message moving 7) is refused', async () => {
    const error = await refused(consistentLie({ amount: 7_000_000n, recipient: bob.address, fee: honestFee(7_000_000n) }), 'you asked for 2 USDC');
    expect(error).toMatchObject({ asked_amount: '2', offered_amount: '7' });
  });

  test('a username paid before, answered with another address (message rewritten), is refused naming both addresses', async () => {
    const error = await refused(consistentLie({ amount: 2_000_000n, recipient: mallory.address, fee: honestFee(2_000_000n) }), bob.username);
    expect(error).toMatchObject({ username: bob.username, pinned_address: bob.address, offered_address: mallory.address });
  });

  test('an inflated fee (answer and message) is refused against the schedule pinned at registration', async () => {
    const error = await refused(consistentLie({ amount: 2_000_000n, recipient: bob.address, fee: 1_000_000n }), 'fee of 1 USDC');
    expect(error.how_to_fix).toContain('--accept-fees');
  });

  test('the account setup fee is refused on a message that creates no account, and for a wallet paid before (its account exists)', async () => {
    await refused(consistentLie({ amount: 2_000_000n, recipient: bob.address, fee: honestFee(2_000_000n) + 250_000n }), 'gives at most 0.01 USDC');
    await refused(consistentLie({ amount: 2_000_000n, recipient: bob.address, fee: honestFee(2_000_000n) + 250_000n, noAccount: true }), 'gives at most 0.01 USDC');
  });

  test('another mint after registration (answer and message) is refused', async () => {
    await refused(consistentLie({ amount: 2_000_000n, recipient: bob.address, fee: honestFee(2_000_000n), mint: OTHER_MINT }), OTHER_MINT);
  });

  test('the MCP server refuses the same lie with the same code and a how_to_fix', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, 'mcp'],
      env: { PATH: process.env.PATH ?? '', AGENT_WALLET_URL: proxy.url, AGENT_WALLET_HOME: alice.home },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'custody-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const completes = proxy.count('frost_sign_complete');
      proxy.lie = consistentLie({ amount: 7_000_000n, recipient: bob.address, fee: honestFee(7_000_000n) });
      const r = (await client.callTool({ name: 'pay', arguments: { to: bob.username, amount: 2 } })) as { isError?: boolean; structuredContent: any };
      proxy.lie = null;
      expect(r.isError).toBe(true);
      expect(r.structuredContent.error.code).toBe('CLIENT_CUSTODY_CHECK');
      expect(r.structuredContent.error.how_to_fix.length).toBeGreaterThan(20);
      expect(proxy.count('frost_sign_complete')).toBe(completes);
    } finally {
      proxy.lie = null;
      await client.close();
    }
  });

  test('an honest new fee schedule is refused until the agent accepts it with --accept-fees, which pins it', async () => {
    const fees = world.services.config.fees;
    const before = fees.payment_bps;
    fees.payment_bps = 200;
    try {
      const completes = proxy.count('frost_sign_complete');
      const res = await cli('pay', bob.username, '5');
      expect(res.json.error).toMatchObject({ code: 'CLIENT_CUSTODY_CHECK', fee: '0.1', max_fee: '0.025' });
      expect(proxy.count('frost_sign_complete')).toBe(completes);
      const shown = await cli('fees');
      expect(shown.json).toMatchObject({ pinned: { payment_bps: 50 }, published: { payment_bps: 200 } });
      expect(res.json.error.cancelled).toBe(true);
      const accepted = await cli('pay', bob.username, '5', '--accept-fees');
      expect(accepted.json.status).toBe('completed');
      expect((await cli('fees')).json.pinned.payment_bps).toBe(200);
    } finally {
      fees.payment_bps = before;
    }
    expect((await cli('fees', 'accept')).json.pinned.payment_bps).toBe(before);
  });

  test('after the lies, the honest path still completes', async () => {
    const b0 = await world.balance(bob.address);
    const res = await cli('pay', bob.username, '2');
    expect(res.json.status).toBe('completed');
    expect((await world.balance(bob.address)) - b0).toBe(2_000_000n);
    expect((await cli('payees')).json.items[0]).toMatchObject({ username: bob.username, count: 3 });
  });
});
