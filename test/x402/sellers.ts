/**
 * Real x402 peers for tests, built from the official packages against simnet:
 * - a facilitator (`@x402/core` x402Facilitator + `@x402/svm` exact scheme, v2 and v1) whose
 *   fee payer is a fresh kit keypair funded with SOL on simnet and whose RPC is simnet;
 * - a v2 seller (`@x402/hono` paymentMiddleware on `hono`, served by Bun.serve on 127.0.0.1:0);
 * - a v1 seller built by hand (the packages ship no v1 server): the 402 body `{x402Version: 1,
 *   accepts}` as FACTS.md states it, X-PAYMENT verified and settled by the same facilitator,
 *   answered with X-PAYMENT-RESPONSE;
 * - a hostile v2 seller (short blockhash claims, receipts naming other transactions) and a
 *   transaction that lands failed while listing an account, for the chain-truth tests.
 */
import type { ApiClient } from '../../src/client/api.ts';
import {
  AccountRole,
  appendTransactionMessageInstruction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  getBase58Decoder,
  getBase64Encoder,
  getTransactionDecoder,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { registerExactSvmScheme as registerFacilitatorScheme } from '@x402/svm/exact/facilitator';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { Hono } from 'hono';
import type { World } from '../helpers/world.ts';

export const DEVNET_CAIP2 = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
export const USDC = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

export interface Facilitator {
  facilitator: x402Facilitator;
  client: FacilitatorClient;
  feePayer: Address;
  settled: string[];
  /** Its fee payer's signer (the test facilitators that answer settlement_pending compute the transaction id with it). */
  signer: KeyPairSigner;
}

/** A facilitator whose signer pays fees with a fresh keypair funded on simnet. */
export async function startFacilitator(world: World): Promise<Facilitator> {
  const signer = await generateKeyPairSigner();
  await world.simnet.airdrop(signer.address, 2_000_000_000n);
  const facilitator = new x402Facilitator();
  registerFacilitatorScheme(facilitator, { signer: toFacilitatorSvmSigner(signer, { defaultRpcUrl: world.simnet.url }), networks: DEVNET_CAIP2 });
  const settled: string[] = [];
  facilitator.onAfterSettle(async ({ result }) => {
    if (result.success) settled.push(result.transaction);
  });
  const client: FacilitatorClient = {
    verify: (p, r) => facilitator.verify(p, r),
    settle: (p, r) => facilitator.settle(p, r),
    getSupported: async () => facilitator.getSupported() as never,
  };
  return { facilitator, client, feePayer: signer.address, settled, signer };
}

/** A fresh seller address whose USDC token account exists (x402 never creates it). */
export async function sellerAddress(world: World, withTokenAccount = true): Promise<Address> {
  const { address } = await generateKeyPairSigner();
  if (withTokenAccount) await world.fund(address, 0n);
  return address;
}

const b64json = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

export interface Server {
  url: string;
  /** Mutable switches the routes read. */
  state: { closed: boolean; paidHits: number };
  stop(): Promise<void>;
}

function serve(app: Hono): { url: string; stop: () => Promise<void> } {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch, idleTimeout: 60 });
  return { url: `http://127.0.0.1:${server.port}`, stop: async () => void (await server.stop(true)) };
}

/**
 * The v2 seller: `GET /paid` costs `price` (USD string such as "$0.01", the package converts it
 * to USDC on devnet), `GET /big-paid` costs the same and answers 10 MiB, `GET /free` costs
 * nothing, `GET /big` answers 10 MiB unpaid, `GET /stall` never answers, `GET /eth-only` and
 * `GET /other-asset` answer 402 offering only a non-Solana network / a non-USDC mint, and
 * `GET /catalogued` costs `price` until `state.closed` is set (then it answers 200 for free);
 * `GET /slow-settle` settles a payment and then holds the answer for 3 s; `GET /black-hole`
 * never answers a paid request (and never settles it); `GET /refuse` answers every payment with
 * a 402 refusal without settling it.
 */
