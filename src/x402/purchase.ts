/**
 * x402 purchases (DESIGN §8), server side:
 *
 *   prepare  — probe the URL through the outbound client; a 402 is parsed, the Solana `exact`
 *              USDC option of our network is chosen and checked, and the intent is created under
 *              the guard rails (category x402, the URL's host) with the purchase row, in one
 *              ledger transaction.
 *   confirm  — build the exact SVM message (compute unit limit, compute unit price, transferChecked
 *              to ATA(payTo), memo), fee payer = the facilitator (`extra.feePayer`), and start the
 *              FROST signing session.
 *   sign     — the agent's share → the partially signed transaction (the facilitator signs last).
 *   settle   — repeat the original request with PAYMENT-SIGNATURE (v2) / X-PAYMENT (v1) and record
 *              the outcome. A timeout or connection loss after sending, or a seller's
 *              `settlement_pending`, is `pending`, never `failed`: the agent must not pay twice.
 *              Pending outcomes are resolved from the chain.
 *
 * Money invariants: the message is signed at most once (coordinator-sign refuses a second
 * signing); the message carries our own blockhash, never one the seller suggests; a landed
 * transaction is this purchase's only when it carries the wallet's signature of this message (a
 * seller's receipt is never taken at its word); a transaction is released (failed) only when our
 * own view of the chain, its height read before the look, shows no transfer AND the blockhash
 * expired, so the signed bytes can no longer land. The outcome sweep (resolvePendingPurchases)
 * also ends signed purchases nobody settled, and looks again at recent releases.
 */
import { getBase58Decoder, getTransactionDecoder, type Address } from '@solana/kit';
import { AppError, invalid } from '../errors.ts';
import type { ActionContext } from '../action-context.ts';
import type { Config } from '../config.ts';
import { newId } from '../contract/ids.ts';
import { getApproval, insertApproval } from '../db/approvals.ts';
import { appendEvent } from '../db/events.ts';
import { findPayeeByAddress } from '../db/directory.ts';
import { getTx, isOwnOutgoing, moveTx, setTxMessage, type TxRow } from '../db/transactions.ts';
import { getWallet, type WalletRow } from '../db/wallets.ts';
import {
  anyUnsettledPurchase,
  completeX402Tx,
  getPurchaseById,
  insertPurchase,
  movePurchase,
  unresolvedPurchases,
  type PurchaseRow,
} from '../db/x402.ts';
import { formatUsdc, toUsdcNumber } from '../domain/money.ts';
import { open, seal } from '../frost/seal.ts';
import { completeSigning, startSigning } from '../frost/coordinator-sign.ts';
import { queueApprovalMail } from '../mail/approval-mail.ts';
import { createIntent, quote } from '../payments/intent.ts';
import { applyRecheck, refuseUnlessRailsAllow } from '../payments/recheck.ts';
import { forgetBalance } from '../payments/balance-cache.ts';
import { recordIncoming } from '../payments/settle.ts';
import { markWatchedMoved } from '../db/watch.ts';
import type { Services } from '../services.ts';
import { usdcAta } from '../solana/ata.ts';
import { ChainUnavailableError } from '../solana/errors.ts';
import { signaturesSince } from '../solana/history.ts';
import { NETWORKS, type NetworkName } from '../solana/networks.ts';
import { buildX402Transfer } from '../solana/transfer.ts';
import {
  OutboundError,
  outboundFailure,
  outboundFor,
  PAID_MAX_BYTES,
  PROBE_MAX_BYTES,
  sendUpstream,
  upstreamRequest,
  upstreamView,
  type UpstreamRequest,
  type UpstreamView,
} from './http.ts';
import { mppChargeOf, mppCredential, parseMppCharge, parseMppReceipt } from './mpp.ts';
import { openSignIn, signInView } from './sign-in.ts';
import { chooseOption, parsePaymentRequired, parsePaymentResponse, paymentHeader, paymentIdentifierExtension, paymentPayloadV2, paymentRequiredFrom, readOption, readPaymentResponse, type ChosenOption, type PayableTarget, type PaymentRequired, type PaymentResponse } from './wire.ts';
import { isObject } from '../domain/json.ts';

/** A message is reused only while at least this many blocks of its blockhash remain. */
const BLOCKHASH_MARGIN = 20n;
/** How long settle waits for the seller's receipt signature to show on chain. */
const RECEIPT_WAIT_MS = 5000;
/** A facilitator's non-terminal answer: the transaction was sent, its outcome is not known yet (`@x402/core` ≥ 2.24). */
const SETTLEMENT_PENDING = 'settlement_pending';

/** What this service can pay with x402: the exact scheme, its network's ids, its USDC mint. */
export function payableTarget(config: Pick<Config, 'solana' | 'usdcMint'>): PayableTarget {
  const info = NETWORKS[config.solana.network as NetworkName];
  return { caip2: info.caip2, v1Network: info.x402V1, mint: config.usdcMint };
}

