/**
 * The agent side of an x402 purchase, for the CLI and the MCP server:
 * x402_prepare → (pre_approved / approved) x402_confirm with fresh commitments → check the message
 * BEFORE producing the share → x402_sign_complete → x402_settle.
 *
 * The check: the message must be exactly the x402 exact-scheme transfer prepare described — the
 * x402 layout only (compute budget, one transferChecked, at most a memo), this agent's wallet as
 * authority, the USDC mint this agent trusts for its network, ATA(pay_to) as destination, the
 * exact amount, the facilitator as fee payer, and the seller's memo when it asked for one. A
 * mismatch throws CustodyCheckError and nothing is signed.
 */
import type { Address } from '@solana/kit';
import { decodeSecretState } from '../frost/codec.ts';
import { commitmentList } from '../frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../frost/ids.ts';
import { commit, signShare } from '../frost/party.ts';
import { Secret } from '../frost/secret.ts';
import type { KeyPackage } from '../frost/types.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../frost/wire.ts';
import { checkX402Transfer, decodeMessage } from '../solana/decode.ts';
import { NETWORKS, type NetworkName } from '../solana/networks.ts';
import type { ApiClient } from './api.ts';
import type { ProfileData } from './profile.ts';
import { checkCeiling, checkPin, micro, recordIntent, recordPaid, type Intent, type Pins } from './custody.ts';
import { CustodyCheckError } from './errors.ts';
import { pinsOf, updatePins, type SaveProfile } from './pins.ts';
import { formatUsdc } from '../domain/money.ts';
import { parseSiwsMessage, siwsMessage, siwsProblem } from '../domain/siws.ts';
import { AgentRound } from './sign.ts';
import { isObject } from '../domain/json.ts';

/** The request to buy, as x402_prepare takes it. */
export interface X402Request {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Decimal USDC: refuse (before anything is created) when the price is higher. */
  max_amount?: string;
}

/** What prepare says about the purchase; the message is checked against it. */
export interface Prepared {
  payment_required: boolean;
  fetch_id: string | null;
  status: string | null;
  pay_to?: string;
  amount?: number;
  amount_atomic?: string;
  asset?: string;
  fee_payer?: string;
  network?: string;
  memo?: string | null;
  approval_id?: string | null;
  response?: Record<string, unknown> | null;
  [k: string]: unknown;
}

/** How the purchase ended for this run. */
export type X402Outcome = 'not_required' | 'completed' | 'signed_in' | 'awaiting_approval' | 'rejected' | 'failed' | 'pending';

export interface X402Result {
  outcome: X402Outcome;
  fetch_id: string | null;
  prepared: Prepared;
  /** x402_settle's answer when the purchase was settled. */
  settled: Record<string, any> | null;
  /** The seller's answer: the free answer, or the paid one. */
  response: Record<string, any> | null;
}

interface ConfirmAnswer {
  signed: boolean;
  message: string | null;
  sign_session_id?: string;
  server_commitments?: unknown;
  summary: { pay_to: string; amount_atomic: string; fee_payer: string; asset: string };
}

/** The USDC mint this agent trusts: the one pinned at registration (a profile without pins: its known network's). */
function trustedMint(profile: ProfileData): string {
  const mint = profile.custody?.mint ?? NETWORKS[profile.network as NetworkName]?.defaultUsdcMint;
  if (!mint) throw new CustodyCheckError('refusing to sign: this profile has no pinned USDC mint');
  return mint;
}

/** Refuses (CustodyCheckError) unless `messageB64` is exactly the purchase prepare described. */
export async function checkX402Message(profile: ProfileData, prepared: Prepared, messageB64: string): Promise<void> {
  const mint = trustedMint(profile);
  if (prepared.asset !== mint) throw new CustodyCheckError(`refusing to sign: the purchase pays in ${String(prepared.asset)}, not the USDC mint ${mint}`, { details: { pinned: mint, offered: prepared.asset } });
  if (!prepared.pay_to || !prepared.fee_payer || !prepared.amount_atomic || !/^[0-9]+$/.test(prepared.amount_atomic)) {
    throw new CustodyCheckError('refusing to sign: prepare did not describe the payment (pay_to, amount, fee payer)');
  }
  const bytes = new Uint8Array(Buffer.from(messageB64, 'base64'));
  const result = await checkX402Transfer(bytes, {
    wallet: profile.address as Address,
    mint: mint as Address,
    payTo: prepared.pay_to as Address,
    amount: BigInt(prepared.amount_atomic),
    feePayer: prepared.fee_payer as Address,
  });
  if (!result.ok) throw new CustodyCheckError(`refusing to sign: ${result.reason}`);
  if (prepared.memo) {
    const memo = decodeMessage(bytes).instructions[3];
    if (memo?.kind !== 'memo' || memo.text !== prepared.memo) throw new CustodyCheckError('refusing to sign: the message does not carry the memo the seller asked for');
  }
}

