/**
 * The operator's fee on x402 sales this daemon settles for its merchants (issue 29; DESIGN §8.1).
 *
 * The exact scheme lets a buyer's transaction carry one transfer, to the seller, so the fee cannot
 * ride in the sale: each sale records the fee its merchant owes (`fees.sale_bps`, at least
 * `fees.sale_min`) and the merchant pays what it owes to the treasury against an invoice — a Solana
 * Pay request with a reference key, payable from any wallet. The reference key's transactions are
 * read from the chain (the invoice's scan: by a job while the invoice is open, and on the merchant's
 * own look while it is open or was paid in the last day), and every landed USDC transfer to the treasury's token account carrying it credits the
 * merchant once. A merchant that owes more than `fees.sale_credit` gets no more sales settled until
 * it pays, so what the operator is owed is bounded. A wallet's own sales carry no fee: its USDC is
 * custodied 2-of-2 with its agent, and no path here lets the daemon collect from it.
 *
 * What a sale costs the operator's fee payer in SOL (two signatures and the priority fee the buyer's
 * transaction asks) is counted against its seller, a merchant or a wallet alike: a seller's sales
 * may cost at most `fees.sale_network_lamports_per_day` in any 24 h, so no seller (a free merchant
 * registration, a self-sale of one micro-USDC) spends the operator's SOL without bound.
 */
import type { Address } from '@solana/kit';
import { newId } from '../contract/ids.ts';
import type { MerchantRow } from '../db/merchants.ts';
import {
  accrueSaleFee,
  networkCostSince,
  settlingFees,
  totalNetworkCostSince,
  feeAccount,
  getInvoice,
  insertInvoice,
  invoicePayments,
  latestInvoiceOf,
  openInvoiceOf,
  openInvoices,
  recordFeePayment,
  setInvoiceAmount,
  setInvoiceCursor,
  type InvoiceRow,
} from '../db/sale-fees.ts';
import { AppError } from '../errors.ts';
import { feeFor, formatUsdc, toUsdcNumber } from '../domain/money.ts';
import { treasuryOf } from '../payments/message.ts';
import type { Services } from '../services.ts';
import { usdcAta } from '../solana/ata.ts';
import { signaturesSince } from '../solana/history.ts';
import { inBackground } from '../solana/rpc-priority.ts';
import { recordMerchantEvent } from '../webhooks/outbox.ts';
import { newReferenceKey, solanaPayUrl } from './rules.ts';

/** Past this share of the credit the merchant is told (event and webhook `sale_fees.due`) to pay. */
const DUE_SHARE_PERCENT = 80n;
/** A merchant's look scans its invoice's reference key at most this often… */
const LOOK_SCAN_MS = 1_000;
/** …and waits for that scan at most this long. */
const LOOK_WAIT_MS = 2_000;
/** A paid invoice's reference key is watched this long more: a late or second payment still credits. */
const LATE_WINDOW_MS = 24 * 3_600_000;

const scanning = new Set<string>();
const looked = new Map<string, number>();

/** The fee a merchant's sale of `amount` owes. */
export function saleFee(services: Services, amount: bigint): bigint {
  const { fees, money } = services.config;
  return feeFor(amount, BigInt(fees.sale_bps), money.saleMin);
}

/** What `merchantId`'s sales owe and it has not paid. */
export async function saleFeesOwed(services: Services, merchantId: string): Promise<bigint> {
  const a = await feeAccount(services.db, merchantId);
  return a.accrued > a.paid ? a.accrued - a.paid : 0n;
}

/**
 * Why a sale owing `fee` may not be settled for this merchant now, or null when it may. Its sales
 * still settling count: a fee is owed only once its sale completes, and settles in flight together
 * must not pass the credit.
 */
export async function creditRefusal(services: Services, merchantId: string, fee: bigint): Promise<string | null> {
  const owed = await saleFeesOwed(services, merchantId);
  const settling = await settlingFees(services.db, merchantId);
  const credit = services.config.money.saleCredit;
  if (owed + settling + fee <= credit) return null;
  const inFlight = settling > 0n ? ` (and ${formatUsdc(settling)} more for sales still settling)` : '';
  return `this merchant owes ${formatUsdc(owed)} USDC in sale fees${inFlight} and may owe at most ${formatUsdc(credit)}; its sales settle again once it pays them (agent-wallet merchant fees --invoice)`;
}

/** The window of a seller's SOL allowance. */
const NETWORK_WINDOW_MS = 24 * 3_600_000;

/** A sale the fee payer may not pay for now: past its seller's allowance, or past all sellers' together. */
export interface NetworkRefusal {
  scope: 'seller' | 'total';
  message: string;
}

/**
 * Why a sale costing the fee payer `lamports` may not be settled for seller `sellerId` now, or null
 * when it may. Merchants register without a key, so a seller's own allowance bounds nothing on its
 * own: all sellers' sales together may cost at most `sale_network_lamports_per_day_total`.
 */