/** The host rails are checked against: lower case, no IPv6 brackets, no trailing dot. */
export function hostOf(url: string): string {
  return new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

// ---------------------------------------------------------------------------------------------
// Probing

/** What a probe found. */
export type ProbeResult =
  | { paymentRequired: false; response: UpstreamView }
  | { paymentRequired: true; required: PaymentRequired; option: ChosenOption; response: UpstreamView };

/**
 * Sends `req` (capped at 64 KiB) and, for a 402, picks the option this service can pay. Throws
 * VALIDATION_ERROR naming what was offered when nothing is payable here, and the outbound errors
 * of `outboundFailure`.
 */
export async function probe(config: Pick<Config, 'outbound' | 'solana' | 'usdcMint'>, req: UpstreamRequest): Promise<ProbeResult> {
  let res;
  try {
    res = await sendUpstream(outboundFor(config), req, PROBE_MAX_BYTES);
  } catch (err) {
    if (err instanceof OutboundError) throw outboundFailure(err, config, `probing ${hostOf(req.url)} failed`);
    throw err;
  }
  const response = upstreamView(res);
  if (res.status !== 402) return { paymentRequired: false, response };
  // x402 (v2 header, v1 body) first; else an MPP charge (WWW-Authenticate: Payment), paid on the same path.
  const mpp = parsePaymentRequired(res.headers, res.body) ? null : parseMppCharge(res.headers, { network: config.solana.network as NetworkName, ...payableTarget(config) }, new Date());
  if (mpp && 'refused' in mpp) {
    throw new AppError('VALIDATION_ERROR', `/url: the seller's MPP charge cannot be paid by this wallet: ${mpp.refused}`, {
      howToFix: `This wallet pays MPP method solana, intent charge, in USDC (${config.usdcMint}) with the seller paying the fee; nothing was created. Choose a seller that accepts it.`,
      details: { field: '/url' },
    });
  }
  const required = parsePaymentRequired(res.headers, res.body) ?? mpp;
  if (!required) {
    throw invalid(
      '/url',
      'answered 402 Payment Required without payment requirements (no x402 PAYMENT-REQUIRED header or x402Version 1 body, no MPP WWW-Authenticate: Payment)',
      'This URL speaks neither x402 nor MPP; nothing was paid.',
    );
  }
  const chosen = chooseOption(required, payableTarget(config));
  if (!chosen.ok) {
    const network = payableTarget(config).caip2 ?? config.solana.network;
    throw new AppError('VALIDATION_ERROR', `/url: the seller offers nothing this wallet can pay: ${chosen.reason}`, {
      howToFix: `This wallet pays x402 "exact" in USDC (${config.usdcMint}) on ${network}; nothing was created. Choose a seller that accepts it.`,
      details: { field: '/url', offered: required.options.map((o) => ({ scheme: o.scheme, network: o.network, asset: o.asset, amount: o.amount })) },
    });
  }
  return { paymentRequired: true, required, option: chosen.option, response };
}

// ---------------------------------------------------------------------------------------------
// Views

const iso = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

function resourceDescription(p: PurchaseRow): string | null {
  try {
    const req = JSON.parse(p.requirements) as { resource?: { description?: unknown } };
    const accepted = JSON.parse(p.accepted) as { description?: unknown };
    const d = req.resource?.description ?? accepted.description;
    return typeof d === 'string' && d !== '' ? d.slice(0, 500) : null;
  } catch {
    return null;
  }
}

function sellerMemo(p: PurchaseRow): string | null {
  const extra = (JSON.parse(p.accepted) as { extra?: { memo?: unknown } }).extra;
  return typeof extra?.memo === 'string' && extra.memo !== '' ? extra.memo : null;
}

function nextStep(p: PurchaseRow, tx: TxRow): string | null {
  if (p.status === 'pending' || p.status === 'settling') return `pending, do not pay again: the paid request was sent; x402_status (fetch_id ${p.fetch_id}) shows the outcome once the chain does, x402_settle looks it up now`;
  if (p.status === 'signed' || (p.status === 'open' && tx.signed_tx)) return `send the paid request with x402_settle (fetch_id ${p.fetch_id})`;
  if (p.status !== 'open') return null;
  switch (tx.status) {
    case 'pre_approved':
    case 'approved':
      return `pay with x402_confirm (fetch_id ${p.fetch_id}) and your signing commitments, check the message, then x402_sign_complete and x402_settle; the agent-wallet client does all of this`;
    case 'awaiting_approval':
      return `wait for owner approval: poll approval_status with approval_id ${tx.approval_id} and wait_seconds, then x402_confirm (fetch_id ${p.fetch_id})`;
    default:
      return null;
  }
}

/** A purchase as the agent sees it; `status` is the payment's status, `purchase_status` the request's. */
export function purchaseView(p: PurchaseRow, tx: TxRow) {
  return {
    fetch_id: p.fetch_id,
    transaction_id: p.transaction_id,
    status: tx.status,
    purchase_status: p.status,
    protocol: mppChargeOf(JSON.parse(p.requirements) as Record<string, unknown>) ? 'mpp' : 'x402',
    url: p.url,
    method: p.method,
    host: p.host,
    description: resourceDescription(p),
    x402_version: Number(p.x402_version),
    network: p.network,
    asset: p.asset,
    pay_to: p.pay_to,
    fee_payer: p.fee_payer,
    amount: toUsdcNumber(p.amount),
    amount_atomic: p.amount.toString(),
    memo: sellerMemo(p),
    approval_id: tx.approval_id,
    decision: tx.decision_rule || tx.decision_reason ? { rule: tx.decision_rule, reason: tx.decision_reason } : null,
    signature: p.signature ?? tx.signature,
    error: p.error ?? tx.error,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
    expires_at: iso(tx.expires_at),
    next_step: nextStep(p, tx),
  };
}

/** x402_status: the purchase and its stored answer as they stand; nothing is sent or looked up. */
export async function purchaseStatus(services: Services, p: PurchaseRow) {
  return storedOutcome(p, (await getTx(services.db, p.transaction_id))!, false);
}

/** The stored paid answer as the agent sees it again. */
interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body_base64: string;
  truncated: boolean;
  payment_response: PaymentResponse | null;
}

function storedOutcome(p: PurchaseRow, tx: TxRow, replayed: boolean) {
  const stored = p.response ? (JSON.parse(p.response) as StoredResponse) : null;
  const response = stored
    ? upstreamView({ status: stored.status, headers: new Headers(stored.headers), body: new Uint8Array(Buffer.from(stored.body_base64, 'base64')), truncated: stored.truncated })
    : null;
  return { ...purchaseView(p, tx), replayed, response, payment_response: stored?.payment_response ?? null };
}

// ---------------------------------------------------------------------------------------------
// prepare

const requestAad = (fetchId: string) => `x402-request:${fetchId}`;

export interface PrepareParams {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Micro-USDC, already parsed. */
  maxAmount?: bigint;
  /** false: pay even when a sign-in is offered for a resource this wallet bought. */
  signIn?: boolean;
}

/** x402_prepare. A non-402 answer is returned as is; a 402 becomes a purchase and its intent. */
export async function prepare(ctx: ActionContext, wallet: WalletRow, p: PrepareParams) {
  const { services } = ctx;
  const { config } = services;
  const req = upstreamRequest(p);
  const probed = await probe(config, req);
  if (!probed.paymentRequired) {
    return { payment_required: false, fetch_id: null, url: req.url, status: null, response: probed.response, next_step: null };
  }
  const { option, required } = probed;
  // Bought before, and the seller offers a sign-in this wallet may sign: prove it instead of paying.
  let signInDeclined: string | null = null;
  if (p.signIn !== false) {
    const signIn = await services.db
      .transaction(async () => {
        const opened = await openSignIn(ctx, wallet, req, hostOf(req.url), required, payableTarget(config).caip2);
        if (opened && 'row' in opened) {
          const view = { payment_required: true, fetch_id: null, url: req.url, status: null, sign_in: signInView(opened.row), response: null };
          await ctx.idempotency?.record(view);
          return view;
        }
        signInDeclined = opened?.declined ?? null;
        return null;
      });
    if (signIn) return signIn;
  }
  return createPurchase(ctx, wallet, { req, host: hostOf(req.url), required, option, maxAmount: p.maxAmount, signInDeclined });
}