/**
 * What the agent asked of a purchase: its ceiling, and the seller's host whose payTo is pinned;
 * for a purchase resumed later, also the payTo and price prepare described when the agent asked.
 */
export interface X402Expectation {
  host?: string;
  maxAmount?: bigint;
  acceptNewAddress?: boolean;
  payTo?: string;
  amount?: bigint;
}

/** Holds the price to the agent's ceiling and payTo to the host's pin; a resumed purchase, to the payTo and price recorded at fetch. */
export function checkPurchase(pins: Pins, prepared: Prepared, expect: X402Expectation): void {
  if (!prepared.amount_atomic || !/^[0-9]+$/.test(prepared.amount_atomic) || !prepared.pay_to) {
    throw new CustodyCheckError('refusing to sign: prepare did not describe the payment (pay_to, amount, fee payer)');
  }
  const offered = BigInt(prepared.amount_atomic);
  checkCeiling(pins, offered, expect.maxAmount, `the x402 price${expect.host ? ` of ${expect.host}` : ''}`);
  if (expect.host) checkPin(pins.x402_hosts[expect.host], expect.host, prepared.pay_to, expect.acceptNewAddress === true);
  // A resumed purchase: the server's description now must be the one the agent checked at fetch.
  if ((expect.payTo !== undefined && prepared.pay_to !== expect.payTo) || (expect.amount !== undefined && offered !== expect.amount)) {
    throw new CustodyCheckError(`refusing to sign: the server now describes this purchase as ${formatUsdc(offered)} USDC to ${prepared.pay_to}; when you fetched it, it was ${formatUsdc(expect.amount ?? offered)} USDC to ${expect.payTo ?? prepared.pay_to}`, {
      howToFix: 'Do not retry: a server that changes a purchase after you fetched it may be compromised. Report it to the operator; fetch the URL again for a new purchase.',
      details: { recorded_pay_to: expect.payTo, offered_pay_to: prepared.pay_to, recorded_amount: expect.amount !== undefined ? formatUsdc(expect.amount) : undefined, offered_amount: formatUsdc(offered) },
    });
  }
}

function x402ExpectationOf(intent: Intent): X402Expectation {
  return {
    ...(intent.host ? { host: intent.host } : {}),
    ...(intent.max_amount ? { maxAmount: micro(intent.max_amount) } : {}),
    ...(intent.accept_new_address ? { acceptNewAddress: true } : {}),
    ...(intent.to_address ? { payTo: intent.to_address } : {}),
    ...(intent.amount ? { amount: micro(intent.amount) } : {}),
  };
}

/** What to record for a purchase the agent fetched: its host, ceiling, and the payTo and price prepare described (and the checks passed). */
export function purchaseIntent(agent: X402Expectation, prepared: Prepared, pins: Pins): Intent {
  return {
    host: agent.host,
    max_amount: formatUsdc(agent.maxAmount ?? micro(pins.max_amount)),
    ...(agent.acceptNewAddress ? { accept_new_address: true } : {}),
    to_address: prepared.pay_to,
    amount: formatUsdc(BigInt(prepared.amount_atomic!)),
  };
}

export interface X402Options {
  idempotencyKey?: string;
  progress?: (step: string) => void;
  /** The agent accepts a new payTo for the host (moves the pin). */
  acceptNewAddress?: boolean;
  /** Writes the profile after its pins changed. */
  save?: SaveProfile;
}

/**
 * Pays a purchase: signs it (signPurchase), then x402_settle sends the paid request. Returns
 * x402_settle's answer; its errors (a pending outcome) propagate as ApiError.
 */
