/**
 * Server-rendered HTML with escaping by construction: `html\`…\`` escapes every interpolated value
 * unless it is itself `html` (a `SafeHtml`). Arrays are rendered item by item; null, undefined and
 * false render as nothing. There is no other way to put text into a page.
 */

/** HTML that is safe to insert as is (built by `html`). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escapes text for element content and quoted attribute values. */
export function esc(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return esc(String(value));
}

/** The template tag of every page: interpolations are escaped. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** Headers of every page: no caching (pages show balances and one-time tokens), a strict CSP, no Referer (URLs carry one-time tokens). */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

export interface Nav {
  /** The signed-in owner's e-mail; absent on public pages. */
  email?: string;
  /** CSRF token for the sign-out form. */
  csrf?: string;
  current?: 'wallets' | 'tokens' | 'passkeys';
  /**
   * The page loads the passkey step's scripts (/static/webauthn.js, /static/passkey.js) and its CSP
   * allows this origin's scripts (script-src 'self', connect-src 'self'). Default: the owner's
   * pages (those with `email`).
   */
  passkey?: boolean;
}

/** The CSP of a page that runs the passkey step: still no inline script, no other origin. */
export const PASSKEY_PAGE_CSP = `${PAGE_HEADERS['Content-Security-Policy']}; script-src 'self'; connect-src 'self'`;

const withScripts = (nav: Nav) => nav.passkey ?? Boolean(nav.email);

/** The page frame: skip link, header with navigation, main landmark. */
export function layout(title: string, body: SafeHtml, nav: Nav = {}): SafeHtml {
  const link = (href: string, label: string, key: Nav['current']) =>
    html`<a href="${href}"${nav.current === key ? new SafeHtml(' aria-current="page"') : ''}>${label}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Agent Wallet</title>
<link rel="stylesheet" href="/static/style.css">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
${withScripts(nav) ? html`<script src="/static/webauthn.js" defer></script>
<script src="/static/passkey.js" defer></script>
` : ''}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site">
  <span class="brand">Agent Wallet</span>
  ${
    nav.email
      ? html`<nav aria-label="Owner">
    ${link('/dashboard', 'Wallets', 'wallets')}
    ${link('/dashboard/tokens', 'API tokens', 'tokens')}
    ${link('/dashboard/passkeys', 'Passkeys', 'passkeys')}
    <a href="/login">Switch owner</a>
    <form method="post" action="/logout" class="inline">
      <input type="hidden" name="csrf" value="${nav.csrf ?? ''}">
      <button type="submit" class="link">Sign out <span class="muted">(${nav.email})</span></button>
    </form>
  </nav>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
${body}
</main>
</body>
</html>
`;
}

/** A complete page response. */
export function pageResponse(status: number, title: string, body: SafeHtml, nav: Nav = {}, headers: Record<string, string> = {}): Response {
  const csp: Record<string, string> = withScripts(nav) ? { 'Content-Security-Policy': PASSKEY_PAGE_CSP } : {};
  return new Response(layout(title, body, nav).value, { status, headers: { ...PAGE_HEADERS, ...csp, ...headers } });
}

/** A page that explains a problem and what to do about it (404 / 410 / 403 / …). */
export function problemPage(status: number, title: string, explanation: string, whatToDo: SafeHtml | string, nav: Nav = {}, headers: Record<string, string> = {}): Response {
  return pageResponse(
    status,
    title,
    html`<h1>${title}</h1>
<p>${explanation}</p>
<div class="next"><h2>What to do</h2><p>${whatToDo}</p></div>`,
    nav,
    headers,
  );
}

/** A 303 redirect (POST → GET). */
export function redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { Location: location, 'Cache-Control': 'no-store', ...headers } });
}
