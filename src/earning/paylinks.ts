/**
 * Paylinks (DESIGN §8): creating them, what the payee, the public checkout and pay_status see,
 * cancelling and invitations. Paying them is in agent-pay.ts (agents) and scan.ts (Solana Pay).
 */
import type { Address } from '@solana/kit';
import { AppError, invalid } from '../errors.ts';
import { INVITATIONS_PER_HOUR, INVITATIONS_PER_WALLET_PER_HOUR } from '../contract/earning.ts';
import { newId } from '../contract/ids.ts';
import { findByUsername } from '../db/directory.ts';
import {
  cancelPaylink,
  getPaylink,
  insertInvitation,
  insertPaylink,
  invitationsSince,
  payeeInvitationsSince,
  payeeKeyOf,
  listRejections,
  type PaylinkRow,
  type PaylinkStatus,
} from '../db/paylinks.ts';
import { appendEvent } from '../db/events.ts';
import { checkEmail } from '../domain/identity.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { queueMail } from '../mail/outbox.ts';
import { ChainUnavailableError } from '../solana/errors.ts';
import type { Services } from '../services.ts';
import { paylinkInvitationMail } from './mail.ts';
import { amountParam } from '../params.ts';
import { ensurePayeeReady } from './payee-ready.ts';
import { appendPayeeEvent, payeeOfRow, revealedOwnerEmail, type Payee } from './payee.ts';
import {
  DEFAULT_EXPIRES_IN_SECONDS,
  itemsFromJson,
  itemsToJson,
  newReferenceKey,
  newShortCode,
  parseExpiresIn,
  priceItems,
  REJECTION_TEXT,
  solanaPayUrl,
  type ItemInput,
} from './rules.ts';

