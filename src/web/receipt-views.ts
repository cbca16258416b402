/**
 * The payer's receipt of a paid paylink (`/pay/<short_code>/receipt`, DESIGN §9.1): the signed
 * receipt (a compact JWS, EdDSA with the daemon's log key, the same claims get_receipt gives the
 * payee) read out as facts — amount, parties, Solana transaction, time — with the signed form
 * itself (`/pay/<short_code>/receipt.jws`) and how to check it against the published key.
 */
import { paylinkClaims, signReceipt, slotOf, type ReceiptClaims, type ReceiptParty } from '../evidence/receipts.ts';
import { logKeyOf } from '../evidence/log-key.ts';
import type { PaylinkRow } from '../db/paylinks.ts';
import { payeeOfRow } from '../earning/payee.ts';
import type { Services } from '../services.ts';
import { html, type SafeHtml } from './html.ts';

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

const party = (p: ReceiptParty, name?: string) =>
  html`${name ? html`<strong>${name}</strong> ` : ''}${p.username ? html`@${p.username}` : ''}${p.address ? html`${p.username || name ? html`<br>` : ''}<code class="mono">${p.address}</code>` : ''}`;

/** USDC as the checkout shows it (at least two decimals); the signed claim keeps the exact decimal string. */
const usdc = (decimal: string) => `${Number(decimal).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })} USDC`;

const when = (iso: string | null) => (iso === null ? 'not recorded' : `${iso.slice(0, 19).replace('T', ' ')} UTC`);

/** The receipt page body. */
export function receiptPage(r: PayerReceipt): SafeHtml {
  const c = r.claims;
  const file = `receipt-${c.sub}.jws`;
  return html`<h1 class="headline"><span class="label">Receipt · paid to ${r.payee_name}</span> <span class="amount" id="receipt-amount">${usdc(c.amount)}</span></h1>
<p class="muted">Signed by this Agent Wallet service with its published key: anyone can check that the facts below are the ones it recorded.</p>
<dl class="facts" id="receipt-facts">
  <dt>Amount</dt><dd class="num">${c.fee_micro !== '0' ? `${usdc(c.amount)} + fee ${usdc(c.fee)}` : usdc(c.amount)}</dd>
  <dt>Paid to</dt><dd id="receipt-to">${party(c.to, r.payee_name)}</dd>
  <dt>Paid by</dt><dd id="receipt-from">${c.from.username || c.from.address ? party(c.from) : 'not recorded'}</dd>
  <dt>For</dt><dd>${c.memo ?? ''}${c.reference ? html` <span class="muted">(reference ${c.reference})</span>` : ''}</dd>
  <dt>Paid at</dt><dd><time datetime="${c.completed_at ?? ''}" id="receipt-time">${when(c.completed_at)}</time></dd>
  <dt>Solana transaction</dt><dd><code class="mono" id="receipt-signature">${c.signature ?? ''}</code>${c.slot !== null ? html` <span class="muted">(slot ${c.slot})</span>` : ''}</dd>
  <dt>Network</dt><dd>${c.network} <span class="muted">· USDC mint <code class="mono">${c.mint}</code></span></dd>
  <dt>Receipt of</dt><dd><code class="mono">${c.sub}</code> <span class="muted">(${c.kind.replace(/_/g, ' ')})</span></dd>
  <dt>Signed</dt><dd>${when(new Date(c.iat * 1000).toISOString())} by key <code class="mono">${r.kid}</code></dd>
</dl>
<section aria-labelledby="jws-h">
  <h2 id="jws-h">The signed receipt</h2>
  <p>These facts as the service signed them: a JWS (compact serialization, EdDSA over Ed25519, type <code>agent-wallet-receipt+jwt</code>). Keep the file for your records.</p>
  <p class="actions"><a class="button" href="/pay/${r.short_code}/receipt.jws" download="${file}" id="receipt-download">Download the signed receipt</a> <span class="muted mono">${file}</span></p>
  <pre class="jws" id="receipt-jws" aria-label="The signed receipt (JWS)">${r.jws}</pre>
</section>
<section aria-labelledby="check-h">
  <h2 id="check-h">Check it</h2>
  <ol class="steps">
    <li>The service publishes its key at <a href="${r.key_url}" id="receipt-key-url">${r.key_url}</a> (a JWKS; this receipt names key <code>${r.kid}</code>).</li>
    <li>With the Agent Wallet CLI: <code id="receipt-verify-command">agent-wallet receipt verify ${file} --key ${r.key_url}</code> prints what the receipt attests, or exits 1 when the signature does not match (a changed amount, payee or time, or another key).</li>
    <li>With any JOSE library, e.g. <code>jose</code>: <code>compactVerify(jws, createRemoteJWKSet(new URL("${r.key_url}")))</code>.</li>
    <li>The Solana transaction <code class="mono">${c.signature ?? ''}</code> is on chain: <code>getTransaction</code> on a ${c.network} RPC node (or a block explorer) shows the same transfer.</li>
  </ol>
</section>
<p><a href="/pay/${r.short_code}">Back to the payment page</a></p>`;
}
