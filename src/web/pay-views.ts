/**
 * The checkout page of a paylink (`/pay/<short_code>`) and the fund page of a fund request
 * (`/fund/<id>`), DESIGN §8. Server-rendered with the shared helpers and stylesheet; they work
 * without JavaScript (a refresh link), and the checkout page's small script (CSP nonce) polls the
 * public pay_status and reloads when the status changes.
 */
import QRCode from 'qrcode';
import { html, SafeHtml } from './html.ts';

/**
 * The QR code of `text` as an inline SVG (a trusted string: the qrcode package draws only paths
 * from the data), with a size and an accessible name.
 */
export async function qrSvg(text: string, label: string): Promise<SafeHtml> {
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  const named = svg.replace('<svg ', `<svg width="256" height="256" role="img" aria-label="${html`${label}`.value}" `);
  return new SafeHtml(named);
}

export interface CheckoutView {
  short_code: string;
  request_id: string;
  description: string;
  amount: number | null;
  items: { description: string; price: number; quantity: number; total: number }[];
  payee: { name: string; username: string; owner_email?: string };
  status: 'open' | 'paid' | 'cancelled' | 'expired';
  solana_pay_url: string | null;
  pay_to: string;
  usdc_mint: string;
  network: string;
  expires_at: string | null;
  paid_at: string | null;
  signature: string | null;
}

const figure = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });
const usdc = (n: number) => `${figure(n)} USDC`;
const when = (isoTime: string | null) => (isoTime === null ? '' : `${isoTime.slice(0, 16).replace('T', ' ')} UTC`);

/** Time left until `expiresAt`, in the largest two units (what a payer needs to judge it). */
function timeLeft(expiresAtMs: number, nowMs: number): string {
  const s = Math.max(0, Math.floor((expiresAtMs - nowMs) / 1000));
  if (s === 0) return 'expired';
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d} d ${h} h left`;
  if (h > 0) return `${h} h ${m} min left`;
  if (m > 0) return `${m} min ${s % 60} s left`;
  return `${s} s left`;
}

function orderTable(v: CheckoutView): SafeHtml {
  if (v.items.length === 0) return html`<p class="order-for">${v.description}</p>`;
  return html`<p class="order-for">${v.description}</p>
<table class="lines" id="items">
  <caption class="visually-hidden">Items</caption>
  <thead><tr><th scope="col">Item</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Price (USDC)</th><th scope="col" class="num">Total (USDC)</th></tr></thead>
  <tbody>
  ${v.items.map((i) => html`<tr><td>${i.description}</td><td class="num">${i.quantity}</td><td class="num">${figure(i.price)}</td><td class="num">${figure(i.total)}</td></tr>`)}
  </tbody>
  <tfoot><tr><th scope="row" colspan="3">Total</th><td class="num" id="total"><strong>${usdc(v.amount ?? 0)}</strong></td></tr></tfoot>
</table>`;
}

/** The headline: who and how much, by status (a paid page no longer asks to pay). */
function headline(v: CheckoutView): SafeHtml {
  const amount = v.amount === null ? 'Any amount' : usdc(v.amount);
  const label: Record<CheckoutView['status'], string> = {
    open: `Pay ${v.payee.name}`,
    paid: `Paid to ${v.payee.name}`,
    expired: `Expired: ${v.payee.name} asked for`,
    cancelled: `Cancelled: ${v.payee.name} asked for`,
  };
  return html`<h1 class="headline"><span class="label">${label[v.status]}</span> <span class="amount${v.status === 'open' || v.status === 'paid' ? '' : ' void'}" id="headline-amount">${amount}</span></h1>
<p class="muted">@${v.payee.username}${v.payee.owner_email ? html` · owned by <span id="owner-email">${v.payee.owner_email}</span>` : ''}</p>`;
}

function statusBlock(v: CheckoutView, nowMs: number): SafeHtml {
  switch (v.status) {
    case 'paid':
      return html`<div class="notice"><strong>Payment received</strong>${v.paid_at ? ` on ${when(v.paid_at)}` : ''}. Thank you!