const iso = (ms: bigint | number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export const paylinkNotFound = () =>
  new AppError('NOT_FOUND', 'Payment request not found.', { howToFix: 'Check the request_id (req_…); list yours with list_payment_requests.' });

/** The status as payers should see it: an open paylink past its expiry is expired even before the job moves it. */
export function effectiveStatus(row: PaylinkRow, nowMs: number): PaylinkStatus {
  return row.status === 'open' && nowMs >= Number(row.expires_at) ? 'expired' : row.status;
}

/** The checkout page of a paylink. */
export function checkoutUrl(services: Services, row: Pick<PaylinkRow, 'short_code'>): string {
  return `${services.publicUrl()}/pay/${row.short_code}`;
}

/** The payee of a paylink (a wallet or a merchant); NOT_FOUND when it is gone. */
export async function payeeOf(services: Services, row: PaylinkRow): Promise<Payee> {
  const payee = await payeeOfRow(services.db, row);
  if (!payee) throw paylinkNotFound();
  return payee;
}

/** The Solana Pay transfer request of a paylink: payee address, amount, USDC, its reference key, the payee's name and the description. */
export function paylinkSolanaPayUrl(services: Services, row: PaylinkRow, payee: { name: string; address: string }): string {
  return solanaPayUrl({ recipient: payee.address, amount: row.amount, mint: services.config.usdcMint, reference: row.reference_key, label: payee.name, message: row.description });
}

function itemsView(row: PaylinkRow) {
  return itemsFromJson(row.items).map((i) => ({
    description: i.description,
    price: toUsdcNumber(i.price),
    quantity: i.quantity,
    total: toUsdcNumber(i.price * BigInt(i.quantity)),
  }));
}

/** The payee's (agent's or merchant's) view of its paylink. */
export async function paylinkView(services: Services, row: PaylinkRow) {
  const payee = await payeeOf(services, row);
  const status = effectiveStatus(row, services.now().getTime());
  return {
    request_id: row.request_id,
    short_code: row.short_code,
    url: checkoutUrl(services, row),
    solana_pay_url: paylinkSolanaPayUrl(services, row, payee),
    description: row.description,
    amount: row.amount === null ? null : toUsdcNumber(row.amount),
    currency: 'USDC',
    items: itemsView(row),
    reference: row.reference,
    reference_key: row.reference_key,
    reveal_owner: row.reveal_owner === 1n,
    pay_to: payee.address,
    status,
    paid_amount: row.paid_amount === null ? null : toUsdcNumber(row.paid_amount),
    payer: row.payer,
    paid_via: row.paid_via,
    signature: row.signature,
    transaction_id: row.transaction_id,
    rejected_payments: (await listRejections(services.db, row.request_id)).map((r) => ({
      signature: r.signature,
      reason: r.reason,
      explanation: REJECTION_TEXT[r.reason],
      amount: r.amount === null || r.mint !== services.config.usdcMint ? null : toUsdcNumber(r.amount),
      raw_amount: r.amount === null ? null : r.amount.toString(),
      mint: r.mint,
      payer: r.payer,
      seen_at: iso(r.created_at),
    })),
    created_at: iso(row.created_at),
    expires_at: iso(row.expires_at),
    paid_at: iso(row.paid_at),
    next_step:
      status === 'open'
        ? 'share url (a checkout page with a Solana Pay QR code) or send it with send_paylink_invitation; agents pay it with pay {payment_request_id}'
        : null,
  };
}

async function ownerEmailField(services: Services, row: PaylinkRow): Promise<{ owner_email?: string }> {
  const email = await revealedOwnerEmail(services.db, row);
  return email ? { owner_email: email } : {};
}

/** What anyone with the short code sees (public `pay`): no payee reference, payer or ledger ids. */
export async function publicPaylinkView(services: Services, row: PaylinkRow) {
  const payee = await payeeOf(services, row);
  const status = effectiveStatus(row, services.now().getTime());
  return {
    short_code: row.short_code,
    request_id: row.request_id,
    description: row.description,
    amount: row.amount === null ? null : toUsdcNumber(row.amount),
    currency: 'USDC',
    items: itemsView(row),
    payee: { name: payee.name, username: payee.username, kind: payee.key.kind, ...(await ownerEmailField(services, row)) },
    status,
    solana_pay_url: status === 'open' ? paylinkSolanaPayUrl(services, row, payee) : null,
    pay_to: payee.address,
    usdc_mint: services.config.usdcMint,
    reference_key: row.reference_key,
    network: services.config.solana.network,
    url: checkoutUrl(services, row),
    expires_at: iso(row.expires_at),
    paid_at: iso(row.paid_at),
    agents: `agents pay with the bot action pay {payment_request_id: "${row.request_id}"}`,
  };
}

/** Public `pay_status`: whether it is paid. */
export function payStatusView(services: Services, row: PaylinkRow) {
  const status = effectiveStatus(row, services.now().getTime());
  return { short_code: row.short_code, status, paid: status === 'paid', paid_at: iso(row.paid_at), signature: status === 'paid' ? row.signature : null, expires_at: iso(row.expires_at) };
}

export interface CreatePaylinkInput {
  description: string;
  amount?: number | string;
  items?: ItemInput[];
  reference?: string;
  expires_in?: number | string;
  reveal_owner?: boolean;
}

/**
 * Creates an open paylink for `payee`. Items set the amount (a given amount must equal their
 * sum); neither makes an open-amount paylink. Before anything is stored the payee is made payable
 * by Solana Pay wallets (account + USDC token account, paid by the fee payer). `inTransaction`
 * runs first in the write transaction, for the caller's own checks (a merchant's reference).
 */
export async function createPaylink(services: Services, payee: Payee, p: CreatePaylinkInput, inTransaction?: (reference: string | null, amount: bigint | null) => Promise<void>): Promise<PaylinkRow> {
  const description = p.description.trim();
  if (description === '') throw invalid('/description', 'must not be empty', 'Describe what the payer pays for.');
  let amount: bigint | null = p.amount === undefined ? null : amountParam(services, '/amount', p.amount);
  let items: string | null = null;
  if (p.items) {
    const priced = priceItems(p.items);
    if (!priced.ok) throw invalid(priced.field, priced.reason);
    if (amount !== null && amount !== priced.total) {
      throw invalid('/amount', `is ${toUsdcNumber(amount)} but the items add up to ${toUsdcNumber(priced.total)}`, 'Leave amount out (it is the sum of the items) or correct it.');
    }
    if (priced.total > services.config.money.maxAmount) throw invalid('/items', `add up to more than ${toUsdcNumber(services.config.money.maxAmount)} USDC (limits.max_amount)`);
    amount = priced.total;
    items = itemsToJson(priced.items);
  }
  const expiresIn = p.expires_in === undefined ? { ok: true as const, value: DEFAULT_EXPIRES_IN_SECONDS } : parseExpiresIn(p.expires_in);
  if (!expiresIn.ok) throw invalid('/expires_in', expiresIn.reason);
  const reference = p.reference?.trim() || null;

  try {
    await ensurePayeeReady(services, payee.address as Address);
  } catch (err) {
    if (err instanceof ChainUnavailableError || err instanceof AppError) throw err;
    services.log.error('payee setup failed', { payee: payee.key, error: (err as Error).message });
    throw new AppError('SERVICE_UNAVAILABLE', `The ${payee.key.kind === 'wallet' ? "wallet's address" : 'payout address'} could not be prepared on Solana for paylinks.`, {
      headers: { 'Retry-After': '30' },
      howToFix: 'Retry in a minute; if it persists, the operator should check the fee payer SOL balance.',
    });
  }

  const requestId = newId('paymentRequest');
  const now = services.now().getTime();
  const base = { request_id: requestId, payee: payee.key, description, amount, items, reference, reference_key: newReferenceKey(), reveal_owner: p.reveal_owner ?? false, expires_at: now + expiresIn.value * 1000, now };
  await services.db
    .transaction(async () => {
      await inTransaction?.(reference, amount);
      // 50-bit codes rarely collide; a collision draws again.
      for (let attempt = 0; ; attempt++) {
        if (await insertPaylink(services.db, { ...base, short_code: newShortCode() })) break;
        if (attempt > 5) throw new AppError('INTERNAL_ERROR', 'Could not draw a free short code.');
      }
      await appendPayeeEvent(services.db, payee.key, 'payment_request.created', { request_id: requestId, amount: amount === null ? null : toUsdcNumber(amount), description }, now);
    });
  return (await getPaylink(services.db, requestId))!;
}

/** open → cancelled, with its event; INVALID_STATUS when it is no longer open. */
export async function cancelOwnPaylink(services: Services, row: PaylinkRow): Promise<PaylinkRow> {
  const now = services.now().getTime();
  const done = await services.db
    .transaction(async () => {
      if (effectiveStatus(row, now) !== 'open' || !(await cancelPaylink(services.db, row.request_id, now))) return false;
      await appendPayeeEvent(services.db, payeeKeyOf(row), 'payment_request.cancelled', { request_id: row.request_id }, now);
      return true;
    });
  const fresh = (await getPaylink(services.db, row.request_id))!;
  if (!done) {
    throw new AppError('INVALID_STATUS', `The paylink is ${effectiveStatus(fresh, now)}; only open paylinks can be cancelled.`, { howToFix: 'Nothing to cancel.', details: { status: effectiveStatus(fresh, now) } });
  }
  return fresh;
}

/**
 * Sends an open paylink to an e-mail address (outbox → SMTP or the log) or to a wallet's event
 * feed (`paylink.invitation`, payable with pay {payment_request_id}). At most
 * INVITATIONS_PER_HOUR per paylink and INVITATIONS_PER_WALLET_PER_HOUR per payee (wallet or
 * merchant) per hour (RATE_LIMITED with Retry-After).
 */
export async function sendInvitation(services: Services, sender: Payee, row: PaylinkRow, p: { to_email?: string; to_wallet?: string; message?: string }) {
  if ((p.to_email === undefined) === (p.to_wallet === undefined)) {
    throw invalid(p.to_email === undefined ? '/to_email' : '/to_wallet', 'send exactly one of to_email and to_wallet', 'Send to_email (an e-mail address) or to_wallet (a wallet username).');
  }
  const now = services.now().getTime();
  const status = effectiveStatus(row, now);
  if (status !== 'open') throw new AppError('INVALID_STATUS', `The paylink is ${status}; only open paylinks can be sent.`, { howToFix: 'Create a new paylink.', details: { status } });
  const message = p.message?.trim() || null;
  let target: { channel: 'email'; email: string } | { channel: 'wallet'; walletId: string; username: string };
  if (p.to_email !== undefined) {
    const checked = checkEmail(p.to_email);
    if (!checked.ok) throw invalid('/to_email', checked.reason);
    target = { channel: 'email', email: checked.value };
  } else {
    const entry = await findByUsername(services.db, p.to_wallet!.trim().replace(/^@/, '').toLowerCase());
    if (!entry || entry.kind !== 'wallet') throw new AppError('INVALID_RECIPIENT', `No wallet is called "${p.to_wallet!.slice(0, 64)}".`, { howToFix: 'Check the username with lookup.' });
    if (sender.key.kind === 'wallet' && entry.id === sender.key.id) throw new AppError('INVALID_RECIPIENT', 'A wallet cannot invite itself to pay its own paylink.', { howToFix: 'Send it to another wallet or an e-mail address.' });
    target = { channel: 'wallet', walletId: entry.id, username: entry.username };
  }
  const url = checkoutUrl(services, row);
  const amount = row.amount === null ? null : toUsdcNumber(row.amount);
  await services.db
    .transaction(async () => {
      const windowStart = now - 3_600_000;
      const limits = [
        { used: await invitationsSince(services.db, row.request_id, windowStart), max: INVITATIONS_PER_HOUR, what: 'This paylink was' },
        { used: await payeeInvitationsSince(services.db, sender.key, windowStart), max: INVITATIONS_PER_WALLET_PER_HOUR, what: `This ${sender.key.kind}'s paylinks were` },
      ];
      for (const { used, max, what } of limits) {
        if (used.count < max) continue;
        const retry = Math.max(1, Math.ceil(((used.oldest ?? now) + 3_600_000 - now) / 1000));
        throw new AppError('RATE_LIMITED', `${what} sent ${used.count} times in the last hour (at most ${max}).`, {
          howToFix: `Wait ${retry} s (Retry-After) before sending again.`,
          headers: { 'Retry-After': String(retry) },
        });
      }
      await insertInvitation(services.db, { request_id: row.request_id, channel: target.channel, recipient: target.channel === 'email' ? target.email : target.walletId, now });
      if (target.channel === 'email') {
        await queueMail(services, paylinkInvitationMail(target.email, { name: sender.name, username: sender.username }, { description: row.description, amount, url, expiresAt: new Date(Number(row.expires_at)), message }));
      } else {
        await appendEvent(services.db, {
          walletId: target.walletId,
          type: 'paylink.invitation',
          data: {
            request_id: row.request_id,
            from: sender.username,
            description: row.description,
            amount,
            url,
            message,
            expires_at: iso(row.expires_at),
            next_step: `pay it with pay {payment_request_id: "${row.request_id}"${amount === null ? ', amount' : ''}}`,
          },
          now,
        });
      }
    });
  return {
    request_id: row.request_id,
    channel: target.channel,
    to: target.channel === 'email' ? target.email : target.username,
    url,
    sent_at: iso(now),
    next_step: target.channel === 'email' ? 'the mail is queued for delivery' : `@${target.username} sees a paylink.invitation event`,
  };
}
