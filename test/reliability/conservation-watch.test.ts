/**
 * The deposit watch against the chain (issue 24.4, 24.5), with the ledger checked against chain
 * balances after each fault (ledgerChainViolations): a deposit spent by the wallet's own payment
 * before the next pass, leaving the amount where the watch last read it; a Solana Pay payment of a
 * merchant's paylink swept out of the payout account before the next pass; 2,050 deposits made
 * while the watch did not run, more than its old 2,000-signature reach; and a backlog handled a
 * bounded part a pass, oldest first, while another wallet's deposit is not held back.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { getAddressDecoder, type Address } from '@solana/kit';
import { ed25519 } from '@noble/curves/ed25519.js';
import { ed25519Sign } from '../../src/frost/native-ed25519.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { transferCheckedInstruction } from '../../src/solana/instructions.ts';
import { assembleSignedTransaction, compileMessage } from '../../src/solana/transfer.ts';
import { ApiClient } from '../../src/client/api.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { scanDeposits, SIGNATURES_PER_PASS } from '../../src/jobs/deposits.ts';
import { signaturesSince } from '../../src/solana/history.ts';
import type { ChainPort } from '../../src/solana/port.ts';
import type { Services } from '../../src/services.ts';
import { SolanaPayWallet } from '../earning/solana-pay-client.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { ledgerChainViolations, ledgerBalance } from './money-invariants.ts';

let world: World;
let bob: Agent;

beforeAll(async () => {
  // Fast slots: 2,050 deposits land in a few seconds.
  world = await startWorld({ slotMs: 20 });
  bob = await world.agent('Bob', { claimBy: 'o@example.com' });
  await world.fund(bob.address, 0n);
});
afterAll(() => world.stop());

const ledgerOf = async (walletId: string): Promise<bigint> => await ledgerBalance(world.services.db, walletId);

async function books(...agents: Agent[]) {
  return Promise.all(agents.map(async (a) => ({ account: a.username, ledger: await ledgerOf(a.walletId), chain: await world.balance(a.address) })));
}

describe('a deposit spent before the next pass (24.4)', () => {
  test("1.01 in and 1.00 + 0.01 fee out within one pass: the deposit is recorded with its event and the fund request it covers; ledger = chain", async () => {
    const alice = await world.agent('Spender', { claimBy: 'o@example.com' });
    await world.fund(alice.address, 5_000_000n);
    await scanDeposits(world.services);
    expect(await books(alice)).toEqual([{ account: alice.username, ledger: 5_000_000n, chain: 5_000_000n }]);
    const ask = await alice.api.call<{ fund_request_id: string }>('bot', 'request_funds', { amount: '0.5', reason: 'top up' });
    const quote = await alice.api.call<{ fee: number }>('bot', 'can_i_afford', { to: bob.username, amount: 1 });
    const debit = 1_000_000n + BigInt(Math.round(quote.fee * 1e6));
    // Between two passes: a deposit of exactly what the payment takes, then the payment.
    const deposit = await world.fund(alice.address, debit);
    const intent = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount: 1 });
    expect((await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id)).status).toBe('completed');
    expect(await world.balance(alice.address)).toBe(5_000_000n);

    await scanDeposits(world.services);
    const row = (await world.services.db.get("SELECT amount FROM transactions WHERE wallet_id = ? AND type = 'deposit' AND signature = ?", alice.walletId, deposit)) as { amount: bigint } | null;
    expect(row?.amount).toBe(debit);
    const received = await alice.api.call<any>('bot', 'events', { types: ['payment.received'], limit: 50 });
    expect(received.items.some((e: any) => e.data.signature === deposit)).toBe(true);
    const requests = await alice.api.call<any>('bot', 'list_fund_requests', {});
    expect(requests.items.find((r: any) => r.fund_request_id === ask.fund_request_id)?.status).toBe('fulfilled');
    expect(ledgerChainViolations('a deposit spent within one pass', await books(alice, bob))).toEqual([]);
  });

  test("a Solana Pay payment of a merchant's paylink swept out of the payout account before the next pass is judged: the paylink is paid", async () => {
    const payout = await SolanaPayWallet.create(world.simnet.url);
    await world.simnet.faucet(payout.address, 0n, 1_000_000_000n);
    const human = await SolanaPayWallet.create(world.simnet.url);
    await world.simnet.faucet(human.address, 50_000_000n, 1_000_000_000n);
    const data = await new ApiClient(world.url).call<any>('merchant', 'register', { name: 'Sweeping Shop', username: 'sweeping-shop', payout_address: payout.address });
    const shop = new ApiClient(world.url, data.api_key);
    const link = await shop.call<any>('merchant', 'create_payment_request', { description: 'Order sw-1', amount: '7', reference: 'sw-1' });
    await scanDeposits(world.services);
    // Paid, then swept to the merchant's cold wallet, both before the watch looks again.
    const paid = await human.payUrl(link.solana_pay_url);
    const cold = (await SolanaPayWallet.create(world.simnet.url)).address;
    await world.simnet.faucet(cold, 0n);
    await payout.pay({ recipient: cold, mint: world.simnet.mint, amount: 7_000_000n, references: [] });
    expect(await world.balance(payout.address)).toBe(0n);

    await scanDeposits(world.services);
    const after = await shop.call<any>('merchant', 'get_payment_request', { request_id: link.request_id });
    expect(after).toMatchObject({ status: 'paid', signature: paid, paid_amount: 7 });
    const verified = await shop.call<any>('merchant', 'verify', { reference: 'sw-1' });
    expect(verified.paid).toBe(true);
  });
});

/**
 * `n` deposits into `owner`'s account, each its own transaction (amounts 10,000 + i base units, so no
 * two are the same bytes), from an outside key, sent in JSON-RPC batches; resolves to their sum.
 */
