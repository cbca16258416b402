/**
 * The paywall (issue 29, item 2): `agent-wallet merchant gate` in front of a plain HTTP upstream,
 * the real CLI process, settling through the daemon's facilitator. Unpaid → 402 with both
 * versions' requirements; paid by the official `@x402/fetch` (v2) and the official v1 client
 * with plain keypairs, and by our agent's CLI → the upstream's answer, the payout credited
 * exactly, the sale once in the merchant's books (history, verify, webhook) and once on the
 * buyer's; a resend under a payment-identifier is answered again without paying twice; an
 * upstream down after settlement → 502 with the receipt, recorded as a refund due, the agent's
 * money accounted on chain.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSigner, type Address, type KeyPairSigner } from '@solana/kit';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { wrapFetchWithPayment, x402Client, x402HTTPClient } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { ExactSvmSchemeV1 } from '@x402/svm/v1';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { ApiClient } from '../../src/client/api.ts';
import { x402Fetch } from '../../src/client/x402.ts';
import { parseRoute } from '../../src/domain/paywall-routes.ts';
import { startPaywall, type Paywall } from '../../src/x402/paywall.ts';
import { deliverDueWebhooks } from '../../src/webhooks/deliver.ts';
import { hookReceiver, until } from '../helpers/poll.ts';
import { MAIN, runCli } from '../helpers/daemon.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { DEVNET_CAIP2, USDC } from '../x402/sellers.ts';

let world: World;
let alice: Agent;
let buyer: KeyPairSigner;
let payout: Address;
let merchantHome: string;
let merchantKey: string;
let upstream: ReturnType<typeof Bun.serve>;
let upstreamHits: string[];
let receiver: ReturnType<typeof hookReceiver>;
let gate: { url: string; proc: ReturnType<typeof Bun.spawn> };
let deadGate: Paywall;
let downUpstream: Bun.TCPSocketListener;

const merchantCli = (...args: string[]) => runCli(['merchant', ...args, '--server', world.url, '--home', merchantHome, '--json']);

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  alice = await world.agent('Alice', { claimBy: 'alice@example.com' });
  await world.fund(alice.address, 5_000_000n);
  buyer = await generateKeyPairSigner();
  await world.fund(buyer.address, 5_000_000n);
  payout = (await generateKeyPairSigner()).address;
  await world.fund(payout, 0n);
  receiver = hookReceiver();
  upstreamHits = [];
  upstream = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (req) => {
      const url = new URL(req.url);
      upstreamHits.push(`${req.method} ${url.pathname}`);
      if (url.pathname === '/stream/down') return new Response(streamedAnswer());
      if (url.pathname === '/stream/up') return new Response(await readStreamedRequest(req));
      return Response.json({ method: req.method, path: url.pathname, query: url.search, paid_header_seen: req.headers.has('payment-signature') || req.headers.has('x-payment') });
    },
  });
  merchantHome = mkdtempSync(join(tmpdir(), 'aw-gate-'));
  const reg = await merchantCli('register', '--name', 'Paid API', '--username', 'paid-api', '--payout-address', payout, '--webhook-url', receiver.url);
  expect(reg.code).toBe(0);
  merchantKey = reg.json.api_key;
  gate = await startGateCli(['--upstream', `http://127.0.0.1:${upstream.port}`, '--route', 'GET /api/*=0.01', '--route', 'POST /api/*=0.02', '--port', '0']);
  // An upstream that is down: it closes every connection without a word. Held for the whole file: a
  // port merely freed could be taken by another test's server meanwhile (one answered 405 once).
  downUpstream = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { open: (socket) => void socket.end(), data: () => {} } });
  const goneUrl = `http://127.0.0.1:${downUpstream.port}`;
  deadGate = await startPaywall({ server: world.url, merchantKey, upstream: goneUrl, routes: [route('GET /*=0.01')], hostname: '127.0.0.1', port: 0, journal: ':memory:', log: () => {} });
});
afterAll(async () => {
  gate?.proc.kill('SIGTERM');
  await gate?.proc.exited;
  await deadGate?.stop();
  downUpstream?.stop(true);
  await upstream?.stop(true);
  await receiver?.stop();
  await world?.stop();
});

function route(text: string) {
  const parsed = parseRoute(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.route;
}

/** `agent-wallet merchant gate … --json` as a process; resolves once it prints where it listens. */
async function startGateCli(args: string[], env: Record<string, string> = {}): Promise<{ url: string; proc: ReturnType<typeof Bun.spawn> }> {
  const proc = Bun.spawn([process.execPath, MAIN, 'merchant', 'gate', ...args, '--server', world.url, '--home', merchantHome, '--json'], { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore', env: { ...process.env, ...env } });
  let out = '';
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { value, done } = await Promise.race([reader.read(), Bun.sleep(Math.max(0, deadline - Date.now())).then(() => ({ value: undefined, done: true }))]);
    if (value) out += new TextDecoder().decode(value);
    try {
      const started = JSON.parse(out);
      reader.releaseLock();
      return { url: started.url, proc };
    } catch {
      // Not all of it yet.
    }
    if (done) throw new Error(`the gate did not start: ${out} ${await new Response(proc.stderr).text()}`);
  }
}

/** The free streaming paths' side channels: the upstream sends its second part once the test read the first; the client sends its second once the upstream read the first. */
let releaseDown: () => void = () => {};
let upstreamReadFirst: () => void = () => {};
const text = new TextEncoder();

function streamedAnswer(): ReadableStream<Uint8Array> {
  const released = new Promise<void>((resolve) => (releaseDown = resolve));
  return new ReadableStream({
    async start(controller) {
      controller.enqueue(text.encode('first;'));
      await released;
      controller.enqueue(text.encode('second'));
      controller.close();
    },
  });
}

async function readStreamedRequest(req: Request): Promise<string> {
  const reader = req.body!.getReader();
  let got = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return got;
    got += new TextDecoder().decode(value);
    upstreamReadFirst();
  }
}