${v.signature ? html`<br><span class="muted">Solana transaction</span> <code class="mono" id="signature">${v.signature}</code>` : ''}
${v.signature ? html`<p class="actions"><a class="button" href="/pay/${v.short_code}/receipt" id="receipt-link">Your receipt</a></p>` : ''}</div>`;
    case 'expired':
      return html`<div class="errors"><strong>This payment request expired</strong>${v.expires_at ? ` on ${when(v.expires_at)}` : ''}. Do not pay it: ask ${v.payee.name} for a new one.</div>`;
    case 'cancelled':
      return html`<div class="errors"><strong>This payment request was cancelled</strong> by ${v.payee.name}. Do not pay it.</div>`;
    default:
      return html`<p class="due"><span class="status status-pending">Waiting for payment</span>${
        v.expires_at
          ? html` <span class="muted">· <time id="countdown" datetime="${v.expires_at}">${timeLeft(Date.parse(v.expires_at), nowMs)}</time> (until ${when(v.expires_at)})</span>`
          : ''
      }</p>`;
  }
}

/** What the checkout page shows beyond the paylink: the simnet test payer's form and a notice after an action. */
export interface CheckoutExtras {
  /** On simnet: the CSRF token of the "pay with a simnet test wallet" form; null elsewhere. */
  simnetPayCsrf?: string | null;
  notice?: string | null;
}

/** The amount as a Solana Pay wallet takes it (plain decimal, no grouping): what "Copy amount" copies. */
const plainAmount = (n: number) => n.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 6 });

/**
 * A value the payer may need to paste into a wallet: selectable as one block (CSS user-select: all)
 * so it copies without JavaScript, and a Copy button the page's script shows.
 */
const copyable = (id: string, value: string, label: string, mono: boolean, unit = '') =>
  html`<code class="copyable${mono ? ' mono' : ''}" id="${id}">${value}</code>${unit} <button type="button" class="secondary copy" data-copy="${id}" id="copy-${id.replace(/^pay-/, '')}" hidden>${label}</button>`;

/** On simnet: a test payer funded by the faucet pays this paylink as a Solana Pay wallet would. */
function simnetPayForm(v: CheckoutView, csrf: string): SafeHtml {
  return html`<form method="post" action="/pay/${v.short_code}/simnet-pay" class="panel" id="simnet-pay-form">
    <input type="hidden" name="csrf" value="${csrf}">
    <p>This daemon runs on <strong>simnet</strong>, a local test chain: a test wallet funded by its faucet can pay this request for you, the way a Solana Pay wallet does (same transfer, same reference).</p>
    ${
      v.amount === null
        ? html`<div class="field"><label for="simnet-amount">Amount to pay (USDC)</label><input type="text" inputmode="decimal" id="simnet-amount" name="amount" required pattern="[0-9]+([.][0-9]{1,6})?" autocomplete="off"></div>`
        : ''
    }
    <button type="submit" id="simnet-pay">${v.amount === null ? 'Pay' : `Pay ${usdc(v.amount)}`} with a simnet test wallet</button>
  </form>`;
}

/**
 * The checkout page body. `qr` is the QR code of the Solana Pay URL (open paylinks only); `nowMs`
 * dates the time left. On a phone the "Open in wallet" button and the copyable amount and address
 * come first; the QR code (for paying from another device) follows them.
 */
export function checkoutPage(v: CheckoutView, qr: SafeHtml | null, nonce: string, nowMs: number, extras: CheckoutExtras = {}): SafeHtml {
  const open = v.status === 'open' && v.solana_pay_url !== null;
  return html`${headline(v)}
${extras.notice ? html`<div class="notice" id="notice">${extras.notice}</div>` : ''}
<div id="pay-status" role="status" aria-live="polite" data-short-code="${v.short_code}" data-status="${v.status}">
${statusBlock(v, nowMs)}
</div>
<section class="panel order" aria-label="Order">
  ${orderTable(v)}
</section>
${
  open
    ? html`<section aria-labelledby="pay-h" class="pay">
  <h2 id="pay-h">Pay with a Solana wallet</h2>
  <div class="pay-grid">
  <div class="pay-here">
  <p class="actions"><a class="button" id="solana-pay-link" href="${v.solana_pay_url}">Open in wallet</a></p>
  <p class="hint">Opens a wallet that supports Solana Pay (Phantom, Solflare, …) on this device. It pays ${v.amount === null ? 'the amount you enter, in USDC,' : usdc(v.amount)} on Solana${v.network === 'mainnet' ? '' : html` <strong>(${v.network === 'simnet' ? 'local test network' : v.network})</strong>`}.</p>
  <dl class="facts">
    <dt>Amount</dt><dd>${v.amount === null ? 'any amount you choose' : copyable('pay-amount', plainAmount(v.amount), 'Copy amount', false, ' USDC')}</dd>
    <dt>Recipient</dt><dd>${copyable('pay-address', v.pay_to, 'Copy address', true)}</dd>
    <dt>Token</dt><dd>USDC <span class="muted mono">${v.usdc_mint}</span></dd>
  </dl>
  </div>
  <div class="qr-block">
  <p class="qr-caption">On another device? Scan this code with its wallet.</p>
  <div class="qr">${qr}</div>
  </div>
  </div>
  <p class="hint">Pay through the button or the QR code: they carry this request's reference, which is how the payment is recognised. A plain transfer to the address is not matched to this request.</p>
  <details><summary>Solana Pay link</summary><p><code class="mono" id="solana-pay-url">${v.solana_pay_url}</code></p></details>
  <details><summary>Paying from an agent wallet?</summary><p>Call <code>pay</code> with <code>payment_request_id: "${v.request_id}"</code>.</p></details>
  ${extras.simnetPayCsrf ? simnetPayForm(v, extras.simnetPayCsrf) : ''}
</section>`
    : ''
}
${open ? html`<p><a href="/pay/${v.short_code}" id="refresh">Refresh status</a></p>
${checkoutScript(nonce)}` : ''}`;
}

/** Counts the time left down each second, polls pay_status every 2 s (for at most an hour) and reloads the page when the status changes; enables the copy buttons. */
function checkoutScript(nonce: string): SafeHtml {
  return html`<script nonce="${nonce}">
