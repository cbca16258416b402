/**
 * The owner's passkey pages (DESIGN §7.1, issue 44): the Passkeys page (list, add, remove, the
 * open reset), the confirmation of a new passkey by an earlier one, the passkey prompt a mailed
 * sign-in link opens once the owner has a passkey, the page after a mail-started reset, the
 * wallet page's "allow the CLI once" forms, and the plain warning an owner without a passkey sees.
 * Forms that need the passkey carry `data-passkey` (src/web/passkey-script.ts gives them the step).
 */
import { html, type SafeHtml } from './html.ts';

/** A compact UTC time, as the other owner pages show it. */
const when = (iso: string | null | undefined) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : '—');
const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`;
const noticeOf = (text: string | null) => (text ? html`<p class="notice" role="status">${text}</p>` : html``);

export interface PasskeyItem {
  credential_id: string;
  name: string;
  created_at: string | null;
  last_used_at: string | null;
}

export interface ResetItem {
  reset_id: string;
  started_at: string;
  effective_at: string;
}

export interface PasskeysPageData {
  keys: PasskeyItem[];
  reset: ResetItem | null;
  csrf: string;
  message: string | null;
  /** Why passkeys cannot work on this daemon (its public URL is an IP), or null. */
  unavailable: string | null;
}

/** What a passkey protects, said once on the Passkeys page. */
const WHAT_IT_DOES = html`<p>A passkey lives on your device (phone, laptop, security key) and signs what you decide. Once you have one, a mailed link alone no longer signs in, and approving a payment, loosening guard rails, unfreezing, minting an owner API token or starting a recovery step each needs your passkey, which signs exactly that decision. The signature goes into the wallet's decision log, where anyone can check it offline with <code>agent-wallet owner verify-log</code>.</p>`;

/** The plain risk an owner without a passkey runs, on the dashboard and each wallet page. */
export function passkeyRisk(): SafeHtml {
  return html`<div class="warning" id="passkey-risk"><p><strong>Your mailbox is your only key.</strong> Anyone who can read your mail can approve payments and loosen the rails: <a href="/dashboard/passkeys">add a passkey</a>.</p></div>`;
}

/** The Passkeys page. */
export function passkeysPage(d: PasskeysPageData): SafeHtml {
  return html`<h1>Passkeys</h1>
${noticeOf(d.message)}
${d.reset ? resetPanel(d.reset, d.csrf) : ''}
${WHAT_IT_DOES}
${d.unavailable ? html`<div class="errors" role="alert"><p>${d.unavailable}</p></div>` : ''}
<h2 id="yours">Your passkeys</h2>
${
  d.keys.length === 0
    ? html`<p id="no-passkeys"><strong>You have no passkey yet.</strong> Anyone who can read your mail can approve payments and loosen the rails until you add one.</p>`
    : html`<div class="table-wrap"><table class="cards" id="passkeys">
<thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
<tbody>${d.keys.map(
        (k) => html`<tr><td data-label="Name"><strong>${k.name}</strong></td><td data-label="Added">${when(k.created_at)}</td><td data-label="Last used">${k.last_used_at ? when(k.last_used_at) : html`<span class="muted">never</span>`}</td>
<td data-label="Action"><form method="post" action="/dashboard/passkeys/${k.credential_id}/remove" class="inline" data-passkey>${csrfField(d.csrf)}<button type="submit" class="secondary" aria-label="Remove passkey ${k.name}">Remove</button></form></td></tr>`,
      )}</tbody>
</table></div>
<p class="hint">Removing a passkey needs one of your passkeys (the one you remove will do). Keep at least two, on different devices: a lost device then costs you nothing.</p>`
}
<h2 id="add">Add a passkey</h2>
${
  d.keys.length > 0
    ? html`<p class="hint">Your browser creates the new passkey; then one you already have confirms it, so nobody holding only your mail can add theirs.</p>`
    : html`<p class="hint">Your browser creates the passkey on this device (or a phone or security key you choose) and asks you to unlock it (fingerprint, face or PIN).</p>`
}
<form method="post" action="/dashboard/passkeys" class="stack" data-passkey-register>
  ${csrfField(d.csrf)}
  <div class="field">
    <label for="passkey_name">Name</label>
    <input type="text" id="passkey_name" name="name" maxlength="64" required autocomplete="off" placeholder="e.g. work laptop" aria-describedby="passkey_name_hint">
    <span class="hint" id="passkey_name_hint">So you can tell your passkeys apart in this list.</span>
  </div>
  <div><button type="submit">Add a passkey</button></div>
  <noscript><p class="warning">Adding a passkey runs in this page's own script: allow this site's scripts to add one.</p></noscript>
</form>
<h2 id="lost">Lost every passkey?</h2>
<p>Ask for a <a href="/login">sign-in link</a> and choose “I lost my passkey” on the page it opens. A reset removes all your passkeys after a delay, so a thief holding only your mailbox waits, and you are mailed at once; any of your passkeys cancels it here.</p>`;
}

function resetPanel(r: ResetItem, csrf: string): SafeHtml {
  return html`<section class="alarm" aria-labelledby="reset-h" id="passkey-reset">
<h2 id="reset-h">A reset of your passkeys is under way</h2>
<p>Started ${when(r.started_at)} from a mailed sign-in link. At <strong><time datetime="${r.effective_at}">${when(r.effective_at)}</time></strong> every passkey of yours is removed, and mail links alone can then approve payments and loosen the rails again.</p>
<form method="post" action="/dashboard/passkeys/reset/${r.reset_id}/cancel" class="actions" data-passkey>${csrfField(csrf)}<button type="submit">Cancel the reset with a passkey</button><span>If you did not start it, cancel it now: someone reads your mail.</span></form>
</section>`;
}

