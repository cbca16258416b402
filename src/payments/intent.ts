/**
 * Creating a money-moving intent (payment, withdrawal, x402): quote the fees from the chain,
 * then — in one write transaction — check the available balance, let the guard rails decide,
 * reserve the budget by inserting the row, open an approval when needed, and write the events and
 * the audit entry. The database orders the transactions (SQLite's one writer; on PostgreSQL the
 * writer lock, or the payer wallet's key lock), so twenty concurrent intents against one budget
 * are decided one after another and never overspend.
 */
import type { Address } from '@solana/kit';
import { AppError } from '../errors.ts';
import { newId } from '../contract/ids.ts';
import { insertApproval, getApproval } from '../db/approvals.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import { loadEffectiveRails } from '../db/guard-rails.ts';
import { railsToJson } from '../contract/guard-rails.ts';
import { bytesToHex } from '@noble/hashes/utils.js';
import { sha256 } from '../domain/sha256.ts';
import { getTx, insertTx, setupFeeHolder, walletOutflow, type TxRow, type TxType } from '../db/transactions.ts';
import { computeUsage } from '../db/usage.ts';
import type { WalletRow } from '../db/wallets.ts';
import { decide, windowStarts, type Category, type Decision, type GuardRails } from '../domain/guardrails.ts';
import { feeFor, formatUsdc, toUsdcNumber } from '../domain/money.ts';
import { queueApprovalMail } from '../mail/approval-mail.ts';
import type { Services } from '../services.ts';
import { payerBalance } from './balance-cache.ts';
import { operatorCreatesAccount, recipientAccountExists } from './recipient-account.ts';

/** Intents not confirmed within 48 hours expire (SPEC Limits 1). */
export const INTENT_TTL_MS = 48 * 60 * 60 * 1000;

export interface Quote {
  amount: bigint;
  fee: bigint;
  setupFee: bigint;
  total: bigint;
  /** On-chain balance of the payer. */
  balance: bigint;
  /** The payer's settled_out total the balance is valid at (payments/balance-cache.ts). */
  settledOut: bigint;
}

/** Reads what the chain says about the payer and the recipient, before any write. */
export async function quote(services: Services, payer: Address, recipient: Address, amount: bigint, kind: TxType): Promise<Quote> {
  const mint = services.config.usdcMint as Address;
  const { money, fees } = services.config;
  // x402 pays a seller's existing account; our claimed wallets' accounts are the operator's to create.
  const recipientReady = kind === 'x402' || (await operatorCreatesAccount(services, recipient)) || (await recipientAccountExists(services, recipient, mint));
  const fee = kind === 'withdrawal' ? money.withdrawalFee : kind === 'x402' ? 0n : feeFor(amount, BigInt(fees.payment_bps), money.paymentMin);
  const setupFee = recipientReady ? 0n : money.accountSetupFee;
  const total = amount + fee + setupFee;
  const { balance, settledOut } = await payerBalance(services, payer, mint, total);
  return { amount, fee, setupFee, total, balance, settledOut };
}

export interface IntentInput {
  wallet: WalletRow;
  type: TxType;
  category: Category;
  recipient: { label: string; username?: string; address: Address; walletId?: string; merchantId?: string };
  quote: Quote;
  note?: string;
  reference?: string;
  paymentRequestId?: string;
  host?: string;
  /** The host is only the agent's word (a paid MCP tool's server). */
  hostNamedByAgent?: boolean;
  idempotencyKey?: string;
  /** The id to create it under (the fast path built its message, memo included, before the row). */
  transactionId?: string;
}

/**
 * What the wallet can still spend: the quoted balance, less outgoing money not yet settled, less
 * what settled since the quote read it (a transfer completed meanwhile, on any node).
 */
async function available(services: Services, wallet: WalletRow, q: Quote): Promise<bigint> {
  const flow = await walletOutflow(services.db, wallet.wallet_id);
  return q.balance - flow.outstanding - (flow.settledOut - q.settledOut);
}

/** Throws INSUFFICIENT_FUNDS with balance, required and shortfall when `q` does not fit. */
export async function assertAffordable(services: Services, wallet: WalletRow, q: Quote): Promise<void> {
  const free = await available(services, wallet, q);
  if (free < q.total) {
    throw new AppError('INSUFFICIENT_FUNDS', `The wallet can spend ${formatUsdc(free < 0n ? 0n : free)} USDC; this needs ${formatUsdc(q.total)} USDC including fees.`, {
      details: { balance: toUsdcNumber(q.balance), available: toUsdcNumber(free < 0n ? 0n : free), required: toUsdcNumber(q.total), shortfall: toUsdcNumber(q.total - free) },
    });
  }
}