(function () {
  var box = document.getElementById('pay-status');
  var code = box.getAttribute('data-short-code');
  var shown = box.getAttribute('data-status');
  if (navigator.clipboard) {
    Array.prototype.forEach.call(document.querySelectorAll('button[data-copy]'), function (copy) {
      var label = copy.textContent;
      copy.hidden = false;
      copy.addEventListener('click', function () {
        navigator.clipboard.writeText(document.getElementById(copy.getAttribute('data-copy')).textContent).then(function () {
          copy.textContent = 'Copied';
          setTimeout(function () { copy.textContent = label; }, 2000);
        });
      });
    });
  }
  var countdown = document.getElementById('countdown');
  if (countdown) {
    var until = Date.parse(countdown.getAttribute('datetime'));
    var tick = function () {
      var s = Math.max(0, Math.floor((until - Date.now()) / 1000));
      var d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
      countdown.textContent = s === 0 ? 'expired' : d > 0 ? d + ' d ' + h + ' h left' : h > 0 ? h + ' h ' + m + ' min left' : m > 0 ? m + ' min ' + (s % 60) + ' s left' : s + ' s left';
      if (s === 0) { setTimeout(function () { location.reload(); }, 1500); return; }
      setTimeout(tick, 1000);
    };
    tick();
  }
  var stopAt = Date.now() + 3600 * 1000;
  function poll() {
    fetch('/v1/public?action=pay_status&short_code=' + encodeURIComponent(code), { headers: { accept: 'application/json' } })
      .then(function (r) { return r.json(); })
      .then(function (body) {
        if (body && body.success && body.data.status !== shown) { location.reload(); return; }
        if (Date.now() < stopAt) setTimeout(poll, 2000);
      })
      .catch(function () { if (Date.now() < stopAt) setTimeout(poll, 5000); });
  }
  setTimeout(poll, 2000);
})();
</script>`;
}

export interface FundView {
  fund_request_id: string;
  wallet_name: string;
  wallet_username: string;
  amount: number;
  reason: string;
  status: 'open' | 'fulfilled' | 'declined';
  address: string;
  token_account: string;
  usdc_mint: string;
  network: string;
  solana_pay_url: string;
  created_at: string;
  faucet: boolean;
}

/** The fund page body: what the agent asks for, the deposit address and a Solana Pay QR code; on simnet a faucet button. */
export function fundPage(v: FundView, qr: SafeHtml, csrf: string, notice: string | null): SafeHtml {
  return html`<h1>Fund ${v.wallet_name}</h1>
${notice ? html`<div class="notice" role="status">${notice}</div>` : ''}
<p>Your agent wallet <strong>${v.wallet_name}</strong> (@${v.wallet_username}) asks for <strong id="fund-amount">${usdc(v.amount)}</strong>.</p>
<dl class="facts">
  <dt>Reason</dt><dd>${v.reason}</dd>
  <dt>Asked</dt><dd>${when(v.created_at)}</dd>
  <dt>Status</dt><dd><span class="status status-${v.status === 'fulfilled' ? 'completed' : v.status === 'declined' ? 'rejected' : 'pending'}" id="fund-status">${v.status}</span></dd>
</dl>
${
  v.status === 'open'
    ? html`<section aria-labelledby="deposit-h">
  <h2 id="deposit-h">Deposit</h2>
  <p>Send USDC on Solana${v.network === 'mainnet' ? '' : html` <strong>(${v.network === 'simnet' ? 'local test network' : v.network})</strong>`} to the wallet's address, or scan the code with a Solana Pay wallet. The request is marked fulfilled when a deposit covering it arrives.</p>
  <div class="qr">${qr}</div>
  <p class="actions"><a class="button" href="${v.solana_pay_url}" id="fund-solana-pay">Open in wallet</a></p>
  <dl class="facts">
    <dt>Deposit address</dt><dd><code class="mono" id="deposit-address">${v.address}</code></dd>
    <dt>USDC account</dt><dd><code class="mono">${v.token_account}</code></dd>
    <dt>Token</dt><dd>USDC <span class="muted mono">${v.usdc_mint}</span></dd>
  </dl>
  ${
    v.faucet
      ? html`<form method="post" action="/fund/${v.fund_request_id}/faucet" class="panel">
    <input type="hidden" name="csrf" value="${csrf}">
    <p>This daemon runs on <strong>simnet</strong>, a local test chain: its faucet can make the deposit for you.</p>
    <button type="submit" id="faucet">Send ${usdc(v.amount)} from the simnet faucet</button>
  </form>`
      : ''
  }
</section>`
    : ''
}
<p><a href="/fund/${v.fund_request_id}">Refresh</a></p>`;
}