const decode = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));
const history = async () => (await new ApiClient(world.url, merchantKey).call<{ items: any[] }>('merchant', 'history', { limit: 100 })).items;

test('unpaid → 402 with the v2 requirements in PAYMENT-REQUIRED and the v1 ones in the body; a free path passes through untouched', async () => {
  const hits = upstreamHits.length;
  const unpaid = await fetch(`${gate.url}/api/joke?lang=en`);
  expect(unpaid.status).toBe(402);
  const v2 = decode(unpaid.headers.get('payment-required'));
  expect(v2).toMatchObject({ x402Version: 2, resource: { url: `${gate.url}/api/joke?lang=en` }, extensions: { 'payment-identifier': { info: { required: false } } } });
  expect(v2.accepts).toEqual([{ scheme: 'exact', network: DEVNET_CAIP2, amount: '10000', asset: USDC, payTo: payout, maxTimeoutSeconds: 60, extra: { feePayer: world.services.feePayer.address } }]);
  const v1 = (await unpaid.json()) as any;
  expect(v1.x402Version).toBe(1);
  expect(v1.accepts[0]).toMatchObject({ scheme: 'exact', network: 'solana-devnet', maxAmountRequired: '10000', resource: `${gate.url}/api/joke?lang=en`, asset: USDC, payTo: payout });
  const post = await fetch(`${gate.url}/api/upload`, { method: 'POST', body: 'x' });
  expect(post.status).toBe(402);
  expect(decode(post.headers.get('payment-required')).accepts[0].amount).toBe('20000');
  expect(upstreamHits.length).toBe(hits);
  // A path that reads as another host stays on the upstream.
  const sneaky = await fetch(`${gate.url}///example.com/free`);
  expect(sneaky.status).toBe(200);
  expect(((await sneaky.json()) as any).path).toMatch(/^\/+example\.com\/free$/);
  const free = await fetch(`${gate.url}/free/page?x=1`);
  expect(free.status).toBe(200);
  expect(await free.json()).toEqual({ method: 'GET', path: '/free/page', query: '?x=1', paid_header_seen: false });
});

test("bodies stream through the paywall both ways: the buyer reads the upstream's first part before the upstream sends its last, and the upstream reads the buyer's first part before the buyer sends its last", async () => {
  // Held in memory, either exchange waits for an end that never comes: each side gives up after 5 s and says so in the body.
  const answer = await fetch(`${gate.url}/stream/down`);
  const reader = answer.body!.getReader();
  const first = await Promise.race([reader.read().then((r) => new TextDecoder().decode(r.value)), Bun.sleep(5_000).then(() => 'nothing within 5 s')]);
  releaseDown();
  let rest = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
  expect({ first, rest }).toEqual({ first: 'first;', rest: 'second' });

  const readFirst = new Promise<string>((resolve) => (upstreamReadFirst = () => resolve('second')));
  const upload = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(text.encode('first;'));
      controller.enqueue(text.encode(await Promise.race([readFirst, Bun.sleep(5_000).then(() => 'the upstream had nothing within 5 s')])));
      controller.close();
    },
  });
  const echoed = await fetch(`${gate.url}/stream/up`, { method: 'POST', body: upload, duplex: 'half' } as RequestInit);
  expect(await echoed.text()).toBe('first;second');
});