export async function startV2Seller(world: World, f: Facilitator, opts: { payTo: Address; price?: string; memo?: string }): Promise<Server> {
  const price = opts.price ?? '$0.01';
  const state = { closed: false, paidHits: 0 };
  const resourceServer = new x402ResourceServer(f.client).register(DEVNET_CAIP2, new ExactSvmScheme({ rpcUrl: world.simnet.url }));
  const option = { scheme: 'exact', price, network: DEVNET_CAIP2, payTo: opts.payTo, ...(opts.memo ? { extra: { memo: opts.memo } } : {}) } as const;
  const app = new Hono();
  app.use(async (c, next) => {
    if (c.req.path === '/catalogued' && state.closed) return c.json({ free: true });
    // A paid request that never reaches the payment middleware: nothing is settled, no answer.
    if (c.req.path === '/black-hole' && c.req.header('payment-signature')) {
      await Bun.sleep(30_000);
      return c.text('too late');
    }
    // A paid request refused without settling it, as a seller whose facilitator rejects it answers.
    if (c.req.path === '/refuse' && c.req.header('payment-signature')) {
      return new Response('{}', { status: 402, headers: { 'PAYMENT-REQUIRED': b64json({ x402Version: 2, error: 'invalid_exact_svm_payload_amount_mismatch', resource: { url: c.req.url }, accepts: [] }) } });
    }
    await next();
    // Settled (the middleware ran), then the answer is held back past the buyer's deadline.
    if (c.req.path === '/slow-settle' && c.req.header('payment-signature')) await Bun.sleep(3000);
  });
  app.use(
    paymentMiddleware(
      {
        'GET /paid': { accepts: option, description: 'a paid joke', mimeType: 'application/json' },
        'POST /paid': { accepts: option, description: 'a paid echo', mimeType: 'application/json' },
        'GET /big-paid': { accepts: option, description: 'a lot of paid bytes' },
        'GET /catalogued': { accepts: option, description: 'a catalogued API' },
        'GET /slow-settle': { accepts: option, description: 'settles, then answers too late' },
        'GET /black-hole': { accepts: option, description: 'never answers a paid request' },
        'GET /refuse': { accepts: option, description: 'refuses every payment' },
      },
      resourceServer,
    ),
  );
  app.get('/paid', (c) => {
    state.paidHits++;
    return c.json({ joke: 'a paid joke', n: state.paidHits });
  });
  app.post('/paid', async (c) => {
    state.paidHits++;
    return c.json({ echo: await c.req.text(), header: c.req.header('x-custom') ?? null });
  });
  app.get('/big-paid', () => new Response(new Uint8Array(10 * 1024 * 1024).fill(97), { headers: { 'content-type': 'text/plain' } }));
  app.get('/catalogued', (c) => c.json({ data: 'catalogued' }));
  app.get('/slow-settle', (c) => c.json({ slow: true }));
  app.get('/black-hole', (c) => c.json({ never: true }));
  app.get('/refuse', (c) => c.json({ never: true }));
  app.get('/free', (c) => c.json({ free: true }));
  app.get('/big', () => new Response(new Uint8Array(10 * 1024 * 1024).fill(98), { headers: { 'content-type': 'text/plain' } }));
  app.get('/stall', async () => {
    await Bun.sleep(30_000);
    return new Response('too late');
  });
  const handMade = (accepts: Record<string, unknown>[]) => (c: { req: { url: string } }) =>
    new Response('{}', {
      status: 402,
      headers: { 'content-type': 'application/json', 'PAYMENT-REQUIRED': b64json({ x402Version: 2, error: 'Payment required', resource: { url: c.req.url }, accepts }) },
    });
  app.get(
    '/eth-only',
    handMade([{ scheme: 'exact', network: 'eip155:8453', amount: '10000', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', maxTimeoutSeconds: 60, extra: {} }]),
  );
  app.get(
    '/other-asset',
    handMade([{ scheme: 'exact', network: DEVNET_CAIP2, amount: '10000', asset: 'So11111111111111111111111111111111111111112', payTo: opts.payTo, maxTimeoutSeconds: 60, extra: { feePayer: f.feePayer } }]),
  );
  const s = serve(app);
  return { url: s.url, state, stop: s.stop };
}

/**
 * The v1 seller, by hand: `GET /v1-paid` answers 402 with the v1 body; a request with X-PAYMENT
 * is verified and settled by the facilitator and answered with X-PAYMENT-RESPONSE.
 */
export async function startV1Seller(f: Facilitator, opts: { payTo: Address; amount: string }): Promise<Server> {
  const state = { closed: false, paidHits: 0 };
  const app = new Hono();
  app.get('/v1-paid', async (c) => {
    const requirements = {
      scheme: 'exact',
      network: 'solana-devnet',
      maxAmountRequired: opts.amount,
      resource: c.req.url,
      description: 'a v1 paid resource',
      mimeType: 'application/json',
      outputSchema: {},
      payTo: opts.payTo,
      maxTimeoutSeconds: 60,
      asset: USDC,
      extra: { feePayer: f.feePayer },
    };
    const header = c.req.header('x-payment');
    if (!header) return c.json({ x402Version: 1, error: 'X-PAYMENT header is required', accepts: [requirements] }, 402);
    const payload = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentPayload;
    const verified = await f.facilitator.verify(payload, requirements as unknown as PaymentRequirements);
    if (!verified.isValid) return c.json({ x402Version: 1, error: verified.invalidReason, accepts: [requirements] }, 402);
    const settled = await f.facilitator.settle(payload, requirements as unknown as PaymentRequirements);
    if (!settled.success) return c.json({ x402Version: 1, error: settled.errorReason, accepts: [requirements] }, 402);
    state.paidHits++;
    c.header('X-PAYMENT-RESPONSE', b64json(settled));
    return c.json({ v1: 'paid content' });
  });
  const s = serve(app);
  return { url: s.url, state, stop: s.stop };
}

/** A held payment: what the buyer sent, settleable later by the seller's facilitator. */
export interface HeldPayment {
  payload: PaymentPayload;
  accepted: PaymentRequirements;
}

export interface HostileSeller extends Server {
  /** Paid requests the seller kept without settling them, in arrival order. */
  held: HeldPayment[];
  /** The signature of the one payment `/steal` really settled. */
  genuine: string | null;
  /** The transaction `/fake-receipt` names in its receipt. */
  fakeReceipt: string | null;
  /** Settles a held payment through the facilitator now (it signs as fee payer and sends); the landed signature. */
  settleHeld(h: HeldPayment): Promise<string>;
}

/**
 * A hostile v2 seller, by hand on the official facilitator:
 * - `GET /short-claim` offers `extra.recentBlockhash` with a `lastValidBlockHeight` only 25 blocks
 *   ahead (a lie: the blockhash stays valid for 150), refuses every paid request with a 402 and
 *   keeps the signed bytes to settle later;
 * - `GET /steal` settles the first paid request for real; every later one is kept unsettled and
 *   answered 200 with a receipt naming that first payment's signature;
 * - `GET /fake-receipt` keeps every paid request unsettled and answers 200 with a receipt naming
 *   `fakeReceipt` (any transaction the seller chose).
 */
export async function startHostileSeller(world: World, f: Facilitator, opts: { payTo: Address; amount: string }): Promise<HostileSeller> {
  const held: HeldPayment[] = [];
  const state = { closed: false, paidHits: 0 };
  const seller = { genuine: null as string | null, fakeReceipt: null as string | null };
  const option = (extra: Record<string, unknown> = {}) => ({ scheme: 'exact', network: DEVNET_CAIP2, amount: opts.amount, asset: USDC, payTo: opts.payTo, maxTimeoutSeconds: 60, extra: { feePayer: f.feePayer, ...extra } });
  const challenge = (url: string, accepts: Record<string, unknown>[], error = 'Payment required') =>
    new Response('{}', { status: 402, headers: { 'content-type': 'application/json', 'PAYMENT-REQUIRED': b64json({ x402Version: 2, error, resource: { url }, accepts }) } });
  const paidPayload = (header: string | undefined): HeldPayment | null => {
    if (!header) return null;
    const payload = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentPayload;
    return { payload, accepted: payload.accepted as PaymentRequirements };
  };
  const app = new Hono();
  app.get('/short-claim', async (c) => {
    const paid = paidPayload(c.req.header('payment-signature'));
    if (!paid) {
      const { blockhash } = await world.services.chain.getLatestBlockhash();
      const claimed = (await world.services.chain.getBlockHeight()) + 25n;
      return challenge(c.req.url, [option({ recentBlockhash: blockhash, lastValidBlockHeight: claimed.toString() })]);
    }
    held.push(paid);
    return challenge(c.req.url, [], 'invalid_exact_svm_payload_transaction');
  });
  app.get('/steal', async (c) => {
    const paid = paidPayload(c.req.header('payment-signature'));
    if (!paid) return challenge(c.req.url, [option()]);
    state.paidHits++;
    if (seller.genuine === null) {
      const settled = await f.facilitator.settle(paid.payload, paid.accepted);
      if (!settled.success) return challenge(c.req.url, [], settled.errorReason ?? 'settle failed');
      seller.genuine = settled.transaction;
    } else {
      held.push(paid);
    }
    c.header('PAYMENT-RESPONSE', b64json({ success: true, transaction: seller.genuine, network: DEVNET_CAIP2, payer: 'buyer' }));
    return c.json({ stolen: held.length > 0 });
  });
  app.get('/fake-receipt', (c) => {
    const paid = paidPayload(c.req.header('payment-signature'));
    if (!paid) return challenge(c.req.url, [option()]);
    held.push(paid);
    c.header('PAYMENT-RESPONSE', b64json({ success: true, transaction: seller.fakeReceipt, network: DEVNET_CAIP2, payer: 'buyer' }));
    return c.json({ faked: true });
  });
  const s = serve(app);
  return {
    url: s.url,
    state,
    stop: s.stop,
    held,
    get genuine() {
      return seller.genuine;
    },
    get fakeReceipt() {
      return seller.fakeReceipt;
    },
    set fakeReceipt(signature) {
      seller.fakeReceipt = signature;
    },
    async settleHeld(h) {
      const settled = await f.facilitator.settle(h.payload, h.accepted);
      if (!settled.success) throw new Error(`the facilitator did not settle the held payment: ${settled.errorReason}`);
      return settled.transaction;
    },
  };
}

const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;

/** A transaction that lands and fails, listing `listed` (a memo naming a non-signer account fails): signed and sent by a stranger. */
export async function failedTransactionListing(world: World, listed: Address): Promise<string> {
  const stranger = await generateKeyPairSigner();
  await world.simnet.airdrop(stranger.address, 1_000_000_000n);
  const lifetime = await world.services.chain.getLatestBlockhash();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(stranger, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: lifetime.blockhash as never, lastValidBlockHeight: lifetime.lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstruction({ programAddress: MEMO_PROGRAM, accounts: [{ address: listed, role: AccountRole.READONLY }], data: new TextEncoder().encode('not yours') }, m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  const res = await fetch(world.simnet.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [getBase64EncodedWireTransaction(signed), { encoding: 'base64', skipPreflight: true }] }),
  });
  const signature = ((await res.json()) as { result: string }).result;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const t = await world.services.chain.getTokenTransfersOf(signature);
    if (t) {
      if (t.err === null || !t.accountKeys.includes(listed)) throw new Error('the transaction was meant to fail while listing the account');
      return signature;
    }
    if (Date.now() > deadline) throw new Error('the failing transaction never showed');
    await Bun.sleep(50);
  }
}

/** An api whose x402_settle is never sent: the agent stops after x402_sign_complete (a seller, or a backup, is left holding the signed bytes). */
export const signOnly = (api: ApiClient): ApiClient =>
  new Proxy(api, {
    get: (target, prop) => (prop === 'call' ? (ep: any, action: string, params: any, o: any) => (action === 'x402_settle' ? Promise.resolve({}) : target.call(ep, action, params, o)) : Reflect.get(target, prop)),
  });

/**
 * A v2 seller (`@x402/hono` + `@x402/extensions`) that declares the payment-identifier extension
 * `required`: a paid request without an id is refused (400) and never settled; the answer to an id
 * is kept, so a retry with the same id gets it again without a second settlement. `state.stall`
 * answers are held for `stallMs` after settling (or after the cached answer is found): the
 * network failing between settlement and answer, as the buyer sees it. `GET /once` costs $0.01.
 */
export async function startIdentifierSeller(world: World, f: Facilitator, opts: { payTo: Address; stallMs: number }) {
  const { declarePaymentIdentifierExtension, extractPaymentIdentifier, PAYMENT_IDENTIFIER } = await import('@x402/extensions/payment-identifier');
  // badGateway: that many paid answers are swallowed by a gateway answering 502 (after the settlement).
  const state = { stall: 0, badGateway: 0, paidHits: 0, ids: [] as (string | null)[], refusedWithoutId: 0 };
  const answers = new Map<string, { status: number; body: string; headers: [string, string][] }>();
  const resourceServer = new x402ResourceServer(f.client).register(DEVNET_CAIP2, new ExactSvmScheme({ rpcUrl: world.simnet.url }));
  const app = new Hono();
  const held = async (r: Response) => {
    if (state.badGateway > 0) {
      state.badGateway--;
      return new Response('Bad Gateway', { status: 502 });
    }
    if (state.stall > 0) {
      state.stall--;
      await Bun.sleep(opts.stallMs);
    }
    return r;
  };
  app.use(async (c, next) => {
    const signature = c.req.header('payment-signature');
    if (!signature) return next();
    const payload = JSON.parse(Buffer.from(signature, 'base64').toString('utf8')) as PaymentPayload;
    const id = extractPaymentIdentifier(payload);
    state.ids.push(id);
    if (!id) {
      state.refusedWithoutId++;
      return c.json({ error: 'payment-identifier is required' }, 400);
    }
    const known = answers.get(id);
    if (known) return held(new Response(known.body, { status: known.status, headers: known.headers }));
    await next();
    const body = await c.res.clone().text();
    answers.set(id, { status: c.res.status, body, headers: [...c.res.headers] });
    // After next() Hono keeps c.res, not what a middleware returns: the answer is set there.
    c.res = await held(new Response(body, { status: c.res.status, headers: c.res.headers }));
  });
  app.use(
    paymentMiddleware(
      {
        'GET /once': {
          accepts: { scheme: 'exact', price: '$0.01', network: DEVNET_CAIP2, payTo: opts.payTo },
          description: 'paid once per payment identifier',
          mimeType: 'application/json',
          extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(true) },
        },
      },
      resourceServer,
    ),
  );
  app.get('/once', (c) => {
    state.paidHits++;
    return c.json({ content: 'bought once', n: state.paidHits });
  });
  const s = serve(app);
  return { url: s.url, state, stop: s.stop };
}