/**
 * The purchase of a payable option (from a probed 402, or a paid MCP tool's PaymentRequired): the
 * price checked against the service maximum and `maxAmount`, the fee payer and payee against this
 * wallet and service, the payee's token account on chain, then the intent under the guard rails
 * (host = `host`) with the purchase row, in one ledger transaction.
 */
async function createPurchase(
  ctx: ActionContext,
  wallet: WalletRow,
  a: { req: UpstreamRequest; host: string; required: PaymentRequired; option: ChosenOption; maxAmount?: bigint; signInDeclined?: string | null },
) {
  const { services } = ctx;
  const { config } = services;
  const { req, host, required, option, signInDeclined } = a;
  const p = { maxAmount: a.maxAmount };
  const amount = option.amountAtomic;
  const price = `${formatUsdc(amount)} USDC`;
  if (amount > config.money.maxAmount) throw invalid('/url', `the price ${price} is above the service maximum of ${formatUsdc(config.money.maxAmount)} USDC (limits.max_amount)`);
  if (p.maxAmount !== undefined && amount > p.maxAmount) {
    throw new AppError('VALIDATION_ERROR', `/max_amount: the price ${price} is above max_amount ${formatUsdc(p.maxAmount)} USDC; nothing was created.`, {
      howToFix: 'Raise max_amount if the price is acceptable.',
      details: { field: '/max_amount', price: toUsdcNumber(amount), max_amount: toUsdcNumber(p.maxAmount) },
    });
  }
  if (option.feePayer === wallet.address) throw invalid('/url', "the seller's extra.feePayer is this wallet; the facilitator must pay the fee");
  // Our own fee payer pays only for our own facilitator's sales: to a merchant or a wallet registered here.
  if (option.feePayer === services.feePayer.address && !(await findPayeeByAddress(services.db, option.payTo))) {
    throw invalid('/url', "the seller's extra.feePayer is this service's own fee payer, but its payTo is no merchant or wallet registered here; refusing to pay fees for another facilitator");
  }
  if (option.payTo === wallet.address) throw invalid('/url', 'the seller asks to be paid by this wallet to itself');
  const mint = config.usdcMint as Address;
  const [q, payToReady] = await Promise.all([
    quote(services, wallet.address as Address, option.payTo as Address, amount, 'x402'),
    services.chain.tokenAccountExists(option.payTo as Address, mint),
  ]);
  if (!payToReady) throw noTokenAccount(option.payTo);
  const fetchId = newId('x402');
  const now = services.now().getTime();
  return await services.db
    .transaction(async () => {
      const tx = await createIntent(services, {
        wallet,
        type: 'x402',
        category: 'x402',
        recipient: { label: host, address: option.payTo as Address },
        quote: q,
        note: `x402 ${req.method} ${req.url}`.slice(0, 500),
        host,
        hostNamedByAgent: req.method === MCP_METHOD,
        idempotencyKey: ctx.idempotency?.key,
      });
      await insertPurchase(services.db, {
        fetch_id: fetchId,
        transaction_id: tx.transaction_id,
        wallet_id: wallet.wallet_id,
        url: req.url,
        host,
        method: req.method,
        request_sealed: seal(services.masterKey, new TextEncoder().encode(JSON.stringify(req)), requestAad(fetchId)),
        x402_version: required.version,
        requirements: JSON.stringify(required.raw),
        accepted: JSON.stringify(option.raw),
        network: option.network,
        asset: option.asset,
        pay_to: option.payTo,
        fee_payer: option.feePayer,
        amount,
        now,
      });
      const view = { payment_required: true, ...purchaseView((await getPurchaseById(services.db, fetchId))!, tx), ...(signInDeclined ? { sign_in_declined: signInDeclined } : {}), response: null };
      await ctx.idempotency?.record(view);
      return view;
    });
}

function noTokenAccount(payTo: string): AppError {
  return new AppError('INVALID_RECIPIENT', `The seller's pay_to ${payTo} has no USDC token account; an x402 payment cannot create one.`, {
    howToFix: 'Nothing was signed. Ask the seller to create its USDC token account, or choose another seller.',
    details: { pay_to: payTo },
  });
}

function assertPayable(p: PurchaseRow, tx: TxRow): void {
  switch (tx.status) {
    case 'pre_approved':
    case 'approved':
      return;
    case 'awaiting_approval':
      throw new AppError('AWAITING_APPROVAL', 'The owner has not approved this purchase yet.', {
        howToFix: `Wait for the owner: poll approval_status with approval_id ${tx.approval_id} and wait_seconds.`,
        details: { approval_id: tx.approval_id, fetch_id: p.fetch_id },
      });
    case 'completed':
      throw new AppError('ALREADY_COMPLETED', 'This purchase was already paid.', { howToFix: `Read its outcome with x402_settle (fetch_id ${p.fetch_id}).`, details: { signature: tx.signature } });
    case 'expired':
      throw new AppError('TRANSACTION_EXPIRED', 'This purchase was not confirmed within 48 hours and expired.', { howToFix: 'Prepare the purchase again.' });
    default:
      throw new AppError('INVALID_STATUS', `The purchase's payment is ${tx.status} and cannot be paid.`, { howToFix: 'Prepare the purchase again.', details: { decision: tx.decision_reason } });
  }
}

// ---------------------------------------------------------------------------------------------
// confirm

/** The stored option, checked again as when it was chosen. */
function accepted(p: PurchaseRow): ChosenOption {
  const version = Number(p.x402_version) as 1 | 2;
  const option = readOption(JSON.parse(p.accepted), version);
  const chosen = option
    ? chooseOption({ version, resource: undefined, error: null, options: [option], raw: {} }, { caip2: version === 2 ? p.network : null, v1Network: version === 1 ? p.network : null, mint: p.asset })
    : null;
  if (!chosen?.ok) throw new AppError('INTERNAL_ERROR', 'The stored x402 option is unreadable.');
  return chosen.option;
}