/** After the new passkey's registration: one the owner already has confirms it (its options are in the form). */
export function confirmAdditionPage(options: unknown, csrf: string): SafeHtml {
  return html`<h1>Confirm the new passkey</h1>
<p>Your browser created the new passkey. To add it, confirm with a passkey you already have: this keeps someone who only reads your mail from adding theirs.</p>
<form method="post" action="/dashboard/passkeys/confirm" class="actions" data-passkey data-passkey-options="${JSON.stringify(options)}">
  ${csrfField(csrf)}
  <button type="submit">Confirm with an existing passkey</button>
</form>
<noscript><p class="warning">Confirming runs in this page's own script: allow this site's scripts.</p></noscript>
<p><a href="/dashboard/passkeys">Cancel</a> <span class="muted">(nothing is added)</span></p>`;
}

/** The page a sign-in or claim link opens for an owner with a passkey: the passkey signs in; the mailbox alone can only start a reset. */
export function passkeySignInPage(link: { purpose: 'claim'; emailMasked: string; wallet: { name: string; username: string } } | { purpose: 'login'; emailMasked: string }, token: string, csrf: string, minutes: number): SafeHtml {
  const claim = link.purpose === 'claim';
  return html`<h1>${claim ? html`Claim “${link.wallet.name}” with your passkey` : 'Sign in with your passkey'}</h1>
<p>${claim ? html`You are about to become the owner of <span class="mono">@${link.wallet.username}</span> as <strong>${link.emailMasked}</strong>.` : html`You are signing in as <strong>${link.emailMasked}</strong>.`} This account has a passkey, so the mailed link alone does not sign in: confirm with your passkey.</p>
<form method="post" action="/login/${token}" class="actions" data-passkey id="passkey-sign-in">
  ${csrfField(csrf)}
  <button type="submit">${claim ? 'Claim with your passkey' : 'Sign in with your passkey'}</button>
</form>
<noscript><p class="warning">The passkey prompt runs in this page's own script: allow this site's scripts and reload.</p></noscript>
<p class="muted">The link works once, within ${minutes} minutes of being sent. Opening it did nothing yet.</p>
<details id="lost-passkey">
<summary>I lost my passkey</summary>
<p>This link can start a reset of your passkeys instead. It does not sign you in: it removes every passkey of yours after a delay, mails you about it at once, and any of your passkeys can cancel it meanwhile. After that time, sign in with a new link and add a new passkey.</p>
<form method="post" action="/login/${token}/reset" class="actions">
  ${csrfField(csrf)}
  <button type="submit" class="danger">Start a passkey reset</button>
</form>
</details>`;
}

/** After a mail-started reset: when it takes effect, and that it was mailed. */
export function resetStartedPage(r: ResetItem): SafeHtml {
  return html`<h1>Passkey reset started</h1>
<p class="notice" role="status">Your passkeys will be removed at <strong><time datetime="${r.effective_at}">${when(r.effective_at)}</time></strong>.</p>
<p>We mailed you about it. Until then nothing changes: your passkeys still sign in and decide, and any of them can cancel the reset on the Passkeys page. After that time, ask for a <a href="/login">sign-in link</a>: it signs you in again, and you can add a new passkey.</p>`;
}

/** The recovery steps the wallet page lets the owner allow for the CLI once (the owner API cannot start them alone). */
export function allowCliSection(walletId: string, csrf: string): SafeHtml {
  return html`<h3 id="allow-cli">Allow the CLI once</h3>
<p class="hint">With a passkey, your owner API token cannot start a recovery step alone. Sign the step here with your passkey; then the CLI may carry it out once, within 10 minutes.</p>
<form method="post" action="/dashboard/wallets/${walletId}/allow-cli" class="actions" data-passkey>
  ${csrfField(csrf)}<input type="hidden" name="kind" value="recovery.enroll">
  <button type="submit">Allow a recovery-kit enrolment</button>
</form>
<form method="post" action="/dashboard/wallets/${walletId}/allow-cli" class="stack" data-passkey>
  ${csrfField(csrf)}<input type="hidden" name="kind" value="recovery.sweep">
  <div class="field">
    <label for="sweep_to_address">Sweep to this Solana address</label>
    <input type="text" id="sweep_to_address" name="to_address" required autocomplete="off" spellcheck="false" maxlength="44" class="mono" aria-describedby="sweep_to_hint">
    <span class="hint" id="sweep_to_hint">Your own address. The CLI may then announce a sweep of the whole balance to exactly this address.</span>
  </div>
  <div><button type="submit">Allow a sweep to this address</button></div>
</form>`;
}

/** After the owner signed a step for the CLI: what to run, and until when. */
export function cliAllowedPage(wallet: { wallet_id: string; name: string }, grant: { decision: string; expires_at: string | null }, command: string): SafeHtml {
  return html`<p><a href="/dashboard/wallets/${wallet.wallet_id}#recovery">← ${wallet.name}</a></p>
<h1>Allowed once</h1>
<p class="notice" role="status">Your passkey signed: ${grant.decision}. The owner API may do it once, until ${when(grant.expires_at)}.</p>
<p>On your own machine, run:</p>
<pre class="command"><code id="cli-command">${command}</code></pre>
<p class="muted">Nothing else is allowed: any other decision that moves or loosens money still needs your passkey.</p>`;
}