/**
 * A facilitator that answers `settlement_pending` (the non-terminal outcome of `@x402/core` ≥
 * 2.24) with the transaction id its fee payer's signature will give, and holds the payment:
 * `release()` then settles what it holds for real (it lands); never released, nothing is sent.
 */
export function pendingFacilitator(f: Facilitator) {
  const held = new Map<string, { payload: PaymentPayload; requirements: PaymentRequirements }>();
  const client: FacilitatorClient = {
    verify: (p, r) => f.facilitator.verify(p, r),
    settle: async (payload, requirements) => {
      const wire = (payload.payload as { transaction: string }).transaction;
      held.set(wire, { payload, requirements });
      const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
      const [signatures] = await f.signer.signTransactions([transaction as Parameters<KeyPairSigner['signTransactions']>[0][number]]);
      const txId = getBase58Decoder().decode(signatures![f.signer.address]!);
      return { success: false, errorReason: 'settlement_pending', transaction: txId, network: requirements.network } as never;
    },
    getSupported: async () => f.facilitator.getSupported() as never,
  };
  return {
    facilitator: { ...f, client } satisfies Facilitator,
    held,
    /** Settles every held payment for real; returns the landed transaction ids. */
    release: async () => {
      const landed: string[] = [];
      for (const { payload, requirements } of held.values()) {
        const result = await f.facilitator.settle(payload, requirements);
        if (result.success) landed.push(result.transaction);
      }
      held.clear();
      return landed;
    },
  };
}