async function depositMany(owner: Address, n: number): Promise<bigint> {
  const seed = ed25519.utils.randomSecretKey();
  const keypair = new Uint8Array([...seed, ...ed25519.getPublicKey(seed)]);
  const from = getAddressDecoder().decode(keypair.subarray(32));
  const amounts = Array.from({ length: n }, (_, i) => 10_000n + BigInt(i));
  const total = amounts.reduce((a, b) => a + b, 0n);
  await world.simnet.faucet(from, total, 10_000_000_000n);
  const [source, destination] = await Promise.all([usdcAta(from, world.simnet.mint), usdcAta(owner, world.simnet.mint)]);
  const blockhash = await world.services.chain.getLatestBlockhash();
  const wires = amounts.map((amount) => {
    const message = compileMessage(from, blockhash, [transferCheckedInstruction({ source, mint: world.simnet.mint, destination, authority: from, amount, decimals: 6 })]);
    return assembleSignedTransaction(message, { [from]: ed25519Sign(message, keypair) });
  });
  // JSON-RPC batches of 250 sendTransaction calls: one HTTP request each.
  for (let i = 0; i < wires.length; i += 250) {
    const batch = wires.slice(i, i + 250).map((w, j) => ({ jsonrpc: '2.0', id: i + j, method: 'sendTransaction', params: [Buffer.from(w).toString('base64'), { encoding: 'base64' }] }));
    const answers = (await (await fetch(world.simnet.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) })).json()) as { error?: unknown }[];
    expect(answers.filter((a) => a.error !== undefined)).toEqual([]);
  }
  const deadline = Date.now() + 30_000;
  while ((await world.balance(owner)) !== total && Date.now() < deadline) await Bun.sleep(50);
  return total;
}

