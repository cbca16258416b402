/**
 * Who creates a recipient's USDC token account, and who pays for it (DESIGN §5: the setup fee is
 * charged for accounts actually created).
 *
 * - One of our claimed wallets: the operator, at claim (src/actions/claim.ts) or, for a wallet
 *   claimed before that, just before a payment's message is built. Its payers never pay a setup fee.
 * - Anyone else: the one in-flight payment that carries the setup fee (`setupFeeHolder`). Only its
 *   message has the create instruction and the fee; concurrent payments to the same recipient are
 *   quoted without it and, at confirm, wait until the account exists. A holder whose recipient's
 *   account exists by the time its message is built is released of its fee.
 */
import type { Address } from '@solana/kit';
import { AppError } from '../errors.ts';
import { dropUnsignedMessage, getTx, releaseSetupFee, setupFeeCreator, setupFeeHolder, type InFlightTx, type TxRow } from '../db/transactions.ts';
import { getWalletByAddress } from '../db/wallets.ts';
import { ensurePayeeReady } from '../earning/payee-ready.ts';
import type { Services } from '../services.ts';

/** How long confirm waits for another payment to create the recipient's account. */
export const ACCOUNT_WAIT_MS = 20_000;
const POLL_MS = 250;

/** Our claimed wallets' token accounts known to exist (never closed: see recipientAccountExists). */
const knownAccounts = new Set<string>();

/** True when `owner`'s token account for `mint` exists (remembered once seen for our own wallets). */
export async function recipientAccountExists(services: Services, owner: Address, mint: Address): Promise<boolean> {
  const key = `${mint}:${owner}`;
  if (knownAccounts.has(key)) return true;
  const exists = await services.chain.tokenAccountExists(owner, mint);
  // Only our own wallets' accounts are remembered: closing one needs the wallet's signature, and we
  // never build that message. Anyone else may close theirs at any time (and be paid again later).
  if (exists && (await operatorCreatesAccount(services, owner))) {
    if (knownAccounts.size > 100_000) knownAccounts.clear();
    knownAccounts.add(key);
  }
  return exists;
}

/** True for one of our claimed wallets: the operator creates its token account, never a payer. */
export async function operatorCreatesAccount(services: Services, owner: string): Promise<boolean> {
  return (await getWalletByAddress(services.db, owner))?.status === 'claimed';
}

function waitingError(tx: TxRow, holder: InFlightTx | null): AppError {
  if (!holder) {
    return new AppError('INVALID_STATUS', "The recipient has no USDC token account, and the payment that was to create it (and carry its setup fee) ended without doing so; this payment was quoted without the setup fee and cannot create it.", {
      howToFix: 'Cancel this payment with cancel_payment and pay again: the new quote includes the account setup fee.',
      details: { to_address: tx.to_address },
    });
  }
  const own = holder.wallet_id === tx.wallet_id;
  return new AppError('INVALID_STATUS', `The recipient's USDC token account is being created by ${own ? `your payment ${holder.transaction_id}` : "another wallet's payment"} (${holder.status}); this payment is built once the account exists.`, {
    howToFix: own
      ? `Confirm, sign and submit ${holder.transaction_id} first (or cancel it), then confirm this payment again.`
      : holder.status === 'awaiting_approval'
        ? "That payment waits for its owner's approval: confirm this one again later, or cancel it."
        : 'Confirm this payment again in a few seconds.',
    headers: { 'Retry-After': '5' },
    details: { to_address: tx.to_address, waiting_for: own ? { transaction_id: holder.transaction_id, status: holder.status } : { status: holder.status } },
  });
}

/**
 * Decides, just before `tx`'s message is built, whether it creates the recipient's token account,
 * and returns the row to build from (its setup fee released when the account already exists).
 * Throws INVALID_STATUS when the account is still missing and another payment is to create it.
 */
export async function planRecipientAccount(services: Services, tx: TxRow): Promise<{ tx: TxRow; createAccount: boolean }> {
  const owner = tx.to_address as Address;
  const mint = services.config.usdcMint as Address;
  // Unless a payment signed while the wallet was unclaimed is creating it (its fee must not pay for nothing).
  // A payment needs only the token account (the system account matters to Solana Pay wallets, set up at claim).
  if ((await operatorCreatesAccount(services, owner)) && !(await setupFeeHolder(services.db, owner, tx.transaction_id))?.signed_tx && !(await recipientAccountExists(services, owner, mint))) {
    await ensurePayeeReady(services, owner);
  }
  const deadline = Date.now() + ACCOUNT_WAIT_MS;
  for (let first = true; ; first = false) {
    // A payment carrying the fee waits only for another's signed message that creates the account; one
    // quoted without it waits for the payment that holds the fee.
    const holder = tx.setup_fee > 0n ? await setupFeeCreator(services.db, owner, tx.transaction_id, Number(tx.created_at)) : await setupFeeHolder(services.db, owner, tx.transaction_id);
    // The account can appear only through a holder's signed bytes (or outside the service): read the chain then.
    if ((first || !holder || holder.signed_tx) && (await recipientAccountExists(services, owner, mint))) {
      if (tx.setup_fee === 0n) return { tx, createAccount: false };
      await services.db.transaction(async () => await releaseSetupFee(services.db, tx.transaction_id, services.now().getTime()));
      return { tx: (await getTx(services.db, tx.transaction_id)) ?? tx, createAccount: false };
    }
    if (tx.setup_fee > 0n && !holder) return { tx, createAccount: true };
    if (!holder || holder.status === 'awaiting_approval' || Date.now() >= deadline) throw waitingError(tx, holder);
    await Bun.sleep(POLL_MS);
  }
}

/**
 * Inside the signing transaction: a message that creates the recipient's account (and charges its
 * setup fee) is not signed while another payment's signed message creates it, or after one landed
 * since this payment was made. Its message is dropped, so the next confirm waits for that account
 * and builds this payment without the create and its fee (the fee is released).
 */
export async function accountCreatedElsewhere(services: Services, tx: TxRow): Promise<AppError | null> {
  if (tx.setup_fee === 0n || !tx.to_address) return null;
  const creator = await setupFeeCreator(services.db, tx.to_address, tx.transaction_id, Number(tx.created_at));
  if (!creator) return null;
  await dropUnsignedMessage(services.db, tx.transaction_id, services.now().getTime());
  return new AppError('INVALID_STATUS', "Another payment is creating (or has created) the recipient's USDC token account and carries its setup fee; this message would have charged it again, so it was not signed.", {
    howToFix: 'Confirm this payment again: it is rebuilt without the account setup fee once that account exists.',
    headers: { 'Retry-After': '5' },
    details: { to_address: tx.to_address, rebuild: true },
  });
}