/**
 * A v2 seller (`@x402/hono` + `@x402/extensions` sign-in-with-x) for `GET /article` ($0.01): its
 * 402 offers a Solana sign-in (5 minutes), its settle hook records who paid, and a request
 * carrying a valid SIGN-IN-WITH-X from a wallet that paid for the path is served without payment.
 * `origin` overrides the origin the challenges name (a seller naming another host).
 */
export async function startSiwxSeller(world: World, f: Facilitator, opts: { payTo: Address; origin?: string; expirationSeconds?: number }) {
  const { createSIWxResourceServerExtension, declareSIWxExtension, InMemorySIWxStorage } = await import('@x402/extensions/sign-in-with-x');
  const state = { paidHits: 0, signedIn: 0 };
  let app: Hono | null = null;
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 60, fetch: (req) => app!.fetch(req) });
  const url = `http://127.0.0.1:${server.port}`;
  const storage = new InMemorySIWxStorage();
  const resourceServer = new x402ResourceServer(f.client)
    .register(DEVNET_CAIP2, new ExactSvmScheme({ rpcUrl: world.simnet.url }))
    .registerExtension(createSIWxResourceServerExtension({ storage, origin: opts.origin ?? url, onEvent: (e) => void (e.type === 'access_granted' && state.signedIn++) }));
  app = new Hono();
  app.use(
    paymentMiddleware(
      {
        'GET /article': {
          accepts: { scheme: 'exact', price: '$0.01', network: DEVNET_CAIP2, payTo: opts.payTo },
          description: 'an article you keep once bought',
          mimeType: 'application/json',
          extensions: declareSIWxExtension({ network: DEVNET_CAIP2, statement: 'Sign in to read what you bought', expirationSeconds: opts.expirationSeconds ?? 300 }),
        },
      },
      resourceServer,
    ),
  );
  app.get('/article', (c) => {
    state.paidHits++;
    return c.json({ article: 'the full text' });
  });
  return { url, state, stop: async () => void (await server.stop(true)) };
}