/** The transaction with a current x402 message, built when there is none or its blockhash is about to expire. */
async function ensureMessage(services: Services, wallet: WalletRow, p: PurchaseRow, tx: TxRow): Promise<TxRow> {
  const height = await services.chain.getBlockHeight();
  if (tx.message && tx.last_valid_block_height !== null && height + BLOCKHASH_MARGIN <= tx.last_valid_block_height) return tx;
  const option = accepted(p);
  const mint = services.config.usdcMint as Address;
  if (!(await services.chain.tokenAccountExists(option.payTo as Address, mint))) throw noTokenAccount(option.payTo);
  // Our own blockhash, never one the seller suggests: its expiry height decides when an absent
  // payment is released, so it must be the chain's word, not the seller's.
  const blockhash = await services.chain.getLatestBlockhash();
  // The seller's memo when it asks for one; otherwise a random nonce, as the reference client
  // adds, so two purchases of the same price in the same block are two distinct messages.
  const memo = option.memo ?? Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex');
  let built: { messageBytes: Uint8Array };
  try {
    built = await buildX402Transfer({ wallet: wallet.address as Address, mint, payTo: option.payTo as Address, amount: option.amountAtomic, feePayer: option.feePayer as Address, memo, blockhash });
  } catch (err) {
    if (err instanceof RangeError) throw invalid('/fetch_id', `the seller's requirements cannot be paid: ${err.message}`);
    throw err;
  }
  await services.db.transaction(async () => await setTxMessage(services.db, tx.transaction_id, built.messageBytes, blockhash.lastValidBlockHeight, services.now().getTime()));
  return (await getTx(services.db, tx.transaction_id))!;
}

function paySummary(p: PurchaseRow) {
  return {
    url: p.url,
    pay_to: p.pay_to,
    amount: toUsdcNumber(p.amount),
    amount_atomic: p.amount.toString(),
    asset: p.asset,
    fee_payer: p.fee_payer,
    network: p.network,
    x402_version: Number(p.x402_version),
    memo: sellerMemo(p),
  };
}

/** x402_confirm: the message to sign, with the server's commitments for it. */
export async function confirm(services: Services, wallet: WalletRow, p: PurchaseRow, commitments: unknown) {
  let tx = (await getTx(services.db, p.transaction_id))!;
  if (tx.signed_tx || p.status !== 'open') {
    return { ...purchaseView(p, tx), signed: true, message: tx.message ? Buffer.from(tx.message).toString('base64') : null, summary: paySummary(p) };
  }
  assertPayable(p, tx);
  // Guard rails again before signing, with the host: x402_allowed_hosts needs it.
  await applyRecheck(services, tx, p.host);
  tx = await ensureMessage(services, wallet, p, tx);
  const init = await startSigning(services, tx, wallet.server_key, commitments);
  return {
    ...purchaseView(p, tx),
    signed: false,
    message: init.message,
    sign_session_id: init.sign_session_id,
    server_commitments: init.server_commitments,
    sign_expires_at: init.expires_at,
    summary: paySummary(p),
    next_step: 'check the message, then send your signature share with x402_sign_complete',
  };
}

/** x402_sign_complete: the agent's share → the partially signed transaction, stored. */
export async function signComplete(services: Services, wallet: WalletRow, p: PurchaseRow, share: unknown, sessionId?: string) {
  const result = await completeSigning(services, p.transaction_id, wallet.address, wallet.server_key, share, {
    sessionId,
    recheck: async (current) => await refuseUnlessRailsAllow(services, current, p.host),
  });
  const now = services.now().getTime();
  await services.db.transaction(async () => await movePurchase(services.db, p.fetch_id, ['open'], 'signed', now));
  const fresh = (await getPurchaseById(services.db, p.fetch_id))!;
  return { ...purchaseView(fresh, (await getTx(services.db, p.transaction_id))!), signature: result.signature };
}

// ---------------------------------------------------------------------------------------------
// settle and resolution

function openRequest(services: Services, p: PurchaseRow): UpstreamRequest {
  return JSON.parse(new TextDecoder().decode(open(services.masterKey, p.request_sealed, requestAad(p.fetch_id)))) as UpstreamRequest;
}

async function complete(services: Services, p: PurchaseRow, signature: string, response?: string): Promise<void> {
  const { db } = services;
  const now = services.now().getTime();
  await db.transaction(async () => {
    const tx = (await getTx(db, p.transaction_id))!;
    const landed = await completeX402Tx(db, p.transaction_id, signature, now);
    const from = (await getWallet(db, p.wallet_id))?.address;
    forgetBalance(from);
    if (from) await markWatchedMoved(db, from, now);
    // From failed too: a purchase released on a view the chain later contradicts is paid after all.
    await movePurchase(db, p.fetch_id, ['open', 'signed', 'settling', 'pending', 'failed'], 'completed', now, { signature, error: null, ...(response ? { response } : {}) });
    if (!landed) return;
    await recordIncoming(services, tx, signature, now);
    const http = response ? (JSON.parse(response) as StoredResponse).status : null;
    await appendEvent(db, {
      walletId: p.wallet_id,
      type: 'x402.settled',
      data: { fetch_id: p.fetch_id, transaction_id: p.transaction_id, url: p.url, amount: toUsdcNumber(p.amount), pay_to: p.pay_to, signature, http_status: http },
      now,
    });
    await appendEvent(db, { walletId: p.wallet_id, type: 'payment.completed', data: { transaction_id: p.transaction_id, amount: toUsdcNumber(tx.amount), fee: 0, to: tx.counterparty, signature }, now });
  });
}

/**
 * A purchase whose transfer was found on chain by other means (after a restore: bytes a seller
 * held across the backup): completed as the purchase, with its x402.settled event and the
 * recipient's side, exactly as a settle that saw it land.
 */
export async function completeLandedPurchase(services: Services, fetchId: string, signature: string): Promise<void> {
  await complete(services, (await getPurchaseById(services.db, fetchId))!, signature);
}

/** Releases the purchase: its payment did not happen and can no longer happen. */
async function fail(services: Services, p: PurchaseRow, reason: string, response?: string): Promise<void> {
  const { db } = services;
  const now = services.now().getTime();
  await db.transaction(async () => {
    await movePurchase(db, p.fetch_id, ['open', 'signed', 'settling', 'pending'], 'failed', now, { error: reason, ...(response ? { response } : {}) });
    if (await moveTx(db, p.transaction_id, ['pending'], 'failed', now, { error: reason })) {
      await appendEvent(db, { walletId: p.wallet_id, type: 'payment.failed', data: { transaction_id: p.transaction_id, fetch_id: p.fetch_id, error: reason }, now });
    }
  });
}