export async function payPurchase(
  api: ApiClient,
  profile: ProfileData,
  fetchId: string,
  expect: Prepared | null,
  progress: (step: string) => void = () => {},
  opts: { agent?: X402Expectation; save?: SaveProfile } = {},
): Promise<Record<string, any>> {
  await signPurchase(api, profile, fetchId, expect, progress, opts);
  progress('sending the paid request');
  return api.call<Record<string, any>>('bot', 'x402_settle', { fetch_id: fetchId });
}

/**
 * Signs a purchase unless signed already: x402_confirm with fresh commitments, check the message
 * against `expect` (what prepare said; for a resumed purchase, the summary x402_confirm returns
 * before anything is signed), share, x402_sign_complete.
 */
export async function signPurchase(
  api: ApiClient,
  profile: ProfileData,
  fetchId: string,
  expect: Prepared | null,
  progress: (step: string) => void = () => {},
  opts: { agent?: X402Expectation; save?: SaveProfile } = {},
): Promise<void> {
  const pins = await pinsOf(api, profile, opts.save);
  const recorded = pins.intents[fetchId];
  const agent = opts.agent ?? (recorded ? x402ExpectationOf(recorded) : {});
  const key = new Secret(decodeSecretState(Buffer.from(profile.key_package, 'base64')) as KeyPackage);
  const { nonces, commitments } = commit(key);
  const confirmed = await api.call<ConfirmAnswer>('bot', 'x402_confirm', { fetch_id: fetchId, commitments: encodeCommitments(commitments) });
  if (!confirmed.signed) {
    if (!confirmed.message || !confirmed.sign_session_id) throw new CustodyCheckError('the server did not return a message to sign');
    // Resumed (nothing described it in this run): only what this profile recorded at fetch holds the server's description.
    if (!expect && !opts.agent && !recorded) {
      throw new CustodyCheckError(`refusing to sign: this profile has no record of purchase ${fetchId}, so nothing holds the server to a seller and a price`, {
        howToFix: 'Resume it with the profile that fetched it, or fetch the URL again for a new purchase.',
        details: { fetch_id: fetchId },
      });
    }
    const described = expect ?? { payment_required: true, fetch_id: fetchId, status: null, ...confirmed.summary };
    checkPurchase(pins, described, agent);
    await checkX402Message(profile, described, confirmed.message);
    progress('signing the payment (FROST round with the server)');
    const list = commitmentList(commitments, decodeCommitments(confirmed.server_commitments, SERVER_ID));
    const share = signShare(key, nonces, list, new Uint8Array(Buffer.from(confirmed.message, 'base64')));
    await api.call('bot', 'x402_sign_complete', { fetch_id: fetchId, sign_session_id: confirmed.sign_session_id, signature_share: encodeSignatureShare(AGENT_ID, share) });
    updatePins(profile, opts.save, (p) => {
      if (agent.host) recordPaid(p.x402_hosts, agent.host, String(described.pay_to), 'host', new Date());
      delete p.intents[fetchId];
    });
  }
}

function settledResult(fetchId: string, prepared: Prepared, settled: Record<string, any>): X402Result {
  const outcome: X402Outcome = settled.purchase_status === 'completed' ? 'completed' : settled.purchase_status === 'failed' ? 'failed' : 'pending';
  return { outcome, fetch_id: fetchId, prepared, settled, response: settled.response ?? null };
}