/** The guard-rails decision for an intent, from the ledger as it is now (sync; call inside the write transaction). */
export async function decideIntent(services: Services, input: Omit<IntentInput, 'type'>, now: Date): Promise<Decision & { rails: GuardRails }> {
  const rails = await loadEffectiveRails(services.db, input.wallet.wallet_id, now);
  const starts = windowStarts(now, rails.active_hours?.timezone);
  const usage = await computeUsage(services.db, input.wallet.wallet_id, starts, { address: input.recipient.address }, input.category === 'x402' ? input.host : undefined, input.hostNamedByAgent);
  const decision = decide(
    rails,
    { category: input.category, amount: input.quote.total, recipient: { username: input.recipient.username, address: input.recipient.address }, host: input.host, host_named_by_agent: input.hostNamedByAgent },
    usage,
    now,
  );
  return { ...decision, rails };
}

/**
 * The rails a decision was made under, by content: the first 16 hex digits of sha256 over their
 * JSON. The decision log's `guard_rails.set` rows hold each rails JSON, so an owner matches a
 * decision to the rails in force when it was made.
 */
export function railsVersion(rails: GuardRails): string {
  return bytesToHex(sha256(JSON.stringify(railsToJson(rails)))).slice(0, 16);
}

const EVENT_PREFIX: Record<TxType, string> = { payment: 'payment', withdrawal: 'withdrawal', x402: 'payment', deposit: 'payment' };

/**
 * The quote as an intent to `recipient` carries it: a missing account is created by one in-flight
 * payment only, so while another carries the setup fee this one is quoted (and reserves) without
 * it and waits for that account at confirm (src/payments/recipient-account.ts). Sync: inside the
 * write transaction, two concurrent intents cannot both take the fee.
 */
export async function setupHeldQuote(services: Services, walletId: string, recipient: Address, q: Quote): Promise<Quote> {
  if (q.setupFee === 0n) return q;
  const holder = await setupFeeHolder(services.db, recipient);
  // Another wallet's payment holds the fee only once it is signed: an intent left unconfirmed must not
  // stop other wallets from paying the address (both may carry the fee; signing lets one create it).
  if (!holder || (holder.wallet_id !== walletId && holder.signed_tx === null)) return q;
  return { ...q, setupFee: 0n, total: q.total - q.setupFee };
}

/**
 * Creates the intent; call inside the caller's write transaction. Returns the stored row.
 * A rejected intent is stored too (with its rule), so the agent and the owner can see why.
 */
export async function createIntent(services: Services, intentInput: IntentInput): Promise<TxRow> {
  const { db } = services;
  const nowDate = services.now();
  const now = nowDate.getTime();
  const input = { ...intentInput, quote: await setupHeldQuote(services, intentInput.wallet.wallet_id, intentInput.recipient.address, intentInput.quote) };
  await assertAffordable(services, input.wallet, input.quote);
  const decision = await decideIntent(services, input, nowDate);
  const id = input.transactionId ?? newId('transaction');
  const approvalId = decision.outcome === 'awaiting_approval' ? newId('approval') : null;
  await insertTx(db, {
    transaction_id: id,
    wallet_id: input.wallet.wallet_id,
    type: input.type,
    direction: 'out',
    category: input.category,
    status: decision.outcome,
    amount: input.quote.amount,
    fee: input.quote.fee,
    setup_fee: input.quote.setupFee,
    counterparty: input.recipient.label,
    to_wallet_id: input.recipient.walletId,
    to_merchant_id: input.recipient.merchantId,
    to_address: input.recipient.address,
    note: input.note,
    reference: input.reference,
    payment_request_id: input.paymentRequestId,
    decision_rule: decision.rule,
    decision_reason: decision.reason,
    approval_id: approvalId,
    idempotency_key: input.idempotencyKey,
    expires_at: decision.outcome === 'rejected' ? null : now + INTENT_TTL_MS,
    now,
  });
  const eventData = { transaction_id: id, amount: toUsdcNumber(input.quote.amount), fee: toUsdcNumber(input.quote.fee + input.quote.setupFee), to: input.recipient.label, status: decision.outcome, rule: decision.rule };
  const prefix = EVENT_PREFIX[input.type];
  await appendEvent(db, { walletId: input.wallet.wallet_id, type: decision.outcome === 'rejected' ? `${prefix}.rejected` : `${prefix}.created`, data: eventData, now });
  if (approvalId) {
    await insertApproval(db, {
      approval_id: approvalId,
      wallet_id: input.wallet.wallet_id,
      subject_type: input.type === 'withdrawal' ? 'withdrawal' : input.type === 'x402' ? 'x402' : 'payment',
      subject_id: id,
      amount: input.quote.total,
      recipient: input.recipient.label,
      reason: decision.reason,
      now,
    });
    await appendEvent(db, { walletId: input.wallet.wallet_id, type: 'approval.requested', data: { ...eventData, approval_id: approvalId, reason: decision.reason }, now });
    await queueApprovalMail(services, (await getApproval(db, approvalId))!);
  }
  await appendAudit(db, { walletId: input.wallet.wallet_id, actor: 'agent', kind: 'decision', data: { ...eventData, reason: decision.reason, rails_version: railsVersion(decision.rails) }, now });
  return (await getTx(db, id))!;
}
