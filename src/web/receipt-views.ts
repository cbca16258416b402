/**
 * Signed receipts read out (DESIGN §9.1): the payer's receipt of a paid paylink
 * (`/pay/<short_code>/receipt`) and the receipt on the owner's transaction page
 * (`/dashboard/transactions/<id>`). Each is the signed receipt (a compact JWS, EdDSA with the
 * daemon's log key, the same claims get_receipt gives) read out as facts — amount, parties, Solana
 * transaction, time — with the signed form itself (`…/receipt.jws`) and how to check it against
 * the published key.
 */
import { isSolanaAddress } from '../contract/common.ts';
import { paylinkClaims, signReceipt, slotOf, transactionClaims, type ReceiptClaims, type ReceiptParty } from '../evidence/receipts.ts';
import type { TxRow } from '../db/transactions.ts';
import { logKeyOf } from '../evidence/log-key.ts';
import type { PaylinkRow } from '../db/paylinks.ts';
import { payeeOfRow } from '../earning/payee.ts';
import type { Services } from '../services.ts';
import { html, SafeHtml } from './html.ts';

export interface PayerReceipt {
  short_code: string;
  payee_name: string;
  claims: ReceiptClaims;
  jws: string;
  kid: string;
  key_url: string;
}

/**
 * The receipt of a paid paylink for whoever holds its link, or null while it is not paid. The
 * parties are named by username and address, not by our internal ids; an agent that paid from its
 * wallet is named by its username (the paylink records no address for it).
 */
export async function payerReceipt(services: Services, row: PaylinkRow): Promise<PayerReceipt | null> {
  if (row.status !== 'paid' || row.signature === null) return null;
  const payee = await payeeOfRow(services.db, row);
  if (!payee) return null;
  const to: ReceiptParty = { username: payee.username, address: payee.address };
  const claims = paylinkClaims(services, row, to, await slotOf(services, row.signature));
  if (row.paid_via === 'wallet') claims.from = { username: row.payer, address: null };
  return {
    short_code: row.short_code,
    payee_name: payee.name,
    claims,
    jws: signReceipt(services, claims),
    kid: logKeyOf(services.masterKey).kid,
    key_url: `${services.publicUrl()}/.well-known/agent-wallet/log-key`,
  };
}

/** A party: its name where we know it, @username, and its address (never an address as a @username). */
function party(p: ReceiptParty, name?: string): SafeHtml {
  // A claim's username holds an address where the party is known by address only (a deposit's sender).
  const handle = p.username && !isSolanaAddress(p.username) ? p.username : null;
  const address = p.address ?? (p.username && isSolanaAddress(p.username) ? p.username : null);
  return html`${name ? html`<strong>${name}</strong> ` : ''}${handle ? html`@${handle}` : ''}${address ? html`${handle || name ? html`<br>` : ''}<code class="mono">${address}</code>` : ''}`;
}

/** USDC as the checkout shows it (at least two decimals); the signed claim keeps the exact decimal string. */
const usdc = (decimal: string) => `${Number(decimal).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })} USDC`;

const when = (iso: string | null) => (iso === null ? 'not recorded' : `${iso.slice(0, 19).replace('T', ' ')} UTC`);

/** A signed receipt as a page shows it: its claims, the JWS, the key that signed it and where its .jws is downloaded. */
export interface SignedReceipt {
  claims: ReceiptClaims;
  jws: string;
  kid: string;
  key_url: string;
  /** Where the signed form downloads from (a same-origin path). */
  jws_url: string;
}

/** The facts a receipt attests, read out (`names`: the parties' names where we know them). */
function receiptFacts(r: SignedReceipt, names: { to?: string; from?: string }): SafeHtml {
  const c = r.claims;
  return html`<dl class="facts" id="receipt-facts">
  <dt>Amount</dt><dd class="num">${c.fee_micro !== '0' ? `${usdc(c.amount)} + fee ${usdc(c.fee)}` : usdc(c.amount)}</dd>
  <dt>Paid to</dt><dd id="receipt-to">${party(c.to, names.to)}</dd>
  <dt>Paid by</dt><dd id="receipt-from">${c.from.username || c.from.address || names.from ? party(c.from, names.from) : 'not recorded'}</dd>
  <dt>For</dt><dd>${c.memo ?? ''}${c.reference ? html` <span class="muted">(reference ${c.reference})</span>` : ''}</dd>
  <dt>Paid at</dt><dd><time datetime="${c.completed_at ?? ''}" id="receipt-time">${when(c.completed_at)}</time></dd>
  <dt>Solana transaction</dt><dd><code class="mono" id="receipt-signature">${c.signature ?? ''}</code>${c.slot !== null ? html` <span class="muted">(slot ${c.slot})</span>` : ''}</dd>
  <dt>Network</dt><dd>${c.network} <span class="muted">· USDC mint <code class="mono">${c.mint}</code></span></dd>
  <dt>Receipt of</dt><dd><code class="mono">${c.sub}</code> <span class="muted">(${c.kind.replace(/_/g, ' ')})</span></dd>
  <dt>Signed</dt><dd>${when(new Date(c.iat * 1000).toISOString())} by key <code class="mono">${r.kid}</code></dd>
</dl>`;
}

