/**
 * The daemon as an x402 facilitator for its merchants (issue 29, item 1): the official `@x402/hono`
 * middleware pointed at `/x402/facilitator` by URL with the merchant's key, paid by our agent and
 * by the official client (`@x402/core` + `@x402/svm`) with a plain keypair; each sale settled once,
 * the merchant's x402.sale event and webhook; and every MUST of the exact scheme refused at /verify
 * under its reason, a duplicate settle refused, a payTo not registered here refused.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import {
  AccountRole,
  appendTransactionMessageInstructions,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { ExactSvmScheme as ClientExactSvm } from '@x402/svm/exact/client';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import { Hono } from 'hono';
import { x402Fetch } from '../../src/client/x402.ts';
import { deliverDueWebhooks } from '../../src/webhooks/deliver.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { computeUnitLimitInstruction, computeUnitPriceInstruction, memoInstruction, transferCheckedInstruction } from '../../src/solana/instructions.ts';
import { runCli } from '../helpers/daemon.ts';
import { hookReceiver, until } from '../helpers/poll.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { DEVNET_CAIP2, USDC } from '../x402/sellers.ts';

let world: World;
let alice: Agent;
let merchant: { api_key: string; merchant_id: string };
let payout: Address;
let facilitatorUrl: string;
let feePayer: Address;
let seller: { url: string; stop: () => Promise<void> };
let receiver: ReturnType<typeof hookReceiver>;
let buyer: KeyPairSigner;

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  alice = await world.agent('Alice', { claimBy: 'alice@example.com' });
  await world.fund(alice.address, 5_000_000n);
  buyer = await generateKeyPairSigner();
  await world.fund(buyer.address, 5_000_000n);
  await world.simnet.airdrop(buyer.address, 1_000_000_000n);
  payout = (await generateKeyPairSigner()).address;
  await world.fund(payout, 0n);
  receiver = hookReceiver();
  const reg = await fetch(`${world.url}/merchant`, {
    method: 'POST',
    body: JSON.stringify({ action: 'register', name: 'Data Shop', username: 'data-shop', payout_address: payout, webhook_url: receiver.url }),
  });
  merchant = ((await reg.json()) as any).data;
  facilitatorUrl = `${new URL(world.url).origin}/x402/facilitator`;
  feePayer = world.services.feePayer.address;
  // The merchant's own seller: the official middleware, our facilitator by URL with its key.
  const auth = { Authorization: `Bearer ${merchant.api_key}` };
  const client = new HTTPFacilitatorClient({ url: facilitatorUrl, createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }) });
  const resourceServer = new x402ResourceServer(client).register(DEVNET_CAIP2, new ExactSvmScheme({ rpcUrl: world.simnet.url }));
  const app = new Hono();
  app.use(paymentMiddleware({ 'GET /data': { accepts: { scheme: 'exact', price: '$0.01', network: DEVNET_CAIP2, payTo: payout }, description: 'paid data' } }, resourceServer));
  app.get('/data', (c) => c.json({ data: 42 }));
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch, idleTimeout: 60 });
  seller = { url: `http://127.0.0.1:${server.port}`, stop: async () => void (await server.stop(true)) };
});
afterAll(async () => {
  await seller?.stop();
  await receiver?.stop();
  await world?.stop();
});

const sales = async () => (await world.services.db.all('SELECT status, amount, payer, signature FROM x402_sales ORDER BY created_at')) as any[];


test("our agent buys from the merchant's @x402/hono seller: 200, the payout credited exactly, one sale, one x402.sale event and webhook", async () => {
  const payout0 = await world.balance(payout);
  const r = await x402Fetch(alice.api, alice.profile, { url: `${seller.url}/data` });
  expect(r.outcome).toBe('completed');
  expect(JSON.parse(r.response!.body)).toEqual({ data: 42 });
  expect(r.settled).toMatchObject({ fee_payer: feePayer });
  expect((await world.balance(payout)) - payout0).toBe(10_000n);
  expect(await sales()).toEqual([{ status: 'completed', amount: 10_000n, payer: alice.address, signature: r.settled!.signature }]);
  const events = (await (await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${merchant.api_key}` }, body: JSON.stringify({ action: 'events', types: ['x402.sale'] }) })).json()) as any;
  expect(events.data.items).toHaveLength(1);
  expect(events.data.items[0].data).toMatchObject({ amount: 0.01, payer_address: alice.address, pay_to: payout, signature: r.settled!.signature });
  // The delivery job's pass (the world runs no jobs): the Standard Webhooks message goes out once.
  await deliverDueWebhooks(world.services);
  const hook = await until('the x402.sale webhook', () => receiver.hooks.find((h) => h.type === 'x402.sale'));
  expect(receiver.hooks.filter((h) => h.type === 'x402.sale')).toHaveLength(1);
  expect(hook.data).toMatchObject({ signature: r.settled!.signature, amount: 0.01 });
});

test('the official client with a plain keypair pays through it; the same payload settled again is refused as a duplicate', async () => {
  const payout0 = await world.balance(payout);
  const http = new x402HTTPClient(new x402Client().register(DEVNET_CAIP2, new ClientExactSvm(buyer, { rpcUrl: world.simnet.url })));
  const unpaid = await fetch(`${seller.url}/data`);
  expect(unpaid.status).toBe(402);
  const required = http.getPaymentRequiredResponse((name) => unpaid.headers.get(name), await unpaid.json());
  const payload = await http.createPaymentPayload(required);
  const paid = await fetch(`${seller.url}/data`, { headers: http.encodePaymentSignatureHeader(payload) });
  expect(paid.status).toBe(200);
  expect(await paid.json()).toEqual({ data: 42 });
  expect((await world.balance(payout)) - payout0).toBe(10_000n);
  expect((await sales()).at(-1)).toMatchObject({ status: 'completed', payer: buyer.address });
  const again = await facilitate('settle', { x402Version: 2, paymentPayload: payload, paymentRequirements: required.accepts[0] });
  expect(again).toMatchObject({ success: false, errorReason: 'duplicate_settlement' });
  expect((await world.balance(payout)) - payout0).toBe(10_000n);
});

test("the official @x402/fetch with a plain keypair, and our agent's CLI, each pay the @x402/hono seller once: 200, the payout credited exactly, one line each in the merchant's history", async () => {
  const payout0 = await world.balance(payout);
  const pay = wrapFetchWithPayment(fetch, new x402Client().register(DEVNET_CAIP2, new ClientExactSvm(buyer, { rpcUrl: world.simnet.url })));
  const res = await pay(`${seller.url}/data`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ data: 42 });
  const cli = await runCli(['x402', 'fetch', `${seller.url}/data`, '--max-amount', '0.05', '--server', world.url, '--home', alice.home, '--json']);
  expect(cli.code).toBe(0);
  expect(cli.json.outcome).toBe('completed');
  expect((await world.balance(payout)) - payout0).toBe(20_000n);
  const history = (await (await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${merchant.api_key}` }, body: JSON.stringify({ action: 'history', limit: 100 }) })).json()) as any;
  const signatures = ((await sales()) as { signature: string }[]).slice(-2).map((s) => s.signature);
  for (const signature of signatures) expect(history.data.items.filter((i: any) => i.signature === signature && i.via === 'x402')).toHaveLength(1);
});

async function facilitate(path: 'verify' | 'settle', body: unknown, key = merchant.api_key): Promise<any> {
  const res = await fetch(`${facilitatorUrl}/${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

/** A payment of `amount` to `to` signed by `from`, built by hand so each MUST can be broken once. */
async function handMade(over: { amount?: bigint; extra?: Instruction; price?: bigint; authorityIsFeePayer?: boolean; feePayerInMemo?: boolean; lookupTable?: boolean } = {}) {
  const { blockhash, lastValidBlockHeight } = await world.services.chain.getLatestBlockhash();
  const authority = over.authorityIsFeePayer ? feePayer : buyer.address;
  const [source, destination] = await Promise.all([usdcAta(authority, USDC as Address), usdcAta(payout, USDC as Address)]);
  const instructions: Instruction[] = [
    computeUnitLimitInstruction(20_000),
    computeUnitPriceInstruction(over.price ?? 1n),
    transferCheckedInstruction({ source, mint: USDC as Address, destination, authority, amount: over.amount ?? 10_000n, decimals: 6 }),
    over.feePayerInMemo ? { ...memoInstruction('hand-made'), accounts: [{ address: feePayer, role: AccountRole.READONLY }] } : memoInstruction('hand-made'),
    ...(over.extra ? [over.extra] : []),
  ];
  let message: any = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as never, lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  if (over.lookupTable) message = compressTransactionMessageUsingAddressLookupTables(message, { [(await generateKeyPairSigner()).address]: [destination] } as never);
  const tx = over.authorityIsFeePayer ? compileTransaction(message) : await partiallySignTransaction([buyer.keyPair], compileTransaction(message));
  const requirements = { scheme: 'exact', network: DEVNET_CAIP2, amount: '10000', asset: USDC, payTo: payout, maxTimeoutSeconds: 60, extra: { feePayer } };
  return { x402Version: 2, paymentPayload: { x402Version: 2, accepted: requirements, payload: { transaction: getBase64EncodedWireTransaction(tx as never) } }, paymentRequirements: requirements };
}