async function markPending(services: Services, p: PurchaseRow, reason: string, set: { response?: string } = {}): Promise<void> {
  const now = services.now().getTime();
  await services.db.transaction(async () => await movePurchase(services.db, p.fetch_id, ['settling', 'pending'], 'pending', now, { error: reason, ...set }));
}

/** Our wallet's signature in the stored bytes (base58): only a transaction carrying it is this purchase's transfer. */
function ourSignature(tx: TxRow, walletAddress: string): string | null {
  if (!tx.signed_tx) return null;
  const signature = getTransactionDecoder().decode(tx.signed_tx).signatures[walletAddress as Address];
  return signature ? getBase58Decoder().decode(signature) : null;
}

type Found = 'yes' | 'no' | 'failed' | 'absent';

/**
 * Whether the landed transaction `signature` is this purchase's transfer: it carries `mine`, the
 * wallet's signature of our exact message (so neither another purchase at the same price nor a
 * transaction that merely lists the wallet counts). 'failed': our bytes landed and failed, so
 * they can never land again.
 */
async function isOurTransfer(services: Services, mine: string, signature: string): Promise<Found> {
  const t = await services.chain.getTokenTransfersOf(signature);
  if (t === null) return 'absent';
  if (!t.signatures.includes(mine)) return 'no';
  return t.err === null ? 'yes' : 'failed';
}

/**
 * A seller's receipt is believed only for a transaction carrying our own signature of this
 * message, as the chain shows it: landed → completed, failed → failed (with `response` kept).
 * False when the chain shows neither (yet): the caller keeps the purchase pending.
 */
async function outcomeFromReceipt(services: Services, p: PurchaseRow, tx: TxRow, walletAddress: string, payment: PaymentResponse | null, response: string): Promise<boolean> {
  const mine = ourSignature(tx, walletAddress);
  if (!payment?.transaction || !mine) return false;
  const found = await receiptOnChain(services, mine, payment.transaction, payment.errorReason === SETTLEMENT_PENDING ? 0 : RECEIPT_WAIT_MS);
  if (found === 'yes') await complete(services, p, payment.transaction, response);
  else if (found === 'failed') await fail(services, p, `the payment transaction ${payment.transaction} failed on chain`, response);
  return found === 'yes' || found === 'failed';
}

/** Marks the purchase pending for `reason` and asks the chain at once; a chain that does not answer leaves it to the outcome job. */
async function pendingUntilTheChainSays(services: Services, p: PurchaseRow, reason: string, response: string): Promise<void> {
  await markPending(services, p, reason, { response });
  try {
    await resolveOutcome(services, (await getPurchaseById(services.db, p.fetch_id))!);
  } catch (err) {
    if (!(err instanceof ChainUnavailableError)) throw err;
  }
}

/**
 * Waits briefly for the seller's receipt signature to land (the facilitator confirmed it before
 * answering); a receipt the seller itself calls pending is looked at once, not waited for.
 */
async function receiptOnChain(services: Services, mine: string, signature: string, waitMs = RECEIPT_WAIT_MS): Promise<Found> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    let found: Found;
    try {
      found = await isOurTransfer(services, mine, signature);
    } catch (err) {
      if (!(err instanceof ChainUnavailableError)) throw err;
      found = 'absent';
    }
    if (found !== 'absent' || Date.now() >= deadline) return found;
    await Bun.sleep(250);
  }
}

/** The transaction the seller's receipt named (a `settlement_pending` or an unproven one), kept with the stored answer. */
function receiptSignature(p: PurchaseRow): string | null {
  const stored = p.response ? (JSON.parse(p.response) as StoredResponse) : null;
  const named = stored?.payment_response?.transaction;
  return typeof named === 'string' && named !== '' ? named : null;
}

/**
 * Our transfer on chain, by our signature in it: the transaction the seller's receipt named,
 * looked up by its own signature; else every transaction of the wallet's token account paged back
 * to the purchase's creation. Never only the newest page: anyone can bury a landed transfer under
 * dust sent to the wallet, and a transfer missed here would be released though its money left.
 */
async function findOnChain(services: Services, p: PurchaseRow, walletAddress: string, mine: string): Promise<{ found: 'yes' | 'failed'; signature: string } | null> {
  const named = receiptSignature(p);
  if (named) {
    const found = await isOurTransfer(services, mine, named);
    if (found === 'yes' || found === 'failed') return { found, signature: named };
  }
  const mint = services.config.usdcMint as Address;
  const since = Number(p.created_at) / 1000 - 300;
  const history = await signaturesSince(services.chain, await usdcAta(walletAddress as Address, mint), undefined, { notBefore: since });
  const notOurs = notOursOf(services, p.fetch_id);
  for (const s of history) {
    if ((s.blockTime !== null && Number(s.blockTime) < since) || s.signature === named || notOurs.has(s.signature) || (await isOwnOutgoing(services.db, s.signature))) continue;
    const found = await isOurTransfer(services, mine, s.signature);
    if (found === 'yes' || found === 'failed') return { found, signature: s.signature };
    if (found === 'no') notOurs.add(s.signature);
  }
  return null;
}

/**
 * Per pending purchase, the landed transactions already read that do not carry our signature: a
 * signature names fixed bytes, so the answer never changes and each outcome pass reads only what
 * is new in the history, not every dust transfer again. Only saves reads: a daemon without it (a
 * restart, another daemon) reads them once more. Dropped when the purchase leaves the sweep.
 */
const notOursByPurchase = new WeakMap<Services, Map<string, Set<string>>>();
function notOursOf(services: Services, fetchId: string): Set<string> {
  let byPurchase = notOursByPurchase.get(services);
  if (!byPurchase) notOursByPurchase.set(services, (byPurchase = new Map()));
  let set = byPurchase.get(fetchId);
  if (!set) byPurchase.set(fetchId, (set = new Set()));
  return set;
}