/** The signed form (download and the JWS itself) and how to check it, under headings of `level`. */
function receiptSigned(r: SignedReceipt, level: 2 | 3): SafeHtml {
  const c = r.claims;
  const file = `receipt-${c.sub}.jws`;
  const [open, close] = [new SafeHtml(`<h${level}`), new SafeHtml(`</h${level}>`)];
  return html`<section aria-labelledby="jws-h">
  ${open} id="jws-h">The signed receipt${close}
  <p>These facts as the service signed them: a JWS (compact serialization, EdDSA over Ed25519, type <code>agent-wallet-receipt+jwt</code>). Keep the file for your records.</p>
  <p class="actions"><a class="button" href="${r.jws_url}" download="${file}" id="receipt-download">Download the signed receipt</a> <span class="muted mono">${file}</span></p>
  <pre class="jws" id="receipt-jws" aria-label="The signed receipt (JWS)">${r.jws}</pre>
</section>
<section aria-labelledby="check-h">
  ${open} id="check-h">Check it${close}
  <ol class="steps">
    <li>The service publishes its key at <a href="${r.key_url}" id="receipt-key-url">${r.key_url}</a> (a JWKS; this receipt names key <code>${r.kid}</code>).</li>
    <li>With the Agent Wallet CLI: <code id="receipt-verify-command">agent-wallet receipt verify ${file} --key ${r.key_url}</code> prints what the receipt attests, or exits 1 when the signature does not match (a changed amount, payee or time, or another key).</li>
    <li>With any JOSE library, e.g. <code>jose</code>: <code>compactVerify(jws, createRemoteJWKSet(new URL("${r.key_url}")))</code>.</li>
    <li>The Solana transaction <code class="mono">${c.signature ?? ''}</code> is on chain: <code>getTransaction</code> on a ${c.network} RPC node (or a block explorer) shows the same transfer.</li>
  </ol>
</section>`;
}

/** The receipt page body. */
export function receiptPage(r: PayerReceipt): SafeHtml {
  const c = r.claims;
  const signed: SignedReceipt = { ...r, jws_url: `/pay/${r.short_code}/receipt.jws` };
  return html`<h1 class="headline"><span class="label">Receipt · paid to ${r.payee_name}</span> <span class="amount" id="receipt-amount">${usdc(c.amount)}</span></h1>
<p class="muted">Signed by this Agent Wallet service with its published key: anyone can check that the facts below are the ones it recorded.</p>
${receiptFacts(signed, { to: r.payee_name })}
${receiptSigned(signed, 2)}
<p><a href="/pay/${r.short_code}">Back to the payment page</a></p>`;
}

// ---------------------------------------------------------------------------------------------
// A wallet's own transaction (the owner's transaction page)

/** The receipt of a wallet's completed ledger transaction, as get_receipt signs it for the agent; the owner's page shows it. */
export interface TransactionReceipt extends SignedReceipt {
  /** The wallet's name: the party the receipt names by username and address is this wallet. */
  wallet_name: string;
  direction: 'in' | 'out';
}

/**
 * The signed receipt of `tx`, or null while it has none (a receipt is given for a completed
 * transaction only: pending, failed or cancelled ones moved nothing final). The same claims
 * get_receipt and `/dashboard/transactions/<id>/receipt.jws` sign.
 */
export async function transactionReceipt(services: Services, tx: TxRow, wallet: { wallet_id: string; name: string; username: string | null; address: string }): Promise<TransactionReceipt | null> {
  if (tx.status !== 'completed') return null;
  const claims = transactionClaims(services, tx, wallet, await slotOf(services, tx.signature));
  return {
    claims,
    jws: signReceipt(services, claims),
    kid: logKeyOf(services.masterKey).kid,
    key_url: `${services.publicUrl()}/.well-known/agent-wallet/log-key`,
    jws_url: `/dashboard/transactions/${tx.transaction_id}/receipt.jws`,
    wallet_name: wallet.name,
    direction: tx.direction === 'in' ? 'in' : 'out',
  };
}

/** Why a transaction has no receipt, in the words of its status. */
const NO_RECEIPT: Record<string, string> = {
  pending: 'It is not settled yet: a signed receipt is given once it has completed.',
  awaiting_approval: 'It waits for your approval: a signed receipt is given once it has completed.',
  approved: 'It is approved but not sent yet: a signed receipt is given once it has completed.',
  pre_approved: 'It is allowed by the guard rails but not settled yet: a signed receipt is given once it has completed.',
  failed: 'It failed, so nothing moved and there is nothing to attest.',
  rejected: 'It was refused, so nothing moved and there is nothing to attest.',
  cancelled: 'It was cancelled, so nothing moved and there is nothing to attest.',
  expired: 'It expired, so nothing moved and there is nothing to attest.',
};

/** The receipt section of the owner's transaction page: the receipt read out with its signed form, or plainly why there is none. */
export function transactionReceiptSection(r: TransactionReceipt | null, status: string): SafeHtml {
  if (!r) {
    return html`<section aria-labelledby="receipt-h">
<h2 id="receipt-h">Receipt</h2>
<p id="no-receipt">No receipt for this transaction. ${NO_RECEIPT[status] ?? `Its status is ${status.replace(/_/g, ' ')}: a signed receipt is given for a completed transaction only.`}</p>
</section>`;
  }
  const names = r.direction === 'out' ? { from: r.wallet_name } : { to: r.wallet_name };
  return html`<section aria-labelledby="receipt-h">
<h2 id="receipt-h">Receipt <span class="amount" id="receipt-amount">${usdc(r.claims.amount)}</span></h2>
<p class="muted">Signed by this Agent Wallet service with its published key, the same receipt the agent gets with get_receipt: anyone can check that the facts below are the ones it recorded.</p>
${receiptFacts(r, names)}
${receiptSigned(r, 3)}
</section>`;
}
