/**
 * Building the exact message a confirmable transaction is signed over. A message is built once
 * and reused while its blockhash is valid; a new one is built only when the stored one was never
 * signed and its blockhash expired. Signed messages are never replaced here (DESIGN §5).
 * The compute-unit price is the current estimate; after a signed message expired unlanded (the
 * row keeps its price but lost its message) the next one offers an escalated price.
 */
import type { Address } from '@solana/kit';
import { AppError } from '../errors.ts';
import { getTx, setTxMessage, type TxRow } from '../db/transactions.ts';
import { referenceKeysOf } from '../db/paylinks.ts';
import { escalatedFee } from '../domain/priority-fee.ts';
import { usdcAta } from '../solana/ata.ts';
import { buildUsdcTransfer } from '../solana/transfer.ts';
import { currentPriorityFee } from './priority-fee.ts';
import { planRecipientAccount } from './recipient-account.ts';
import type { Services } from '../services.ts';

/** The operator's fee recipient. */
export function treasuryOf(services: Services): Address {
  return (services.config.solana.treasury || services.feePayer.address) as Address;
}

/**
 * A transaction's price never goes down: a first message takes the estimate; one replacing an
 * unsigned expired message keeps at least that message's price; one after a signed message expired
 * unlanded (its message was cleared, its price kept) escalates from that price.
 */
function priceFor(tx: TxRow, estimate: bigint, cap: bigint): bigint {
  const previous = tx.priority_fee;
  if (previous === null) return estimate;
  if (tx.message === null) return escalatedFee(previous, estimate, cap);
  return previous > estimate ? previous : estimate;
}

/**
 * Returns the transaction with a current message, building one when needed. `withNew` runs inside
 * the transaction that stores a new message, on the row as stored (one commit, not two).
 */
export async function ensureMessage(services: Services, walletAddress: string, tx: TxRow, withNew?: (stored: TxRow) => Promise<void>): Promise<TxRow> {
  if (tx.signed_tx) return tx;
  if (tx.message && tx.last_valid_block_height !== null) {
    const height = await services.chain.getBlockHeight();
    if (height <= tx.last_valid_block_height) return tx;
  }
  if (!tx.to_address) throw new AppError('INTERNAL_ERROR', 'The transaction has no recipient address.');
  // Only the payment holding the recipient's setup fee creates its account (its fee is dropped when the account exists).
  const plan = await planRecipientAccount(services, tx);
  const built = await buildMessage(services, walletAddress, {
    transactionId: tx.transaction_id,
    toAddress: tx.to_address,
    amount: tx.amount,
    fee: plan.tx.fee + plan.tx.setup_fee,
    createAccount: plan.createAccount,
    // A paylink payment carries the paylink's Solana Pay reference key, as a Solana Pay wallet's would.
    references: await referenceKeysOf(services.db, tx.payment_request_id),
    reference: tx.reference,
    price: (estimate) => priceFor(tx, estimate, BigInt(services.config.solana.priority_fee_cap_micro_lamports)),
  });
  await services.db
    .transaction(async () => {
      await storeMessage(services, tx.transaction_id, built);
      if (withNew) await withNew((await getTx(services.db, tx.transaction_id))!);
    });
  const fresh = await getTx(services.db, tx.transaction_id);
  if (!fresh) throw new AppError('NOT_FOUND', 'Transaction not found.');
  return fresh;
}

/** What a transfer's message is made of, as a transaction row holds it (or will: the fast path builds before the row exists). */
export interface MessageInput {
  transactionId: string;
  toAddress: string;
  amount: bigint;
  /** Platform fee plus the setup fee when this message creates the recipient's account. */
  fee: bigint;
  createAccount: boolean;
  references: string[];
  reference: string | null;
  /** The compute-unit price from the current estimate. */
  price: (estimate: bigint) => bigint;
}

export interface BuiltMessage {
  messageBytes: Uint8Array;
  lastValidBlockHeight: bigint;
  price: bigint;
}

/** Builds the exact transfer message (a fresh blockhash and priority fee from the chain). */
export async function buildMessage(services: Services, walletAddress: string, m: MessageInput): Promise<BuiltMessage> {
  const mint = services.config.usdcMint as Address;
  const treasury = treasuryOf(services);
  const writable = await Promise.all([usdcAta(walletAddress as Address, mint), usdcAta(m.toAddress as Address, mint), usdcAta(treasury, mint)]);
  const [blockhash, estimate] = await Promise.all([
    services.chain.getLatestBlockhash(),
    // Not the fee payer: every transaction of ours writes it, so its recent fees are our own prices echoed back.
    currentPriorityFee(services, writable),
  ]);
  const price = m.price(estimate);
  const built = await buildUsdcTransfer({
    wallet: walletAddress as Address,
    mint,
    recipientOwner: m.toAddress as Address,
    amount: m.amount,
    fee: m.fee,
    treasuryOwner: treasury,
    feePayer: services.feePayer.address,
    createRecipientAta: m.createAccount,
    references: m.references as Address[],
    // The transaction id in the memo makes every message unique: two equal payments built in one
    // slot would otherwise be the same bytes, and the fee payer's (deterministic) signature — the
    // Solana transaction id — would collide, so the second could never land.
    memo: m.reference ? `${m.reference} ${m.transactionId}` : m.transactionId,
    computeUnitPrice: price,
    blockhash,
  });
  return { messageBytes: built.messageBytes, lastValidBlockHeight: built.lastValidBlockHeight, price };
}

/** Stores a built message on its (unsigned) transaction; call inside the caller's transaction. */
export async function storeMessage(services: Services, transactionId: string, built: BuiltMessage): Promise<void> {
  await setTxMessage(services.db, transactionId, built.messageBytes, built.lastValidBlockHeight, services.now().getTime(), built.price);
}