export async function networkRefusal(services: Services, sellerId: string, lamports: bigint): Promise<NetworkRefusal | null> {
  const since = services.now().getTime() - NETWORK_WINDOW_MS;
  const spent = await networkCostSince(services.db, sellerId, since);
  const allowance = BigInt(services.config.fees.sale_network_lamports_per_day);
  if (spent + lamports > allowance) {
    return { scope: 'seller', message: `this seller's sales cost the operator's fee payer ${spent} lamports in the last 24 h; this one would cost ${lamports} more, past the ${allowance} a seller's sales may cost in 24 h (fees.sale_network_lamports_per_day); its sales settle again as the day's older ones leave the window` };
  }
  const total = await totalNetworkCostSince(services.db, since);
  const cap = BigInt(services.config.fees.sale_network_lamports_per_day_total);
  if (total + lamports <= cap) return null;
  return { scope: 'total', message: `all sellers' sales cost the operator's fee payer ${total} lamports in the last 24 h; this one would cost ${lamports} more, past the ${cap} they may cost together (fees.sale_network_lamports_per_day_total); sales settle again as the day's older ones leave the window, or when the operator raises it` };
}

/**
 * Records what a completed sale owes, and tells the merchant once the sales cross
 * DUE_SHARE_PERCENT of the credit. Inside the sale's write transaction.
 */
export async function accrue(services: Services, merchantId: string, fee: bigint, now: number): Promise<void> {
  const { accrued, paid } = await feeAccount(services.db, merchantId);
  await accrueSaleFee(services.db, merchantId, fee, now);
  const credit = services.config.money.saleCredit;
  const threshold = (credit * DUE_SHARE_PERCENT) / 100n;
  const owed = (a: bigint) => (a > paid ? a - paid : 0n);
  const before = owed(accrued);
  const after = owed(accrued + fee);
  if (fee > 0n && before < threshold && after >= threshold) {
    await recordMerchantEvent(
      services.db,
      merchantId,
      'sale_fees.due',
      { owed: toUsdcNumber(after), credit_limit: toUsdcNumber(credit), message: 'Your x402 sales owe the operator this much in fees; past the limit, sales are refused until you pay.', next_step: 'agent-wallet merchant fees --invoice' },
      now,
    );
  }
}

async function invoiceView(services: Services, row: InvoiceRow | null, merchant: MerchantRow) {
  if (!row) return null;
  const payments = await invoicePayments(services.db, row.invoice_id);
  const received = payments.reduce((sum, p) => sum + p.amount, 0n);
  // Never more than is owed now: a payment beyond an invoice pays the next sales' fees.
  const left = row.amount > received ? row.amount - received : 0n;
  const owed = await saleFeesOwed(services, merchant.merchant_id);
  const due = left < owed ? left : owed;
  const treasury = treasuryOf(services);
  return {
    invoice_id: row.invoice_id,
    status: row.status,
    amount: toUsdcNumber(row.amount),
    received: toUsdcNumber(received),
    due: toUsdcNumber(row.status === 'open' ? due : 0n),
    treasury,
    reference_key: row.reference_key,
    solana_pay_url:
      row.status === 'open' && due > 0n
        ? solanaPayUrl({ recipient: treasury, amount: due, mint: services.config.usdcMint, reference: row.reference_key, label: 'Agent Wallet Service', message: `x402 sale fees of @${merchant.username} (${row.invoice_id})` })
        : null,
    payments: payments.map((p) => ({ signature: p.signature, amount: toUsdcNumber(p.amount), payer: p.payer, found_at: new Date(Number(p.created_at)).toISOString() })),
    created_at: new Date(Number(row.created_at)).toISOString(),
    paid_at: row.paid_at === null ? null : new Date(Number(row.paid_at)).toISOString(),
  };
}

/** What a merchant's sales owe and its newest invoice; scans an open invoice first (rate-bounded). */
export async function saleFeesView(services: Services, merchant: MerchantRow) {
  const latest = await latestInvoiceOf(services.db, merchant.merchant_id);
  const now = services.now().getTime();
  if (latest && watched(services, latest) && (looked.get(latest.invoice_id) ?? 0) < now - LOOK_SCAN_MS) {
    looked.set(latest.invoice_id, now);
    await scanQuietly(services, latest.invoice_id);
  }
  const { fees, money } = services.config;
  const account = await feeAccount(services.db, merchant.merchant_id);
  const owed = await saleFeesOwed(services, merchant.merchant_id);
  const refusing = (await creditRefusal(services, merchant.merchant_id, 1n)) !== null;
  const invoice = await invoiceView(services, await latestInvoiceOf(services.db, merchant.merchant_id), merchant);
  return {
    fee_bps: fees.sale_bps,
    fee_min: toUsdcNumber(money.saleMin),
    credit_limit: toUsdcNumber(money.saleCredit),
    accrued: toUsdcNumber(account.accrued),
    paid: toUsdcNumber(account.paid),
    owed: toUsdcNumber(owed),
    sales_refused: refusing,
    invoice,
    next_step: owed === 0n ? null : invoice?.solana_pay_url ? `pay ${invoice.solana_pay_url} from any Solana wallet` : 'agent-wallet merchant fees --invoice',
  };
}