/**
 * Looks an outcome up on chain. The block height is read FIRST (or given by the sweep, read
 * before this look): a transfer that lands after that read shows in the look that follows, so it
 * is never taken for expired. Our transfer found → completed; found failed → failed. Absent AND
 * past the blockhash's lastValidBlockHeight by our own view → failed (released). Else pending.
 */
export async function resolveOutcome(services: Services, p: PurchaseRow, height?: bigint): Promise<'completed' | 'failed' | 'pending'> {
  const tx = (await getTx(services.db, p.transaction_id))!;
  if (tx.status === 'completed' && tx.signature) {
    await complete(services, p, tx.signature);
    return 'completed';
  }
  const wallet = (await getWallet(services.db, p.wallet_id))!;
  const mine = ourSignature(tx, wallet.address);
  if ((tx.status !== 'pending' && tx.status !== 'failed') || !mine) {
    await fail(services, p, tx.error ?? `the payment is ${tx.status}`);
    return 'failed';
  }
  const tip = height ?? (await services.chain.getBlockHeight());
  const found = await findOnChain(services, p, wallet.address, mine);
  if (found?.found === 'yes') {
    await complete(services, p, found.signature);
    return 'completed';
  }
  if (found?.found === 'failed') {
    await fail(services, p, `the payment transaction ${found.signature} failed on chain`);
    return 'failed';
  }
  if (tx.last_valid_block_height !== null && tip > tx.last_valid_block_height) {
    await fail(services, p, 'the payment never landed and its blockhash expired: nothing was paid');
    return 'failed';
  }
  return 'pending';
}

function pendingError(p: PurchaseRow, message: string, status = 504): AppError {
  return new AppError('SERVICE_UNAVAILABLE', message, {
    status,
    howToFix: `Do not pay again: check with x402_settle (fetch_id ${p.fetch_id}) later; it looks the payment up on chain and returns the outcome.`,
    details: { fetch_id: p.fetch_id, transaction_id: p.transaction_id, purchase_status: 'pending' },
  });
}

/** A settle that died mid-flight (a crash) is treated as sent after this long. */
function staleSettlingMs(config: Pick<Config, 'outbound'>): number {
  return config.outbound.total_timeout_ms + 60_000;
}

/** x402_settle. A repeated settle returns the stored outcome; a pending one is looked up on chain. */
export async function settle(services: Services, wallet: WalletRow, fetchId: string): Promise<Awaited<ReturnType<typeof storedOutcome>>> {
  const { db } = services;
  let p = (await getPurchaseById(db, fetchId))!;
  let tx = (await getTx(db, p.transaction_id))!;
  if (p.status === 'completed' && tx.signed_tx && p.method !== MCP_METHOD && paymentExtensions(p) && !holdsAnswer(p)) return fetchAnswer(services, wallet, p, tx);
  if (p.status === 'completed' || p.status === 'failed') return storedOutcome(p, tx, true);
  if (p.status === 'settling' && Number(p.settle_started_at ?? p.updated_at) > services.now().getTime() - staleSettlingMs(services.config)) {
    throw new AppError('INVALID_STATUS', 'This purchase is being settled right now.', { howToFix: 'Retry x402_settle in a few seconds for its outcome.', headers: { 'Retry-After': '2' } });
  }
  if (p.status === 'pending' && tx.signed_tx && p.method !== MCP_METHOD && paymentExtensions(p)) {
    // A seller that takes our payment identifier answers the same send again with its first
    // answer (and never settles it twice): the very same signed bytes, so nothing new can land.
    const reclaimed = await db.transaction(async () => await movePurchase(db, fetchId, ['pending'], 'settling', services.now().getTime(), { settleStarted: true }));
    if (reclaimed) return sendPaid(services, wallet, (await getPurchaseById(db, fetchId))!, tx, true);
  }
  if (p.status === 'pending' || p.status === 'settling') {
    let outcome: 'completed' | 'failed' | 'pending';
    try {
      outcome = await resolveOutcome(services, p);
    } catch (err) {
      if (err instanceof ChainUnavailableError) throw pendingError(p, 'The outcome of this purchase is not known yet and Solana is unreachable.', 503);
      throw err;
    }
    p = (await getPurchaseById(db, fetchId))!;
    tx = (await getTx(db, p.transaction_id))!;
    if (outcome === 'pending') throw pendingError(p, 'The paid request was sent but its outcome is not known yet; the chain shows no payment so far and it can still land.');
    return storedOutcome(p, tx, false);
  }
  if (!tx.signed_tx) {
    assertPayable(p, tx);
    throw new AppError('INVALID_STATUS', 'This purchase is not signed yet.', { howToFix: `Call x402_confirm and x402_sign_complete first (fetch_id ${p.fetch_id}); the agent-wallet client does this.` });
  }
  if (p.method === MCP_METHOD) {
    throw new AppError('INVALID_STATUS', "This purchase pays an MCP tool: the agent's MCP client sends it with the tool call.", { howToFix: `Take its payment with x402_payment (fetch_id ${p.fetch_id}).` });
  }
  // Check-and-claim before the first await: one settle at a time sends the payment.
  const started = services.now().getTime();
  const claimed = await db.transaction(async () => await movePurchase(db, fetchId, ['open', 'signed'], 'settling', started, { settleStarted: true }));
  if (!claimed) return settle(services, wallet, fetchId);
  return sendPaid(services, wallet, (await getPurchaseById(db, fetchId))!, tx, false);
}

/** The payload extensions of a purchase's payment: our payment identifier when the seller declared the extension. */
function paymentExtensions(p: PurchaseRow): Record<string, unknown> | null {
  if (Number(p.x402_version) !== 2) return null;
  return paymentIdentifierExtension(JSON.parse(p.requirements) as Record<string, unknown>, p.fetch_id);
}

/** Whether the purchase holds the seller's 2xx answer. */
function holdsAnswer(p: PurchaseRow): boolean {
  if (!p.response) return false;
  const status = (JSON.parse(p.response) as StoredResponse).status;
  return status >= 200 && status < 300;
}

/** The payment header of the purchase: its stored signed bytes, under our payment identifier when the seller declared the extension. */
function paidHeader(p: PurchaseRow, tx: TxRow, walletAddress: string): { name: string; value: string } {
  const signed = Buffer.from(tx.signed_tx!).toString('base64');
  const requirements = JSON.parse(p.requirements) as Record<string, unknown> & { resource?: unknown };
  const charge = mppChargeOf(requirements);
  return charge
    ? mppCredential(charge, signed, walletAddress)
    : paymentHeader(Number(p.x402_version) as 1 | 2, requirements.resource, JSON.parse(p.accepted), signed, paymentExtensions(p) ?? undefined);
}

