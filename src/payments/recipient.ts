/** Resolves what an agent wrote in `to` into the account that will receive the money. */
import type { Store } from '../db/store.ts';
import { getAddressEncoder, isAddress, type Address } from '@solana/kit';
import { AppError } from '../errors.ts';
import { findByUsername, findMerchantByPayoutAddress, findWalletByAddress } from '../db/directory.ts';
import type { TxRow } from '../db/transactions.ts';
import { getWallet, type WalletRow } from '../db/wallets.ts';
import { getMerchant } from '../db/merchants.ts';
import type { Category } from '../domain/guardrails.ts';

export interface Recipient {
  kind: 'wallet' | 'merchant' | 'address';
  /** What the payer named: a username, or the address. */
  label: string;
  username?: string;
  name?: string;
  walletId?: string;
  merchantId?: string;
  /** The owner address that receives the USDC (its associated token account). */
  address: Address;
  category: Category;
}

function invalidRecipient(message: string, howToFix: string): AppError {
  return new AppError('INVALID_RECIPIENT', message, { howToFix });
}

/** True for a base58 string that decodes to exactly 32 bytes. */
export function isSolanaAddress(value: string): boolean {
  if (!isAddress(value)) return false;
  return getAddressEncoder().encode(value as Address).length === 32;
}

/** Resolves `to` for a payment by `payer`; unknown users, self-payment and malformed addresses are INVALID_RECIPIENT. */
export async function resolveRecipient(db: Store, payer: WalletRow, to: string): Promise<Recipient> {
  const raw = to.trim();
  const byName = /^[a-z0-9-]{1,64}$/i.test(raw) && raw.length < 32 ? await findByUsername(db, raw.toLowerCase()) : null;
  let r: Recipient;
  if (byName) {
    r = {
      kind: byName.kind,
      label: byName.username,
      username: byName.username,
      name: byName.name,
      walletId: byName.kind === 'wallet' ? byName.id : undefined,
      merchantId: byName.kind === 'merchant' ? byName.id : undefined,
      address: byName.address as Address,
      category: byName.kind === 'merchant' ? 'merchant' : 'wallet',
    };
  } else if (raw.length >= 32 && isSolanaAddress(raw)) {
    // An address of one of our wallets or merchants is that wallet or merchant, so guard rails
    // naming its username (blocked_recipients, the merchant category) apply however it is paid.
    const ours = await findWalletByAddress(db, raw);
    const merchant = ours ? null : await findMerchantByPayoutAddress(db, raw);
    r = ours
      ? { kind: 'wallet', label: raw, username: ours.username, name: ours.name, walletId: ours.id, address: raw as Address, category: 'wallet' }
      : merchant
        ? { kind: 'merchant', label: raw, username: merchant.username, name: merchant.name, merchantId: merchant.id, address: raw as Address, category: 'merchant' }
        : { kind: 'address', label: raw, address: raw as Address, category: 'wallet' };
  } else if (raw.length >= 32) {
    throw invalidRecipient(`"${raw.slice(0, 64)}" is not a valid Solana address.`, 'Check the address (base58, 32 bytes) or pay a username.');
  } else {
    throw invalidRecipient(`No wallet or merchant is called "${raw.slice(0, 64)}".`, 'Check the username with lookup.');
  }
  if (r.address === payer.address) throw invalidRecipient('A wallet cannot pay itself.', 'Pay another wallet, merchant or address.');
  return r;
}

/**
 * The recipient as the rails saw it when the intent was made, for the re-checks: a payment's
 * address is resolved again like resolveRecipient does (one of our wallets or merchants → its
 * username and category), so a rule naming that username applies however the payment was
 * addressed. Withdrawals and x402 purchases were decided by address (and host) only.
 */
export async function railsRecipientOf(
  db: Store,
  tx: Pick<TxRow, 'type' | 'category' | 'to_address' | 'to_wallet_id' | 'to_merchant_id'>,
): Promise<{ category: Category; username?: string; address: Address }> {
  const address = (tx.to_address ?? '') as Address;
  const stored = (tx.category ?? 'wallet') as Category;
  if (tx.type !== 'payment' || address === '') return { category: stored, address };
  // A paylink payment was decided under the paylink category, whoever its payee is.
  const as = (category: Category): Category => (stored === 'paylink' ? 'paylink' : category);
  // Paid by username: the wallet or merchant the intent named.
  if (tx.to_wallet_id) return { category: as('wallet'), username: (await getWallet(db, tx.to_wallet_id))?.username, address };
  if (tx.to_merchant_id) return { category: as('merchant'), username: (await getMerchant(db, tx.to_merchant_id))?.username, address };
  const wallet = await findWalletByAddress(db, address);
  if (wallet) return { category: as('wallet'), username: wallet.username, address };
  const merchant = await findMerchantByPayoutAddress(db, address);
  if (merchant) return { category: as('merchant'), username: merchant.username, address };
  return { category: stored, address };
}
