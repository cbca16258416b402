/**
 * Signed receipts (DESIGN §9.1): a completed payment, paylink payment, withdrawal, x402 purchase
 * or x402 sale as a JWS (compact, EdDSA) signed with the daemon's log key, so any JOSE library
 * verifies it against the published JWKS (/.well-known/agent-wallet/log-key) without trusting us
 * further. Amounts are decimal USDC strings and micro-USDC integers as strings (never floats).
 * The slot is the chain's, looked up when the receipt is asked for (null in a webhook's receipt,
 * written before the chain is asked).
 */
import { formatUsdc } from '../domain/money.ts';
import type { TxRow } from '../db/transactions.ts';
import { saleReference, type SaleRow } from '../db/x402-sales.ts';
import type { PaylinkRow } from '../db/paylinks.ts';
import type { Services } from '../services.ts';
import { logKeyOf, signWithLogKey } from './log-key.ts';

export const RECEIPT_TYPE = 'agent-wallet-receipt+jwt';

export interface ReceiptParty {
  wallet_id?: string | null;
  merchant_id?: string | null;
  username?: string | null;
  address: string | null;
}

export interface ReceiptClaims {
  iss: string;
  sub: string;
  iat: number;
  kind: string;
  status: 'completed';
  amount: string;
  amount_micro: string;
  fee: string;
  fee_micro: string;
  currency: 'USDC';
  mint: string;
  network: string;
  from: ReceiptParty;
  to: ReceiptParty;
  reference: string | null;
  memo: string | null;
  signature: string | null;
  slot: number | null;
  completed_at: string | null;
}

const b64url = (v: Uint8Array | string) => Buffer.from(v).toString('base64url');

/** The compact JWS of `claims`, signed with the log key. */
export function signReceipt(services: Services, claims: ReceiptClaims): string {
  const header = b64url(JSON.stringify({ alg: 'EdDSA', kid: logKeyOf(services.masterKey).kid, typ: RECEIPT_TYPE }));
  const payload = b64url(JSON.stringify(claims));
  const signature = signWithLogKey(services.masterKey, new TextEncoder().encode(`${header}.${payload}`));
  return `${header}.${payload}.${b64url(signature)}`;
}

function base(services: Services, p: { id: string; kind: string; amount: bigint; fee: bigint; from: ReceiptParty; to: ReceiptParty; reference: string | null; memo: string | null; signature: string | null; slot: number | null; completedAt: number | null }): ReceiptClaims {
  return {
    iss: services.publicUrl(),
    sub: p.id,
    iat: Math.floor(services.now().getTime() / 1000),
    kind: p.kind,
    status: 'completed',
    amount: formatUsdc(p.amount),
    amount_micro: p.amount.toString(),
    fee: formatUsdc(p.fee),
    fee_micro: p.fee.toString(),
    currency: 'USDC',
    mint: services.config.usdcMint,
    network: services.config.solana.network,
    from: p.from,
    to: p.to,
    reference: p.reference,
    memo: p.memo,
    signature: p.signature,
    slot: p.slot,
    completed_at: p.completedAt === null ? null : new Date(p.completedAt).toISOString(),
  };
}

/** The chain's slot for `signature`, or null when it cannot be asked now. */
export async function slotOf(services: Services, signature: string | null): Promise<number | null> {
  if (!signature) return null;
  try {
    const [status] = await services.chain.getSignatureStatuses([signature]);
    return status ? Number(status.slot) : null;
  } catch {
    return null;
  }
}

/** The claims of a completed ledger transaction of `wallet`. */
export function transactionClaims(services: Services, tx: TxRow, wallet: { wallet_id: string; username: string | null; address: string }, slot: number | null): ReceiptClaims {
  const me: ReceiptParty = { wallet_id: wallet.wallet_id, username: wallet.username, address: wallet.address };
  const other: ReceiptParty = { wallet_id: tx.to_wallet_id, merchant_id: tx.to_merchant_id, username: tx.counterparty, address: tx.to_address };
  const out = tx.direction === 'out';
  return base(services, {
    id: tx.transaction_id,
    kind: tx.type,
    amount: tx.amount,
    fee: out ? tx.fee + tx.setup_fee : 0n,
    from: out ? me : { username: tx.counterparty, address: null },
    to: out ? other : me,
    reference: tx.reference,
    memo: tx.note,
    signature: tx.signature,
    slot,
    completedAt: tx.completed_at === null ? null : Number(tx.completed_at),
  });
}

/** The claims of an x402 sale settled by our facilitator. */
export function saleClaims(services: Services, sale: SaleRow, seller: ReceiptParty, slot: number | null): ReceiptClaims {
  return base(services, {
    id: sale.sale_id,
    kind: 'x402_sale',
    amount: sale.amount,
    fee: 0n,
    from: { address: sale.payer },
    to: seller,
    reference: saleReference(sale.payment_id),
    memo: sale.resource,
    signature: sale.signature,
    slot,
    completedAt: sale.completed_at === null ? null : Number(sale.completed_at),
  });
}

/** The claims of a merchant paylink paid from a Solana Pay wallet (no ledger row of ours holds it). */
export function paylinkClaims(services: Services, link: PaylinkRow, payee: ReceiptParty, slot: number | null): ReceiptClaims {
  return base(services, {
    id: link.request_id,
    kind: 'paylink_payment',
    amount: link.paid_amount ?? 0n,
    fee: 0n,
    from: { address: link.payer },
    to: payee,
    reference: link.reference,
    memo: link.description,
    signature: link.signature,
    slot,
    completedAt: link.paid_at === null ? null : Number(link.paid_at),
  });
}