/**
 * A completed purchase whose answer was lost (the outcome job completed it from the chain, or a
 * gateway answered 5xx after the settlement): the same signed bytes are sent again under the same
 * payment identifier, which the seller answers without charging again (the bytes can land only
 * once). A 2xx answer is kept; anything else leaves the stored outcome as it was, for a later try.
 */
async function fetchAnswer(services: Services, wallet: WalletRow, p: PurchaseRow, tx: TxRow): Promise<Awaited<ReturnType<typeof storedOutcome>>> {
  const header = paidHeader(p, tx, wallet.address);
  let res;
  try {
    res = await sendUpstream(outboundFor(services.config), openRequest(services, p), PAID_MAX_BYTES, { [header.name]: header.value });
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    const e = outboundFailure(err, services.config, `asking ${p.host} again for the paid answer failed`);
    throw new AppError(e.errorCode, `${e.message}; the purchase is paid, do not pay again`, { status: e.status, details: { ...e.details, fetch_id: p.fetch_id, purchase_status: 'completed' }, howToFix: `Call x402_settle (fetch_id ${p.fetch_id}) again later: the same payment is sent again for the answer, and never charged twice.` });
  }
  if (res.status < 200 || res.status >= 300) return storedOutcome(p, tx, true);
  const response = JSON.stringify({
    status: res.status,
    headers: upstreamView(res).headers,
    body_base64: Buffer.from(res.body).toString('base64'),
    truncated: res.truncated,
    payment_response: parsePaymentResponse(res.headers),
  } satisfies StoredResponse);
  // A resume running alongside may have kept a 2xx first: that one stays, read again under the write lock.
  await services.db
    .transaction(async () => {
      if (!holdsAnswer((await getPurchaseById(services.db, p.fetch_id))!)) await movePurchase(services.db, p.fetch_id, ['completed'], 'completed', services.now().getTime(), { response });
    });
  const fresh = (await getPurchaseById(services.db, p.fetch_id))!;
  return storedOutcome(fresh, (await getTx(services.db, fresh.transaction_id))!, false);
}

/**
 * Sends the paid request with the stored signed bytes (claimed: the purchase is `settling`) and
 * records what the answer proves. `resend`: an earlier send may have reached the seller, so a send
 * that fails leaves the purchase `pending`, never back to `signed`.
 */
async function sendPaid(services: Services, wallet: WalletRow, p: PurchaseRow, tx: TxRow, resend: boolean): Promise<Awaited<ReturnType<typeof storedOutcome>>> {
  const { db } = services;
  const fetchId = p.fetch_id;
  const request = openRequest(services, p);
  const header = paidHeader(p, tx, wallet.address);
  let res;
  try {
    // The payment header carries signed bytes the seller may broadcast: they leave only once stored on the disk.
    await services.durable();
    res = await sendUpstream(outboundFor(services.config), request, PAID_MAX_BYTES, { [header.name]: header.value });
  } catch (err) {
    if (err instanceof OutboundError && !err.maybeSent) {
      // Nothing reached the seller this time: the purchase can be settled again with the same bytes.
      await db.transaction(async () => await movePurchase(db, fetchId, ['settling'], resend ? 'pending' : 'signed', services.now().getTime(), { error: err.message }));
      const e = outboundFailure(err, services.config, `sending the paid request to ${p.host} failed`);
      const what = resend ? 'nothing was sent this time; the earlier send may still have paid' : 'nothing was sent, nothing was paid';
      throw new AppError(e.errorCode, `${e.message}; ${what}`, { status: e.status, details: { ...e.details, fetch_id: p.fetch_id }, howToFix: `Call x402_settle (fetch_id ${p.fetch_id}) again; the same signed payment is sent.` });
    }
    const message = err instanceof Error ? err.message : String(err);
    await markPending(services, p, `sent, then: ${message}`);
    throw pendingError(p, `The paid request to ${p.host} was sent but no complete answer came (${message}); the payment may have gone through.`, err instanceof OutboundError && err.kind === 'timeout' ? 504 : 502);
  }
  const payment = parsePaymentResponse(res.headers) ?? parseMppReceipt(res.headers);
  const response = JSON.stringify({
    status: res.status,
    headers: upstreamView(res).headers,
    body_base64: Buffer.from(res.body).toString('base64'),
    truncated: res.truncated,
    payment_response: payment,
  } satisfies StoredResponse);
  if (!(await outcomeFromReceipt(services, p, tx, wallet.address, payment, response))) {
    // No receipt we can believe. Even a refusal (402) is not final while the signed bytes can still land (the
    // seller holds them; its facilitator could still sign and send): the purchase stays pending,
    // the money reserved, until the chain shows the transfer or the blockhash has expired.
    const refused = res.status === 402 ? parsePaymentRequired(res.headers, res.body) : null;
    const reason = payment?.errorReason === SETTLEMENT_PENDING && payment.transaction
      ? `the seller reports its settlement pending (transaction ${payment.transaction}): the chain decides; it completes when our transfer lands and is released once its blockhash expires unused`
      : payment?.transaction
      ? `the seller's receipt ${payment.transaction} is not (yet) our transfer on chain; it is released once its blockhash expires unused`
      : res.status === 402
        ? `the seller refused the payment (${payment?.errorReason ?? refused?.error ?? 'no reason given'}); it is released once its blockhash expires unused`
        : `the seller answered HTTP ${res.status} without a payment receipt`;
    await pendingUntilTheChainSays(services, p, reason, response);
  }
  p = (await getPurchaseById(db, fetchId))!;
  return storedOutcome(p, (await getTx(db, p.transaction_id))!, false);
}

/** How long a released purchase is looked for again, in case a lagging view took it for absent. */
const RELOOK_FAILED_MS = 120_000;

/**
 * One pass of the outcome sweep: pending outcomes, settles that died mid-flight, signed bytes
 * never settled once their blockhash expired (released if absent, completed if present), and
 * recent releases, each looked up on chain. The height is read once, before any look.
 */