test('the official @x402/fetch with a plain keypair (v2): the upstream answers, the payout gets 0.01 exactly, one sale in history and one webhook', async () => {
  const [payout0, buyer0] = [await world.balance(payout), await world.balance(buyer.address)];
  const pay = wrapFetchWithPayment(fetch, new x402Client().register(DEVNET_CAIP2, new ExactSvmScheme(buyer, { rpcUrl: world.simnet.url })));
  const res = await pay(`${gate.url}/api/joke`);
  expect(res.status).toBe(200);
  // The payment headers stay at the paywall.
  expect(await res.json()).toEqual({ method: 'GET', path: '/api/joke', query: '', paid_header_seen: false });
  const receipt = decode(res.headers.get('payment-response'));
  expect(receipt).toMatchObject({ success: true, network: DEVNET_CAIP2, payer: buyer.address });
  expect((await world.balance(payout)) - payout0).toBe(10_000n);
  expect(buyer0 - (await world.balance(buyer.address))).toBe(10_000n);
  const sold = (await history()).filter((i) => i.signature === receipt.transaction);
  expect(sold).toEqual([expect.objectContaining({ via: 'x402', amount: 0.01, payer_address: buyer.address, note: `${gate.url}/api/joke`, refund_due: null })]);
  await deliverDueWebhooks(world.services);
  await until('the sale webhook', () => receiver.hooks.some((h) => h.data?.signature === receipt.transaction));
  expect(receiver.hooks.filter((h) => h.type === 'x402.sale' && h.data.signature === receipt.transaction)).toHaveLength(1);
  // The sale's signed receipt, from the webhook and from get_receipt, verifies with jose against the published key.
  const jwks = createLocalJWKSet((await (await fetch(`${new URL(world.url).origin}/.well-known/agent-wallet/log-key`)).json()) as JSONWebKeySet);
  const { receipt: jws } = await new ApiClient(world.url, merchantKey).call<{ receipt: string }>('merchant', 'get_receipt', { transaction_id: sold[0].transaction_id });
  for (const r of [jws, receiver.hooks.find((h) => h.data?.signature === receipt.transaction)!.data.receipt]) {
    const claims = JSON.parse(new TextDecoder().decode((await compactVerify(r, jwks)).payload));
    expect(claims).toMatchObject({ kind: 'x402_sale', amount: '0.01', signature: receipt.transaction, from: { address: buyer.address }, to: { address: payout } });
  }
});

test('the official v1 client (X-PAYMENT) with a plain keypair reads the 402 body and pays; X-PAYMENT-RESPONSE carries the receipt', async () => {
  const payout0 = await world.balance(payout);
  const http = new x402HTTPClient(new x402Client().registerV1('solana-devnet', new ExactSvmSchemeV1(buyer, { rpcUrl: world.simnet.url })));
  const unpaid = await fetch(`${gate.url}/api/v1-thing`);
  // A v1 client knows no PAYMENT-REQUIRED header: it reads the body.
  const required = http.getPaymentRequiredResponse(() => null, await unpaid.json());
  expect(required.x402Version).toBe(1);
  const payload = await http.createPaymentPayload(required);
  const headers = http.encodePaymentSignatureHeader(payload);
  expect(Object.keys(headers)).toEqual(['X-PAYMENT']);
  const paid = await fetch(`${gate.url}/api/v1-thing`, { headers });
  expect(paid.status).toBe(200);
  expect(((await paid.json()) as any).path).toBe('/api/v1-thing');
  const receipt = http.getPaymentSettleResponse((name) => paid.headers.get(name));
  expect(receipt).toMatchObject({ success: true, network: 'solana-devnet', payer: buyer.address });
  expect((await world.balance(payout)) - payout0).toBe(10_000n);
  expect((await history()).filter((i) => i.signature === receipt.transaction)).toHaveLength(1);
});