test('each MUST of the exact scheme broken once is refused by /verify under its reason; a payTo not registered here too', async () => {
  expect(await facilitate('verify', await handMade())).toMatchObject({ isValid: true, payer: buyer.address });
  const cases: [string, Parameters<typeof handMade>[0], string][] = [
    ['wrong amount', { amount: 9_999n }, 'invalid_exact_svm_payload_amount_mismatch'],
    ['an extra instruction', { extra: memoInstruction('another') }, 'invalid_exact_svm_payload_transaction_instructions'],
    ['the fee payer as authority', { authorityIsFeePayer: true }, 'invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts'],
    ['the fee payer among the memo\'s accounts', { feePayerInMemo: true }, 'invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts'],
    ['a price above the cap', { price: 5_000_001n }, 'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high'],
    ['a lookup table', { lookupTable: true }, 'invalid_exact_svm_payload_transaction_address_lookup_tables'],
  ];
  for (const [name, over, reason] of cases) {
    const verdict = await facilitate('verify', await handMade(over));
    expect({ name, valid: verdict.isValid, reason: verdict.invalidReason }).toEqual({ name, valid: false, reason });
  }
  const stranger = await handMade();
  stranger.paymentRequirements = { ...stranger.paymentRequirements, payTo: (await generateKeyPairSigner()).address };
  expect(await facilitate('verify', stranger)).toMatchObject({ isValid: false, invalidReason: 'invalid_payment_requirements' });
  // Without a merchant key there is no facilitator at all.
  const res = await fetch(`${facilitatorUrl}/verify`, { method: 'POST', body: JSON.stringify(await handMade()) });
  expect(res.status).toBe(401);
});