/**
 * The merchant's invoice for what it owes now: its open invoice asks for the current amount (its
 * reference key stays, so a payment already sent to it still counts), or a new one is opened.
 */
export async function invoiceSaleFees(services: Services, merchant: MerchantRow) {
  const open = await openInvoiceOf(services.db, merchant.merchant_id);
  if (open) await scanQuietly(services, open.invoice_id);
  const now = services.now().getTime();
  await services.db
    .transaction(async () => {
      const owed = await saleFeesOwed(services, merchant.merchant_id);
      const current = await openInvoiceOf(services.db, merchant.merchant_id);
      if (owed === 0n) {
        if (current) return;
        throw new AppError('INVALID_STATUS', 'No sale fees are owed.', { howToFix: 'Nothing to pay: sale fees accrue as your x402 sales settle; see agent-wallet merchant fees.' });
      }
      const received = current ? (await invoicePayments(services.db, current.invoice_id)).reduce((sum, p) => sum + p.amount, 0n) : 0n;
      if (current) await setInvoiceAmount(services.db, current.invoice_id, received + owed, now);
      else await insertInvoice(services.db, { invoice_id: newId('saleFeeInvoice'), merchant_id: merchant.merchant_id, amount: owed, reference_key: newReferenceKey(), now });
    });
  return saleFeesView(services, merchant);
}

/**
 * A scan for a merchant's look, waited for at most LOOK_WAIT_MS: a chain that is slow or does not
 * answer leaves the answer to the ledger (the scan goes on, and the job looks again).
 */
async function scanQuietly(services: Services, invoiceId: string): Promise<void> {
  const scan = scanInvoice(services, invoiceId).catch((err: Error) => services.log.debug('sale-fee invoice scan failed', { invoice_id: invoiceId, error: err.message }));
  let timer: Timer | undefined;
  await Promise.race([scan, new Promise<void>((resolve) => (timer = setTimeout(resolve, LOOK_WAIT_MS)))]);
  clearTimeout(timer);
}

/**
 * Judges the transactions carrying the invoice's reference key, oldest first, each once: a landed
 * one that credits the treasury's USDC token account credits the merchant by what it credited.
 * The cursor moves only past what was judged. Runs in the background of the RPC budget.
 */
export function scanInvoice(services: Services, invoiceId: string): Promise<void> {
  return inBackground(async () => {
    if (scanning.has(invoiceId)) return;
    scanning.add(invoiceId);
    try {
      const invoice = await getInvoice(services.db, invoiceId);
      if (!invoice) return;
      const mint = services.config.usdcMint;
      const treasuryAccount = await usdcAta(treasuryOf(services), mint as Address);
      const sigs = await signaturesSince(services.chain, invoice.reference_key as Address, invoice.scan_cursor ?? undefined);
      for (const s of [...sigs].reverse()) {
        const transfers = s.err === null ? await services.chain.getTokenTransfersOf(s.signature) : null;
        if (s.err === null && !transfers) break; // not visible yet: judged on a later pass
        const credited = transfers?.err === null ? transfers.deltas.find((d) => d.account === treasuryAccount && d.mint === mint && d.delta > 0n) : undefined;
        const now = services.now().getTime();
        // The payment (if any) and the cursor past it, in one commit.
        await services.db
          .transaction(async () => {
            await setInvoiceCursor(services.db, invoiceId, s.signature, now);
            if (!credited) return;
            const row = (await getInvoice(services.db, invoiceId))!;
            const payer = transfers!.deltas.find((d) => d.mint === mint && d.delta < 0n)?.owner ?? null;
            if (!(await recordFeePayment(services.db, { signature: s.signature, invoice: row, amount: credited.delta, payer, now }))) return;
            await recordMerchantEvent(
              services.db,
              row.merchant_id,
              'sale_fees.paid',
              { invoice_id: row.invoice_id, amount: toUsdcNumber(credited.delta), signature: s.signature, payer, owed: toUsdcNumber(await saleFeesOwed(services, row.merchant_id)) },
              now,
            );
          });
      }
    } finally {
      scanning.delete(invoiceId);
    }
  });
}

const watched = (services: Services, i: InvoiceRow) => i.status === 'open' || Number(i.paid_at) >= services.now().getTime() - LATE_WINDOW_MS;

/**
 * The job's pass: every open invoice's reference key is looked at. A paid one is looked at only on
 * its merchant's look (for LATE_WINDOW_MS), so a day of paid invoices costs the RPC plan nothing.
 */
export async function scanInvoices(services: Services): Promise<number> {
  const invoices = await openInvoices(services.db, 256);
  for (const invoice of invoices) await scanInvoice(services, invoice.invoice_id);
  if (looked.size > 10_000) looked.clear();
  return invoices.length;
}