test("our agent's CLI pays it: completed, once in the agent's history and once in the merchant's, found by verify with its payment identifier", async () => {
  const [payout0, alice0] = [await world.balance(payout), await world.balance(alice.address)];
  const r = await runCli(['x402', 'fetch', `${gate.url}/api/agent`, '--max-amount', '0.05', '--server', world.url, '--home', alice.home, '--json']);
  expect(r.code).toBe(0);
  expect(r.json.outcome).toBe('completed');
  expect((await world.balance(payout)) - payout0).toBe(10_000n);
  expect(alice0 - (await world.balance(alice.address))).toBe(10_000n);
  const sale = (await world.services.db.all("SELECT payment_id, signature FROM x402_sales WHERE payer = ? AND status = 'completed'", alice.address)) as { payment_id: string; signature: string }[];
  expect(sale).toHaveLength(1);
  expect(sale[0]!.payment_id).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
  const sold = (await history()).filter((i) => i.signature === sale[0]!.signature);
  expect(sold).toEqual([expect.objectContaining({ via: 'x402', payer: alice.username, reference: `x402:${sale[0]!.payment_id}` })]);
  // The sale's signed receipt names the same reference the books and verify use.
  const { claims } = await new ApiClient(world.url, merchantKey).call<{ claims: { reference: string } }>('merchant', 'get_receipt', { transaction_id: sold[0].transaction_id });
  expect(claims.reference).toBe(`x402:${sale[0]!.payment_id}`);
  const bought = (await alice.api.call<{ items: any[] }>('bot', 'transactions', { type: 'x402', limit: 100 })).items.filter((t) => t.signature === sale[0]!.signature);
  expect(bought).toEqual([expect.objectContaining({ status: 'completed', amount: 0.01 })]);
  // The merchant's CLI finds it by the payment identifier; the API by the signature too.
  expect((await merchantCli('verify', `x402:${sale[0]!.payment_id}`)).json).toMatchObject({ paid: true, status: 'paid', amount: 0.01, via: 'x402' });
  expect(await new ApiClient(world.url, merchantKey).call('merchant', 'verify', { reference: sale[0]!.signature })).toMatchObject({ paid: true, amount: 0.01, via: 'x402' });
});

test('a resend of the same payment under its payment identifier gets the first answer and pays once; other bytes under that id are refused', async () => {
  const payout0 = await world.balance(payout);
  const hits = upstreamHits.length;
  const http = new x402HTTPClient(new x402Client().register(DEVNET_CAIP2, new ExactSvmScheme(buyer, { rpcUrl: world.simnet.url })));
  const ask = async () => http.getPaymentRequiredResponse((n) => unpaidHeaders.get(n));
  const unpaid = await fetch(`${gate.url}/api/once`);
  const unpaidHeaders = unpaid.headers;
  const required = await ask();
  const id = `order_${crypto.randomUUID().replaceAll('-', '')}`;
  const payload = await http.createPaymentPayload(required);
  payload.extensions = appendPaymentIdentifierToExtensions(structuredClone(required.extensions ?? {}), id);
  const headers = http.encodePaymentSignatureHeader(payload);
  const first = await fetch(`${gate.url}/api/once`, { headers });
  const again = await fetch(`${gate.url}/api/once`, { headers });
  expect([first.status, again.status]).toEqual([200, 200]);
  expect(await again.text()).toBe(await first.text());
  expect(again.headers.get('payment-response')).toBe(first.headers.get('payment-response'));
  expect(upstreamHits.length - hits).toBe(1);
  expect((await world.balance(payout)) - payout0).toBe(10_000n);
  const other = await http.createPaymentPayload(required);
  other.extensions = payload.extensions;
  const conflict = await fetch(`${gate.url}/api/once`, { headers: http.encodePaymentSignatureHeader(other) });
  expect(conflict.status).toBe(402);
  expect(decode(conflict.headers.get('payment-required')).error).toContain('payment_identifier_conflict');
  expect((await world.balance(payout)) - payout0).toBe(10_000n);
  expect(await new ApiClient(world.url, merchantKey).call('merchant', 'verify', { reference: `x402:${id}` })).toMatchObject({ paid: true, amount: 0.01 });
  // The identifier the buyer chose never reads as the merchant's own order reference.
  expect(await new ApiClient(world.url, merchantKey).call('merchant', 'verify', { reference: id })).toMatchObject({ paid: false, status: 'not_found' });
});