describe('a backlog beyond 2,000 signatures (24.5)', () => {
  test('2,050 deposits made while the watch did not run are all recorded; the chain holds nothing the ledger does not', async () => {
    const carol = await world.agent('Backlog', { claimBy: 'o@example.com' });
    await world.fund(carol.address, 0n);
    await scanDeposits(world.services);
    const n = 2_050;
    const total = await depositMany(carol.address, n);
    expect(await world.balance(carol.address)).toBe(total);
    // A few passes, SIGNATURES_PER_PASS each; each moves the cursor only past what it handled.
    for (let pass = 0; pass < Math.ceil(n / SIGNATURES_PER_PASS) && (await ledgerOf(carol.walletId)) !== total; pass++) await scanDeposits(world.services);
    const deposits = (await world.services.db.get("SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND type = 'deposit'", carol.walletId)) as { n: bigint };
    expect(Number(deposits.n)).toBe(n);
    expect(ledgerChainViolations('2,050 deposits while the watch was down', await books(carol))).toEqual([]);
    expect(await ledgerOf(carol.walletId)).toBe(total);
  }, 120_000);
});

describe('a backlog is handled a bounded part a pass (24.5)', () => {
  test("a backlog is handled SIGNATURES_PER_PASS a pass, oldest first and listed once (again from the cursor after a restart), while another wallet's deposit behind it is recorded in the first pass; ledger = chain", async () => {
    const erin = await world.agent('Long', { claimBy: 'o@example.com' });
    const dave = await world.agent('Behind', { claimBy: 'o@example.com' });
    await Promise.all([world.fund(erin.address, 0n), world.fund(dave.address, 0n)]);
    const erinAccount = await usdcAta(erin.address, world.simnet.mint);
    // Which accounts the watch lists the history of, through the daemon's own chain port.
    const listings: string[] = [];
    const chain: ChainPort = { ...world.services.chain, getSignaturesForAddress: (a, o) => (listings.push(a), world.services.chain.getSignaturesForAddress(a, o)) };
    const watched: Services = { ...world.services, chain };
    await scanDeposits(watched);
    const n = SIGNATURES_PER_PASS * 2 + 100;
    const total = await depositMany(erin.address, n);
    const behind = await world.fund(dave.address, 3_000_000n);
    const count = async () => Number(((await world.services.db.get("SELECT count(*) AS n FROM transactions WHERE wallet_id = ? AND type = 'deposit'", erin.walletId)) as { n: bigint }).n);

    await scanDeposits(watched);
    const daves = (await world.services.db.get("SELECT amount FROM transactions WHERE wallet_id = ? AND type = 'deposit' AND signature = ?", dave.walletId, behind)) as { amount: bigint } | null;
    expect(daves?.amount).toBe(3_000_000n);
    expect(await count()).toBe(SIGNATURES_PER_PASS);
    // The oldest: the chain's history of the account, newest first, ends with the ones recorded.
    const history = (await signaturesSince(world.services.chain, erinAccount, undefined)).map((s) => s.signature);
    const recorded = new Set(((await world.services.db.all("SELECT signature FROM transactions WHERE wallet_id = ? AND type = 'deposit'", erin.walletId)) as { signature: string }[]).map((r) => r.signature));
    expect(history.slice(-SIGNATURES_PER_PASS - 1, -1).every((s) => recorded.has(s))).toBe(true);
    expect(history.slice(0, -SIGNATURES_PER_PASS - 1).some((s) => recorded.has(s))).toBe(false);

    // The next passes go on from what is left: one listing of what is newer, not the backlog again.
    listings.length = 0;
    await scanDeposits(watched);
    expect(await count()).toBe(SIGNATURES_PER_PASS * 2);
    expect(listings.filter((a) => a === erinAccount)).toHaveLength(1);
    // A restarted daemon holds no backlog in memory: it lists again from the cursor, and finishes.
    await scanDeposits({ ...world.services });
    expect(await count()).toBe(n);
    expect(await ledgerOf(erin.walletId)).toBe(total);
    expect(ledgerChainViolations('a backlog handled over passes', await books(erin, dave))).toEqual([]);
  }, 120_000);
});