export async function resolvePendingPurchases(services: Services): Promise<number> {
  const now = services.now().getTime();
  if (!(await anyUnsettledPurchase(services.db, now - RELOOK_FAILED_MS))) {
    notOursByPurchase.delete(services);
    return 0;
  }
  const height = await services.chain.getBlockHeight();
  let resolved = 0;
  const unresolved = await unresolvedPurchases(services.db, { staleSettlingBefore: now - staleSettlingMs(services.config), height, failedSince: now - RELOOK_FAILED_MS });
  const swept = new Set(unresolved.map((p) => p.fetch_id));
  const notOurs = notOursByPurchase.get(services);
  for (const id of notOurs?.keys() ?? []) if (!swept.has(id)) notOurs!.delete(id);
  for (const p of unresolved) {
    const before = p.status;
    try {
      const outcome = await resolveOutcome(services, p, height);
      if (outcome !== 'pending' && outcome !== before) resolved++;
    } catch (err) {
      services.log.warn('x402 outcome lookup failed', { fetch_id: p.fetch_id, error: (err as Error).message });
    }
  }
  return resolved;
}

// ---------------------------------------------------------------------------------------------
// paid MCP tools (x402's MCP transport: the agent's MCP client sends the payment with the tool call)

/** The method recorded for a purchase whose request the agent's MCP client sends, not this daemon. */
const MCP_METHOD = 'MCP';

/** The rails' host of an MCP server: its URL's host, else its name, lower case. */
export function mcpHost(server: string): string {
  try {
    return hostOf(server);
  } catch {
    return server.toLowerCase();
  }
}

/**
 * x402_prepare_tool: the PaymentRequired a paid MCP tool answered (`isError` with it in
 * `structuredContent`), made a purchase as x402_prepare makes one — the same option choice,
 * checks, guard rails (host: the MCP server) and intent; the agent's client then signs it and
 * sends the payment itself, with the tool call.
 */
export async function prepareTool(ctx: ActionContext, wallet: WalletRow, p: { server: string; tool: string; paymentRequired: unknown; maxAmount?: bigint }) {
  const { config } = ctx.services;
  const required = paymentRequiredFrom(p.paymentRequired);
  if (!required) throw invalid('/payment_required', 'is not an x402 v2 PaymentRequired (x402Version 2 with accepts)', "Pass the tool result's structuredContent as it came.");
  const chosen = chooseOption(required, payableTarget(config));
  if (!chosen.ok) {
    throw new AppError('VALIDATION_ERROR', `/payment_required: the tool offers nothing this wallet can pay: ${chosen.reason}`, {
      howToFix: `This wallet pays x402 "exact" in USDC (${config.usdcMint}); nothing was created.`,
      details: { field: '/payment_required' },
    });
  }
  const host = mcpHost(p.server);
  const named = isObject(required.resource) && typeof required.resource.url === 'string' ? required.resource.url.slice(0, 2048) : null;
  const url = named ?? `mcp://${host}/${encodeURIComponent(p.tool)}`;
  const req: UpstreamRequest = { url, method: MCP_METHOD, headers: {}, body: JSON.stringify({ server: p.server, tool: p.tool }) };
  return createPurchase(ctx, wallet, { req, host, required, option: chosen.option, maxAmount: p.maxAmount });
}

function assertToolPurchase(p: PurchaseRow): void {
  if (p.method !== MCP_METHOD) {
    throw new AppError('INVALID_STATUS', 'This purchase is an HTTP one: the daemon sends it.', { howToFix: `Use x402_settle (fetch_id ${p.fetch_id}).` });
  }
}

/**
 * x402_payment: the signed payment of a tool purchase as the `PaymentPayload` the agent's client
 * puts in `_meta["x402/payment"]` — the same bytes on every call. From the first call on the
 * purchase is pending: the payment may be sent; the receipt or the chain decides.
 */
export async function toolPayment(services: Services, wallet: WalletRow, p: PurchaseRow) {
  assertToolPurchase(p);
  const tx = (await getTx(services.db, p.transaction_id))!;
  if (!tx.signed_tx) {
    assertPayable(p, tx);
    throw new AppError('INVALID_STATUS', 'This purchase is not signed yet.', { howToFix: `Call x402_confirm and x402_sign_complete first (fetch_id ${p.fetch_id}); the agent-wallet client does this.` });
  }
  await services.db.transaction(async () => await movePurchase(services.db, p.fetch_id, ['open', 'signed'], 'pending', services.now().getTime(), { error: 'handed to the agent, who sends it with the tool call' }));
  const fresh = (await getPurchaseById(services.db, p.fetch_id))!;
  const requirements = JSON.parse(fresh.requirements) as Record<string, unknown> & { resource?: unknown };
  const payment = paymentPayloadV2(requirements.resource, JSON.parse(fresh.accepted), Buffer.from(tx.signed_tx).toString('base64'), paymentExtensions(fresh) ?? undefined);
  return { ...purchaseView(fresh, (await getTx(services.db, p.transaction_id))!), payment };
}

/**
 * x402_receipt: what the tool answered to the paid call — its `_meta["x402/payment-response"]`,
 * believed only for a transaction carrying our signature of this message on chain (as an HTTP
 * seller's receipt is); without one the purchase stays pending and the chain decides.
 */
export async function toolReceipt(services: Services, wallet: WalletRow, p: PurchaseRow, paymentResponse: unknown, answer: unknown) {
  assertToolPurchase(p);
  const tx = (await getTx(services.db, p.transaction_id))!;
  if (p.status === 'completed' || p.status === 'failed') return storedOutcome(p, tx, true);
  if (p.status !== 'pending') throw new AppError('INVALID_STATUS', `The purchase is ${p.status}: its payment was not handed out yet.`, { howToFix: `Call x402_payment (fetch_id ${p.fetch_id}) and send it with the tool call first.` });
  const receipt = readPaymentResponse(paymentResponse);
  const response = JSON.stringify({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body_base64: Buffer.from(JSON.stringify(answer ?? null).slice(0, PAID_MAX_BYTES)).toString('base64'),
    truncated: false,
    payment_response: receipt,
  } satisfies StoredResponse);
  if (!(await outcomeFromReceipt(services, p, tx, wallet.address, receipt, response))) {
    await pendingUntilTheChainSays(services, p, receipt?.transaction ? `the tool's receipt ${receipt.transaction} is not (yet) our transfer on chain` : 'the tool answered without a payment receipt', response);
  }
  const fresh = (await getPurchaseById(services.db, p.fetch_id))!;
  return storedOutcome(fresh, (await getTx(services.db, fresh.transaction_id))!, false);
}