test('a buyer that pays the cheaper route and presents it on the dearer one is refused: nothing settles, nothing reaches the upstream', async () => {
  const [payout0, buyer0, hits] = [await world.balance(payout), await world.balance(buyer.address), upstreamHits.length];
  const http = new x402HTTPClient(new x402Client().register(DEVNET_CAIP2, new ExactSvmScheme(buyer, { rpcUrl: world.simnet.url })));
  const cheap = await fetch(`${gate.url}/api/cheap`);
  const payload = await http.createPaymentPayload(http.getPaymentRequiredResponse((n) => cheap.headers.get(n)));
  const dear = await fetch(`${gate.url}/api/upload`, { method: 'POST', body: 'x', headers: http.encodePaymentSignatureHeader(payload) });
  expect(dear.status).toBe(402);
  expect(decode(dear.headers.get('payment-required')).error).toBe("the payment's accepted option is not this route's requirements");
  // The same payment with its `accepted` rewritten to the dear route's terms: the transfer still moves 0.01, so verify refuses it.
  const forged = { ...payload, accepted: { ...payload.accepted, amount: '20000' } };
  const refused = await fetch(`${gate.url}/api/upload`, { method: 'POST', body: 'x', headers: http.encodePaymentSignatureHeader(forged) });
  expect(refused.status).toBe(402);
  expect(decode(refused.headers.get('payment-required')).error).toBe('invalid_exact_svm_payload_amount_mismatch');
  expect([await world.balance(payout), await world.balance(buyer.address), upstreamHits.length]).toEqual([payout0, buyer0, hits]);
});

test("an upstream down after settlement: 502 with the receipt, the sale recorded as the merchant's refund due, the agent's money accounted on chain", async () => {
  const [payout0, alice0] = [await world.balance(payout), await world.balance(alice.address)];
  const r = await x402Fetch(alice.api, alice.profile, { url: `${deadGate.url}/report` });
  expect(r.outcome).toBe('completed');
  expect(r.response?.status).toBe(502);
  expect(JSON.parse(r.response!.body).error).toBe('upstream_failed');
  expect((await world.balance(payout)) - payout0).toBe(10_000n);
  expect(alice0 - (await world.balance(alice.address))).toBe(10_000n);
  const sold = (await history()).filter((i) => i.signature === r.settled!.signature);
  expect(sold).toHaveLength(1);
  expect(sold[0].refund_due).toMatch(/^the upstream did not answer/);
  const bought = (await alice.api.call<{ items: any[] }>('bot', 'transactions', { type: 'x402', limit: 100 })).items.filter((t) => t.signature === r.settled!.signature);
  expect(bought).toEqual([expect.objectContaining({ status: 'completed', amount: 0.01 })]);
});

/** A v2 payment of `path` on `gateUrl` by the plain-keypair buyer, under a payment identifier of its own: the request's headers. */
async function paymentWithId(gateUrl: string, path: string): Promise<Record<string, string>> {
  const http = new x402HTTPClient(new x402Client().register(DEVNET_CAIP2, new ExactSvmScheme(buyer, { rpcUrl: world.simnet.url })));
  const unpaid = await fetch(`${gateUrl}${path}`);
  const required = http.getPaymentRequiredResponse((n) => unpaid.headers.get(n));
  const payload = await http.createPaymentPayload(required);
  payload.extensions = appendPaymentIdentifierToExtensions(structuredClone(required.extensions ?? {}), `lost_${crypto.randomUUID().replaceAll('-', '')}`);
  return http.encodePaymentSignatureHeader(payload);
}

/** A gate killed for real (SIGKILL) at `crashAt` while answering a paid request, and its journal. */
async function gateKilledAt(crashAt: string, path: string) {
  const journal = join(mkdtempSync(join(tmpdir(), 'aw-gate-journal-')), 'gate.sqlite');
  const args = ['--upstream', `http://127.0.0.1:${upstream.port}`, '--route', 'GET /api/*=0.01', '--port', '0', '--journal', journal];
  const dying = await startGateCli(args, { AGENT_WALLET_CRASH_AT: crashAt });
  const headers = await paymentWithId(dying.url, path);
  const [payout0, buyer0, hits] = [await world.balance(payout), await world.balance(buyer.address), upstreamHits.filter((h) => h === `GET ${path}`).length];
  const lost = await fetch(`${dying.url}${path}`, { headers }).then(
    (r) => `answered ${r.status}`,
    () => 'no answer',
  );
  await dying.proc.exited;
  expect({ lost, signal: dying.proc.signalCode }).toEqual({ lost: 'no answer', signal: 'SIGKILL' });
  // The buyer paid once, the merchant got it once: the payment settled before the gate died.
  expect([(await world.balance(payout)) - payout0, buyer0 - (await world.balance(buyer.address))]).toEqual([10_000n, 10_000n]);
  const restarted = await startGateCli(args);
  return { headers, restarted, args, payout0, buyer0, upstreamAsked: () => upstreamHits.filter((h) => h === `GET ${path}`).length - hits };
}

