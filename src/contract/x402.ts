/**
 * Contract of x402 purchases and the public catalog (SPEC "Bot actions, x402", public
 * x402_catalog; DESIGN §8). A purchase: x402_prepare (probe + intent) → x402_confirm (message and
 * server commitments) → x402_sign_complete (agent share) → x402_settle (the paid request).
 */
import { Type as T } from '@sinclair/typebox';
import { Amount, Id, Params } from './common.ts';
import { action } from './action.ts';
import { Commitments } from './wallet.ts';

const FetchId = Id('x402', 'fetch_id from x402_prepare');

export const X402 = {
  x402_prepare: action({
    endpoint: 'bot',
    auth: 'bot',
    idempotent: true,
    destructive: true,
    params: Params({
      url: T.String({ minLength: 1, maxLength: 2048, description: 'the http(s) URL of the paid API' }),
      method: T.Optional(T.String({ pattern: '^[A-Za-z]{1,16}$', description: 'HTTP method; default GET (POST when a body is given)' })),
      headers: T.Optional(T.Record(T.String({ maxLength: 64 }), T.String({ maxLength: 4096 }), { description: 'request headers for the seller (at most 30)' })),
      body: T.Optional(T.String({ maxLength: 32 * 1024, description: 'request body (text)' })),
      max_amount: T.Optional(Amount),
      sign_in: T.Optional(T.Boolean({ description: 'false: pay even when the seller offers a sign-in for a resource this wallet bought; default true' })),
    }),
    summary:
      'Probes a URL; a 402 answer is parsed, the Solana exact USDC option is chosen and a payment intent is created under the guard rails (fetch_id, status pre_approved, awaiting_approval or rejected). When the seller offers a sign-in (sign-in-with-x) and this wallet bought this URL before, answers sign_in instead: nothing is paid. A non-402 answer is returned as is. Honours X-Idempotency-Key.',
  }),
  x402_prepare_tool: action({
    endpoint: 'bot',
    auth: 'bot',
    idempotent: true,
    // A retried call carries the tool's fresh challenge (a new blockhash hint, say): the same call, the same purchase.
    idempotencyIgnores: ['payment_required'],
    destructive: true,
    params: Params({
      server: T.String({ minLength: 1, maxLength: 2048, description: "the paid MCP server: its URL, or the name the agent's MCP client knows it by (the guard rails' host)" }),
      tool: T.String({ minLength: 1, maxLength: 128, description: 'the tool called' }),
      payment_required: T.Record(T.String({ maxLength: 64 }), T.Unknown(), { description: "the x402 v2 PaymentRequired the tool answered (its structuredContent)" }),
      max_amount: T.Optional(Amount),
    }),
    summary:
      "A paid MCP tool's PaymentRequired made a purchase under the guard rails, as x402_prepare makes one from a 402 (fetch_id, status). The agent's MCP client then signs it (x402_confirm, x402_sign_complete), takes the payment (x402_payment), calls the tool with it and reports the answer (x402_receipt).",
  }),
  x402_payment: action({
    endpoint: 'bot',
    auth: 'bot',
    destructive: true,
    params: Params({ fetch_id: FetchId }),
    summary: 'The signed payment of a tool purchase, as the PaymentPayload for _meta["x402/payment"]; the same bytes every time. The purchase is pending from then on: do not pay again.',
  }),
  x402_receipt: action({
    endpoint: 'bot',
    auth: 'bot',
    destructive: true,
    params: Params({
      fetch_id: FetchId,
      payment_response: T.Optional(T.Unknown({ description: 'the tool result\'s _meta["x402/payment-response"]' })),
      result: T.Optional(T.Unknown({ description: 'the tool result, kept with the purchase' })),
    }),
    summary: "Records what a paid tool answered: a receipt naming our own transfer on chain completes the purchase; otherwise it stays pending and the chain decides.",
  }),
  x402_sign_in: action({
    endpoint: 'bot',
    auth: 'bot',
    destructive: true,
    params: Params({ sign_in_id: Id('x402SignIn', 'sign_in.sign_in_id from x402_prepare'), commitments: Commitments }),
    summary: 'Opens the signing round of a sign-in (no payment): returns the SIWS message and the server commitments.',
  }),
  x402_sign_in_complete: action({
    endpoint: 'bot',
    auth: 'bot',
    destructive: true,
    params: Params({
      sign_in_id: Id('x402SignIn', 'sign_in.sign_in_id from x402_prepare'),
      signature_share: T.Object({ identifier: T.String({ pattern: '^[0-9a-f]{64}$' }), share: T.String({ pattern: '^[0-9a-f]{64}$' }) }, { additionalProperties: false }),
    }),
    summary: "Takes the agent's share of the sign-in, signs it with the server's and repeats the request with SIGN-IN-WITH-X: the seller's answer, nothing paid.",
  }),
  x402_confirm: action({
    endpoint: 'bot',
    auth: 'bot',
    params: Params({ fetch_id: FetchId, commitments: Commitments }),
    summary: 'Builds the x402 payment message (fee payer: the seller’s facilitator) and starts signing: returns the message, a summary to check and the server commitments.',
  }),
  x402_sign_complete: action({
    endpoint: 'bot',
    auth: 'bot',
    destructive: true,
    params: Params({
      fetch_id: FetchId,
      sign_session_id: T.Optional(Id('signSession')),
      signature_share: T.Object({ identifier: T.String({ pattern: '^[0-9a-f]{64}$' }), share: T.String({ pattern: '^[0-9a-f]{64}$' }) }, { additionalProperties: false }),
    }),
    summary: 'Takes the agent signature share; the server aggregates and stores the partially signed payment (the facilitator signs as fee payer).',
  }),
  x402_settle: action({
    endpoint: 'bot',
    auth: 'bot',
    destructive: true,
    params: Params({ fetch_id: FetchId }),
    summary:
      'Repeats the request with the payment header and returns the seller’s status, headers, body and payment receipt. Repeating it returns the stored outcome; a pending outcome (a timeout after sending, or the seller’s settlement_pending) is looked up on chain — never pay twice.',
  }),
  x402_status: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: Params({ fetch_id: FetchId }),
    summary:
      'A purchase as it stands, sending nothing: its status (open, signed, settling, pending, completed, failed), its transaction and the stored answer. pending: the paid request was sent and the settlement is not on chain yet — do not pay again; the daemon resolves it from the chain.',
  }),
  x402_catalog: action({
    endpoint: 'public',
    auth: 'none',
    readOnly: true,
    params: Params({
      query: T.Optional(T.String({ maxLength: 100, description: 'words to find in name, description, URL or tags' })),
      tag: T.Optional(T.String({ maxLength: 32 })),
    }),
    summary: 'The curated catalog of verified Solana x402 paid APIs: URL, name, description, tags, price in USDC, network, pay_to.',
  }),
};