test("a wallet sells with its bot key: paid by the official client and by another agent, the sale in the wallet's feed; no seller settles to another's address", async () => {
  const bob = await world.agent('Bob', { claimBy: 'bob@example.com' });
  await world.fund(bob.address, 0n);
  const auth = { Authorization: `Bearer ${bob.profile.api_key}` };
  const client = new HTTPFacilitatorClient({ url: facilitatorUrl, createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }) });
  const resourceServer = new x402ResourceServer(client).register(DEVNET_CAIP2, new ExactSvmScheme({ rpcUrl: world.simnet.url }));
  const app = new Hono();
  app.use(paymentMiddleware({ 'GET /report': { accepts: { scheme: 'exact', price: '$0.02', network: DEVNET_CAIP2, payTo: bob.address }, description: "bob's report" } }, resourceServer));
  app.get('/report', (c) => c.json({ report: 'ok' }));
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch, idleTimeout: 60 });
  try {
    const bob0 = await world.balance(bob.address);
    const http = new x402HTTPClient(new x402Client().register(DEVNET_CAIP2, new ClientExactSvm(buyer, { rpcUrl: world.simnet.url })));
    const url = `http://127.0.0.1:${server.port}/report`;
    const unpaid = await fetch(url);
    const required = http.getPaymentRequiredResponse((name) => unpaid.headers.get(name), await unpaid.json());
    const paid = await fetch(url, { headers: http.encodePaymentSignatureHeader(await http.createPaymentPayload(required)) });
    expect(paid.status).toBe(200);
    // Our agent pays our wallet's seller too: our fee payer, a payee registered here.
    const r = await x402Fetch(alice.api, alice.profile, { url });
    expect(r.outcome).toBe('completed');
    expect((await world.balance(bob.address)) - bob0).toBe(40_000n);
    const rows = await world.services.db.all('SELECT wallet_id, merchant_id, status FROM x402_sales WHERE pay_to = ?', bob.address);
    expect(rows).toEqual([
      { wallet_id: bob.profile.wallet_id, merchant_id: null, status: 'completed' },
      { wallet_id: bob.profile.wallet_id, merchant_id: null, status: 'completed' },
    ]);
    const feed = await bob.api.call<{ items: { type: string; data: any }[] }>('bot', 'events', { types: ['x402.sale'] });
    expect(feed.items.map((e) => e.data.amount)).toEqual([0.02, 0.02]);
    // Bob's key does not settle to the merchant's payout, nor the merchant's key to Bob's address.
    const toMerchant = await handMade();
    expect(await facilitate('verify', toMerchant, bob.profile.api_key)).toMatchObject({ isValid: false, invalidReason: 'invalid_payment_requirements' });
    const toBob = await handMade();
    toBob.paymentRequirements = { ...toBob.paymentRequirements, payTo: bob.address };
    expect(await facilitate('verify', toBob)).toMatchObject({ isValid: false, invalidReason: 'invalid_payment_requirements' });
  } finally {
    await server.stop(true);
  }
});