test.each(['paywall_settle_returned', 'paywall_settled'])(
  'a gate killed after the payment settled and before the upstream was asked (%s): started again, it records the sale as a refund due by itself; the resend gets the receipt and says so, the same bytes every time; the buyer paid once',
  async (crashAt) => {
    const path = `/api/lost-${crashAt}`;
    const g = await gateKilledAt(crashAt, path);
    try {
      const sale = await until('the sale recorded as refund due', async () => (await history()).find((i) => i.note?.endsWith(path) && i.refund_due));
      expect(sale.refund_due).toMatch(/^the payment settled but the paywall did not deliver its answer/);
      const first = await fetch(`${g.restarted.url}${path}`, { headers: g.headers });
      const again = await fetch(`${g.restarted.url}${path}`, { headers: g.headers });
      expect([first.status, again.status]).toEqual([502, 502]);
      const body = await first.text();
      expect(await again.text()).toBe(body);
      expect(JSON.parse(body)).toMatchObject({ error: 'answer_lost', message: expect.stringContaining('refund due') });
      expect(again.headers.get('payment-response')).toBe(first.headers.get('payment-response'));
      expect(decode(first.headers.get('payment-response'))).toMatchObject({ success: true, transaction: sale.signature, payer: buyer.address, network: DEVNET_CAIP2 });
      expect(g.upstreamAsked()).toBe(0);
      // Conservation: still one payment on chain, one sale in the books.
      expect([(await world.balance(payout)) - g.payout0, g.buyer0 - (await world.balance(buyer.address))]).toEqual([10_000n, 10_000n]);
      expect((await history()).filter((i) => i.note?.endsWith(path))).toEqual([expect.objectContaining({ signature: sale.signature, amount: 0.01 })]);
    } finally {
      g.restarted.proc.kill('SIGTERM');
      await g.restarted.proc.exited;
    }
  },
);

test("a gate killed after it kept the upstream's answer and before it sent it: started again, the resend gets that answer from its journal, the same bytes, without asking the upstream again; no refund due; the buyer paid once; a second gate on that journal is refused", async () => {
  const path = '/api/kept-answer';
  const g = await gateKilledAt('paywall_answer_kept', path);
  try {
    expect(g.upstreamAsked()).toBe(1);
    const first = await fetch(`${g.restarted.url}${path}`, { headers: g.headers });
    const again = await fetch(`${g.restarted.url}${path}`, { headers: g.headers });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(await first.json()).toEqual({ method: 'GET', path, query: '', paid_header_seen: false });
    expect(again.headers.get('payment-response')).toBe(first.headers.get('payment-response'));
    const receipt = decode(first.headers.get('payment-response'));
    expect(receipt).toMatchObject({ success: true, payer: buyer.address });
    expect(g.upstreamAsked()).toBe(1);
    expect((await history()).filter((i) => i.signature === receipt.transaction)).toEqual([expect.objectContaining({ refund_due: null, amount: 0.01 })]);
    expect([(await world.balance(payout)) - g.payout0, g.buyer0 - (await world.balance(buyer.address))]).toEqual([10_000n, 10_000n]);
    const second = await runCli(['merchant', 'gate', ...g.args, '--server', world.url, '--home', merchantHome, '--json']);
    expect(second.code).not.toBe(0);
    expect(second.json.error.message).toContain('another gate is using the journal');
  } finally {
    g.restarted.proc.kill('SIGTERM');
    await g.restarted.proc.exited;
  }
});

test('the CLI refuses a malformed route (exit 2, naming it); a key the daemon does not know stops the start, saying so', async () => {
  const bad = await merchantCli('gate', '--upstream', 'http://127.0.0.1:1', '--route', 'GET /api=abc');
  expect(bad.code).toBe(2);
  expect(bad.json.error.message).toContain('--route: the price "abc"');
  const refused = await startPaywall({ server: world.url, merchantKey: 'wallet_merchant_11111111111111111111111111111111', upstream: 'http://127.0.0.1:1', routes: [route('GET /*=1')], hostname: '127.0.0.1', port: 0, journal: ':memory:', log: () => {} }).then(
    () => null,
    (e) => e,
  );
  expect(String(refused?.message)).toContain('refused the merchant key');
});
