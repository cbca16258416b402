/**
 * Who a paylink pays (SPEC: "an agent or merchant can create payment requests"): one of our
 * wallets (its address) or a merchant (its payout_address). Everything paylink-related that
 * differs between the two is here: the payee's public face and where its events go.
 */
import type { Store } from '../db/store.ts';
import { appendEvent } from '../db/events.ts';
import { getMerchant, type MerchantRow } from '../db/merchants.ts';
import { getOwner } from '../db/owners.ts';
import { payeeKeyOf, type PayeeKey, type PaylinkRow } from '../db/paylinks.ts';
import { getWallet, type WalletRow } from '../db/wallets.ts';
import { recordMerchantEvent } from '../webhooks/outbox.ts';

export interface Payee {
  key: PayeeKey;
  name: string;
  username: string;
  /** The owner address whose USDC token account receives the payments. */
  address: string;
}

export function walletPayee(wallet: WalletRow): Payee {
  return { key: { kind: 'wallet', id: wallet.wallet_id }, name: wallet.name, username: wallet.username, address: wallet.address };
}

export function merchantPayee(merchant: MerchantRow): Payee {
  return { key: { kind: 'merchant', id: merchant.merchant_id }, name: merchant.name, username: merchant.username, address: merchant.payout_address };
}

/** The payee of a paylink, or null when its wallet or merchant is gone. */
export async function payeeOfRow(db: Store, row: PaylinkRow): Promise<Payee | null> {
  const key = payeeKeyOf(row);
  if (key.kind === 'merchant') {
    const merchant = await getMerchant(db, key.id);
    return merchant ? merchantPayee(merchant) : null;
  }
  const wallet = await getWallet(db, key.id);
  return wallet ? walletPayee(wallet) : null;
}

/** The e-mail a paylink may show: a wallet owner's, and only with reveal_owner (merchants have no owner). */
export async function revealedOwnerEmail(db: Store, row: PaylinkRow): Promise<string | null> {
  if (row.reveal_owner !== 1n || row.wallet_id === null) return null;
  const ownerId = (await getWallet(db, row.wallet_id))?.owner_id;
  return ownerId ? ((await getOwner(db, ownerId))?.email ?? null) : null;
}

/** Appends a paylink event to its payee's feed (a merchant's webhook gets the types webhooks carry); call inside the write transaction. */
export async function appendPayeeEvent(db: Store, payee: PayeeKey, type: string, data: Record<string, unknown>, now: number): Promise<void> {
  if (payee.kind === 'wallet') await appendEvent(db, { walletId: payee.id, type, data, now });
  else await recordMerchantEvent(db, payee.id, type, data, now);
}
