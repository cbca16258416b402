/**
 * Fund requests (DESIGN §8): an agent asks its owner for money. open → fulfilled (a deposit that
 * covers it, or the owner) | declined (the owner). The owner gets a mail with the fund page
 * `/fund/<id>`: deposit address, Solana Pay QR code for the amount, and on simnet a faucet button.
 */
import type { Address } from '@solana/kit';
import type { ActionContext } from '../action-context.ts';
import { AppError, invalid } from '../errors.ts';
import { newId } from '../contract/ids.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import {
  getFundRequest,
  armedFundRequests,
  insertFundRequest,
  ownerFundRequest,
  resolveFundRequest,
  type FundRequestRow,
  type FundRequestStatus,
} from '../db/fund-requests.ts';
import { getOwner } from '../db/owners.ts';
import { watchCursor } from '../db/watch.ts';
import { getWallet, type WalletRow } from '../db/wallets.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { queueMail } from '../mail/outbox.ts';
import type { Services } from '../services.ts';
import { fundRequestMail } from './mail.ts';
import { amountParam } from '../params.ts';
import { usdcAta } from '../solana/ata.ts';
import { fundRequestsCovered, solanaPayUrl } from './rules.ts';

const iso = (ms: bigint | number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export const fundRequestNotFound = () => new AppError('NOT_FOUND', 'Fund request not found.', { howToFix: 'Use a fund_request_id (fr_…) from list_fund_requests or fund_requests.' });

/** The fund page of a request. */
export function fundUrl(services: Services, id: string): string {
  return `${services.publicUrl()}/fund/${id}`;
}

/** Solana Pay URL that deposits the requested amount of USDC into the wallet. */
export function fundSolanaPayUrl(services: Services, row: FundRequestRow, wallet: WalletRow): string {
  return solanaPayUrl({ recipient: wallet.address, amount: row.amount, mint: services.config.usdcMint, reference: null, label: wallet.name, message: row.reason });
}

export async function fundRequestView(services: Services, row: FundRequestRow) {
  const wallet = await getWallet(services.db, row.wallet_id);
  return {
    fund_request_id: row.fund_request_id,
    wallet_id: row.wallet_id,
    amount: toUsdcNumber(row.amount),
    currency: 'USDC',
    reason: row.reason,
    status: row.status,
    fund_url: fundUrl(services, row.fund_request_id),
    deposit_address: wallet?.address ?? null,
    resolved_by: row.resolved_by,
    decline_reason: row.decline_reason ?? null,
    transaction_id: row.transaction_id,
    created_at: iso(row.created_at),
    resolved_at: iso(row.resolved_at),
  };
}

/**
 * request_funds: stores the request, its event and the owner's mail in one transaction (with the
 * idempotent response, when the caller sent a key). The request remembers the newest transaction
 * of the wallet's USDC account: money that landed up to it was there before the request and never
 * fulfils it, however late the deposit watch notices it. When the watch has already handled that
 * transaction, the request is armed at once; otherwise the watch arms it when it gets there, or
 * when it reaches a transaction of a later slot (it may have passed that one before the request
 * was stored, or the node that answered here trailed it).
 */
export async function requestFunds(ctx: ActionContext, wallet: WalletRow, p: { amount: number | string; reason: string }) {
  const { services } = ctx;
  const amount = amountParam(services, '/amount', p.amount);
  const reason = p.reason.trim();
  if (reason === '') throw invalid('/reason', 'must not be empty', 'Tell the owner what the money is for.');
  const account = await usdcAta(wallet.address as Address, services.config.usdcMint as Address);
  const [newest] = await services.chain.getSignaturesForAddress(account, { limit: 1 });
  const after = newest?.signature ?? null;
  const id = newId('fundRequest');
  const now = services.now().getTime();
  const owner = wallet.owner_id ? await getOwner(services.db, wallet.owner_id) : null;
  return await services.db
    .transaction(async () => {
      const armed = after === null || (await watchCursor(services.db, wallet.address)) === after;
      await insertFundRequest(services.db, { fund_request_id: id, wallet_id: wallet.wallet_id, amount, reason, after_signature: after, after_slot: newest?.slot ?? null, armed, now });
      await appendEvent(services.db, { walletId: wallet.wallet_id, type: 'fund_request.created', data: { fund_request_id: id, amount: toUsdcNumber(amount), reason }, now });
      if (owner) await queueMail(services, fundRequestMail(owner.email, wallet, { amount, reason, url: fundUrl(services, id), address: wallet.address }));
      const view = {
        ...(await fundRequestView(services, (await getFundRequest(services.db, id))!)),
        owner_notified: owner !== null,
        next_step: 'wait for the owner: the request is fulfilled when a deposit covering it arrives after it (watch events for fund_request.fulfilled); money already in the wallet does not count',
      };
      await ctx.idempotency?.record(view);
      return view;
    });
}

/**
 * Called inside the transaction that records money coming in (the deposit watch, or our own
 * transfer between wallets): fulfils the armed open requests the deposit covers (oldest first),
 * each with a fund_request.fulfilled event. A request not armed yet waits for a later deposit: the
 * watch has not passed the transaction that was newest when it was asked, so this money may be older.
 */
export async function fulfilFromDeposit(services: Services, walletId: string, amount: bigint, transactionId: string, now: number): Promise<void> {
  for (const r of fundRequestsCovered(await armedFundRequests(services.db, walletId), amount)) {
    if (!(await resolveFundRequest(services.db, r.fund_request_id, 'fulfilled', 'deposit', transactionId, now))) continue;
    await appendEvent(services.db, {
      walletId,
      type: 'fund_request.fulfilled',
      data: { fund_request_id: r.fund_request_id, amount: toUsdcNumber(r.amount), by: 'deposit', transaction_id: transactionId },
      now,
    });
  }
}

/** The longest reason an owner may give for declining (owner API resolve_fund_request, the dashboard, the CLI). */
export const DECLINE_REASON_MAX = 200;

/**
 * The owner's reason for declining, checked as other free text: trimmed, 1–200 characters, one line
 * without control characters. Only a decline takes one: with "fulfilled" it is a VALIDATION_ERROR.
 * Absent or (from a form) empty: null.
 */
export function declineReason(decision: 'fulfilled' | 'declined', raw: string | null | undefined, opts: { emptyIsNone?: boolean } = {}): string | null {
  if (raw === undefined || raw === null) return null;
  const reason = raw.trim();
  if (reason === '' && opts.emptyIsNone) return null;
  if (decision !== 'declined') throw invalid('/reason', 'is only taken with decision "declined"', 'Leave reason out when marking a request fulfilled.');
  if (reason === '') throw invalid('/reason', 'must not be empty', 'Say in a few words why you decline, or leave reason out.');
  if ([...reason].length > DECLINE_REASON_MAX) throw invalid('/reason', `must be at most ${DECLINE_REASON_MAX} characters`, 'Shorten the reason.');
  if (/[\x00-\x1f\x7f]/.test(reason)) throw invalid('/reason', 'must be one line without control characters', 'Write the reason on one line.');
  return reason;
}

/**
 * The owner marks a fund request of one of their wallets fulfilled or declined (owner API
 * resolve_fund_request, the dashboard's Decline), with an audit entry naming who decided; a
 * decline may carry the owner's reason, which the audit entry and the agent's
 * fund_request.declined event hold.
 */
export async function resolveAsOwner(services: Services, ownerId: string, id: string, decision: 'fulfilled' | 'declined', actor: string, rawReason?: string | null) {
  const reason = declineReason(decision, rawReason);
  const now = services.now().getTime();
  const outcome = await services.db
    .transaction(async () => {
      const row = await ownerFundRequest(services.db, ownerId, id);
      if (!row) return 'not_found' as const;
      if (!(await resolveFundRequest(services.db, id, decision, actor, null, now, reason))) return 'refused' as const;
      const data = { fund_request_id: id, amount: toUsdcNumber(row.amount), ...(reason === null ? {} : { reason }) };
      await appendAudit(services.db, { walletId: row.wallet_id, actor, kind: `fund_request.${decision}`, data: { ...data, requested_for: row.reason }, now });
      await appendEvent(services.db, { walletId: row.wallet_id, type: `fund_request.${decision}`, data: { ...data, by: 'owner' }, now });
      return 'done' as const;
    });
  if (outcome === 'not_found') throw fundRequestNotFound();
  const row = (await getFundRequest(services.db, id))!;
  if (outcome === 'refused') {
    throw new AppError('INVALID_STATUS', `The fund request is already ${row.status}.`, { howToFix: 'List open requests with fund_requests {status: "open"}.', details: { status: row.status } });
  }
  return await fundRequestView(services, row);
}

/** Statuses a fund request can have (for list filters). */
export type { FundRequestStatus };

/** The wallet address a fund page shows (for the page and the faucet route). */
export async function fundTarget(services: Services, id: string): Promise<{ row: FundRequestRow; wallet: WalletRow; address: Address } | null> {
  const row = await getFundRequest(services.db, id);
  const wallet = row ? await getWallet(services.db, row.wallet_id) : null;
  if (!row || !wallet) return null;
  return { row, wallet, address: wallet.address as Address };
}