/** The whole purchase: prepare, then (when the rails allow it now) pay and settle. */
export async function x402Fetch(
  api: ApiClient,
  profile: ProfileData,
  req: X402Request,
  opts: X402Options = {},
): Promise<X402Result> {
  const progress = opts.progress ?? (() => {});
  const pins = await pinsOf(api, profile, opts.save);
  const agent: X402Expectation = {
    host: hostOf(req.url),
    ...(req.max_amount !== undefined ? { maxAmount: micro(req.max_amount) } : {}),
    ...(opts.acceptNewAddress ? { acceptNewAddress: true } : {}),
  };
  progress(`probing ${req.url}`);
  const prepared = await api.call<Prepared>('bot', 'x402_prepare', { ...req }, { idempotencyKey: opts.idempotencyKey });
  if (prepared.payment_required && isObject(prepared.sign_in)) return signIn(api, profile, req, prepared, prepared.sign_in, progress);
  if (!prepared.payment_required || !prepared.fetch_id) return { outcome: 'not_required', fetch_id: null, prepared, settled: null, response: (prepared.response as Record<string, any>) ?? null };
  progress(`payment required: ${prepared.amount} USDC to ${prepared.pay_to} (${prepared.status})`);
  if (prepared.status === 'awaiting_approval' || prepared.status === 'pre_approved' || prepared.status === 'approved') {
    // Refused now, before the owner is asked to approve a purchase this client would not sign.
    checkPurchase(pins, prepared, agent);
    // Kept until signed: a resume (after the owner's approval, or after this run died before signing)
    // holds the server to this host, ceiling, payTo and price.
    const fetchId = prepared.fetch_id;
    updatePins(profile, opts.save, (p) => {
      recordIntent(p, fetchId, purchaseIntent(agent, prepared, pins), new Date());
    });
  }
  if (prepared.status === 'awaiting_approval') return { outcome: 'awaiting_approval', fetch_id: prepared.fetch_id, prepared, settled: null, response: null };
  if (prepared.status !== 'pre_approved' && prepared.status !== 'approved' && prepared.status !== 'pending' && prepared.status !== 'completed') {
    return { outcome: prepared.status === 'rejected' ? 'rejected' : 'failed', fetch_id: prepared.fetch_id, prepared, settled: null, response: null };
  }
  return settledResult(prepared.fetch_id, prepared, await payPurchase(api, profile, prepared.fetch_id, prepared, progress, { agent, save: opts.save }));
}

/**
 * Signs in instead of paying (the seller's sign-in-with-x, for a URL this wallet bought): the
 * text the daemon hands over is checked against this request, this wallet and its chain — the
 * host fetched, a nonce, issued now, valid at most 10 minutes, bytes that are not a Solana
 * transaction — before the share, and the share is over exactly the text checked.
 */
async function signIn(api: ApiClient, profile: ProfileData, req: X402Request, prepared: Prepared, offer: Record<string, any>, progress: (step: string) => void): Promise<X402Result> {
  const caip2 = NETWORKS[profile.network as NetworkName]?.caip2;
  if (!caip2) throw new CustodyCheckError("refusing to sign in: this profile's network has no chain id");
  const check = (text: unknown): string => {
    const fields = typeof text === 'string' ? parseSiwsMessage(text) : null;
    if (!fields) throw new CustodyCheckError('refusing to sign in: the message is not a Sign-In With Solana text');
    const problem = siwsProblem(fields, { url: req.url, address: profile.address, chainId: caip2, now: new Date() });
    if (problem) throw new CustodyCheckError(`refusing to sign in: ${problem}`, { details: { message: text } });
    if (siwsMessage(fields) !== text) throw new CustodyCheckError('refusing to sign in: the message is not exactly the sign-in its fields make');
    return text as string;
  };
  check(offer.message);
  progress(`signing in to ${String(offer.host)}: bought before, nothing is paid`);
  const round = new AgentRound(profile);
  const opened = await api.call<Record<string, any>>('bot', 'x402_sign_in', { sign_in_id: offer.sign_in_id, commitments: round.commitments });
  const message = check(opened.message);
  const share = round.share(opened.server_commitments, new TextEncoder().encode(message));
  const done = await api.call<Record<string, any>>('bot', 'x402_sign_in_complete', { sign_in_id: offer.sign_in_id, signature_share: share });
  return { outcome: done.status === 'completed' ? 'signed_in' : 'failed', fetch_id: null, prepared, settled: done, response: done.response ?? null };
}

/** The seller's host, the key its payTo is pinned under. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    // x402_prepare refuses a malformed URL with its own error.
    return undefined;
  }
}

/** Resumes a purchase (after the owner approved it, or to read a pending outcome): confirm, check, sign, settle. */
export async function x402Resume(api: ApiClient, profile: ProfileData, fetchId: string, progress: (step: string) => void = () => {}, save?: SaveProfile): Promise<X402Result> {
  const settled = await payPurchase(api, profile, fetchId, null, progress, { save });
  return settledResult(fetchId, settled as Prepared, settled);
}
