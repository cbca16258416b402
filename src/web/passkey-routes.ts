/**
 * The owner's passkey pages and the passkey step of the decision forms (DESIGN §7.1, issue 44).
 * A thin layer over src/owner/passkeys.ts:
 *
 * - /static/webauthn.js and /static/passkey.js (src/web/passkey-script.ts);
 * - /dashboard/passkeys: list, add (registration with user verification; a later key confirmed
 *   by an earlier one), remove and cancel a reset, each under a passkey;
 * - /dashboard/wallets/:id/allow-cli: a recovery step signed here that the owner API (the CLI)
 *   may carry out once (grantForApi);
 * - `passkeyOptions`: the answer of a decision form's `passkey_step=options` POST, shared with the
 *   decision routes of src/web/routes.ts.
 */
import { isSolanaAddress } from '../contract/common.ts';
import { Elysia } from 'elysia';
import { requireOwnerWallet } from '../actions/owner.ts';
import { AppError } from '../errors.ts';
import type { OwnerDecision } from '../domain/owner-decision.ts';
import {
  cancelOwnerReset,
  confirmAddition,
  currentReset,
  decisionOptions,
  finishRegistration,
  grantForApi,
  hasPasskey,
  listPasskeys,
  registrationOptions,
  relyingParty,
  removeOwnerPasskey,
  type GrantableDecision,
} from '../owner/passkeys.ts';
import type { Services } from '../services.ts';
import { html, pageResponse, problemPage, redirect } from './html.ts';
import { assertionOf, json, jsonError, ownerNav, ownerPage, wantsPasskeyOptions } from './owner-page.ts';
import { PASSKEY_JS, WEBAUTHN_JS } from './passkey-script.ts';
import { cliAllowedPage, confirmAdditionPage, passkeysPage } from './passkey-views.ts';

const SCRIPT_HEADERS = { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' };

/** Fixed notices after a redirect to the Passkeys page (never text from the query string). */
const NOTICES: Record<string, string> = {
  added: 'Passkey added. From now on it signs your sign-ins and every decision that moves or loosens money.',
  removed: 'Passkey removed.',
  reset_cancelled: 'Reset cancelled: your passkeys stay.',
};





/**
 * The answer of a decision form's options step: `{passkey: false}` when the owner has no passkey
 * or `build` finds no decision that needs one (a tightening; an invalid form, which the real
 * submit then answers), else `{passkey: true, options}` for exactly that decision.
 */
export async function passkeyOptions(services: Services, ownerId: string | null, build: () => Promise<OwnerDecision | null>): Promise<Response> {
  try {
    if (!ownerId || !(await hasPasskey(services, ownerId))) return json(200, { passkey: false });
    const decision = await build();
    if (!decision) return json(200, { passkey: false });
    const { decision: words, ...options } = await decisionOptions(services, ownerId, decision);
    return json(200, { passkey: true, decision: words, options });
  } catch (err) {
    return jsonError(err, services);
  }
}




/** The recovery step a wallet page's "allow the CLI once" form asks for, or a validation error. */
function cliDecision(form: URLSearchParams, ownerId: string, walletId: string): GrantableDecision {
  const kind = form.get('kind');
  if (kind === 'recovery.enroll') return { kind: 'recovery.enroll', owner_id: ownerId, wallet_id: walletId };
  if (kind === 'recovery.sweep') {
    const to = (form.get('to_address') ?? '').trim();
    if (!isSolanaAddress(to)) throw new AppError('VALIDATION_ERROR', `/to_address: "${to.slice(0, 60)}" is not a Solana address.`, { howToFix: 'Paste the address of your own wallet (32 to 44 base58 characters).', details: { field: '/to_address' } });
    return { kind: 'recovery.sweep', owner_id: ownerId, wallet_id: walletId, to_address: to };
  }
  throw new AppError('VALIDATION_ERROR', '/kind: must be recovery.enroll or recovery.sweep.', { details: { field: '/kind' } });
}

/** The passkey pages as an Elysia plugin, mounted by webRoutes. */
export function passkeyRoutes(services: Services) {
  const noParse = { parse: 'none' as const };
  return new Elysia({ name: 'passkey-pages' })
    .get('/static/webauthn.js', () => new Response(WEBAUTHN_JS, { headers: SCRIPT_HEADERS }))
    .get('/static/passkey.js', () => new Response(PASSKEY_JS, { headers: SCRIPT_HEADERS }))
    .get(
      '/dashboard/passkeys',
      ownerPage(services, async ({ request }, s) => {
        const done = new URL(request.url).searchParams.get('done');
        const rp = relyingParty(services);
        const body = passkeysPage({
          keys: await listPasskeys(services, s.ownerId),
          reset: await currentReset(services, s.ownerId),
          csrf: s.csrf,
          message: done ? (NOTICES[done] ?? null) : null,
          unavailable: rp ? null : `Passkeys need a domain name, and this service's public URL is ${services.publicUrl()} (an IP address). The operator sets public_url in config.toml to the https URL owners open (or http://localhost:PORT on their own machine).`,
        });
        return pageResponse(200, 'Passkeys', body, ownerNav(s, 'passkeys'));
      }),
    )
    .post(
      '/dashboard/passkeys',
      ownerPage(services, async (_c, s, form) => {
        if (wantsPasskeyOptions(form)) return json(200, { passkey: true, options: await registrationOptions(services, s.ownerId) });
        const registration = form!.get('registration');
        if (!registration) {
          return problemPage(400, 'No passkey was added', 'Adding a passkey runs in the page\'s own script, and the form came without the browser\'s answer.', html`Allow this site's scripts (it loads no others), open <a href="/dashboard/passkeys">Passkeys</a> again and press “Add a passkey”.`, ownerNav(s, 'passkeys'));
        }
        const result = await finishRegistration(services, s.ownerId, registration, form!.get('name') ?? '');
        if ('added' in result) return redirect('/dashboard/passkeys?done=added');
        const { decision: _words, ...options } = result.confirm;
        return pageResponse(200, 'Confirm the new passkey', confirmAdditionPage(options, s.csrf), ownerNav(s, 'passkeys'));
      }),
      noParse,
    )
    .post(
      '/dashboard/passkeys/confirm',
      ownerPage(services, async (_c, s, form) => {
        if (wantsPasskeyOptions(form)) throw new AppError('INVALID_STATUS', 'This confirmation carries its own prompt.', { howToFix: 'Reload the Passkeys page and add the passkey again.' });
        await confirmAddition(services, s.ownerId, assertionOf(form) ?? null);
        return redirect('/dashboard/passkeys?done=added');
      }),
      noParse,
    )
    .post(
      '/dashboard/passkeys/reset/:reset_id/cancel',
      ownerPage(services, async (c, s, form) => {
        const resetId = c.params.reset_id!;
        if (wantsPasskeyOptions(form)) {
          const open = await currentReset(services, s.ownerId);
          if (!open || open.reset_id !== resetId) throw new AppError('NOT_FOUND', 'No such reset is open.', { howToFix: 'Reload the Passkeys page.' });
          return await passkeyOptions(services, s.ownerId, async () => ({ kind: 'passkey.reset_cancel', owner_id: s.ownerId, reset_id: resetId }));
        }
        await cancelOwnerReset(services, s.ownerId, resetId, assertionOf(form));
        return redirect('/dashboard/passkeys?done=reset_cancelled');
      }),
      noParse,
    )
    .post(
      '/dashboard/passkeys/:credential_id/remove',
      ownerPage(services, async (c, s, form) => {
        const credentialId = c.params.credential_id!;
        if (wantsPasskeyOptions(form)) {
          if (!(await listPasskeys(services, s.ownerId)).some((k) => k.credential_id === credentialId)) throw new AppError('NOT_FOUND', 'Passkey not found among yours.', { howToFix: 'Reload the Passkeys page.' });
          return await passkeyOptions(services, s.ownerId, async () => ({ kind: 'passkey.remove', owner_id: s.ownerId, credential_id: credentialId }));
        }
        await removeOwnerPasskey(services, s.ownerId, credentialId, assertionOf(form));
        return redirect('/dashboard/passkeys?done=removed');
      }),
      noParse,
    )
    .post(
      '/dashboard/wallets/:wallet_id/allow-cli',
      ownerPage(services, async (c, s, form) => {
        const wallet = await requireOwnerWallet(services, s.ownerId, c.params.wallet_id!);
        const decision = cliDecision(form!, s.ownerId, wallet.wallet_id);
        if (!(await hasPasskey(services, s.ownerId))) {
          if (wantsPasskeyOptions(form)) return json(200, { passkey: false });
          return problemPage(409, 'Nothing to allow', 'You have no passkey, so your owner API token (and the CLI) can already do this without a signature from this page.', html`Run the command on your own machine, or <a href="/dashboard/passkeys">add a passkey</a> first to require one.`, ownerNav(s, 'wallets'));
        }
        if (wantsPasskeyOptions(form)) return await passkeyOptions(services, s.ownerId, async () => decision);
        const grant = await grantForApi(services, s.ownerId, decision, assertionOf(form));
        const command = decision.kind === 'recovery.sweep' ? `agent-wallet owner recover sweep --kit kit.json --to ${decision.to_address}` : `agent-wallet owner recovery start ${wallet.wallet_id}`;
        return pageResponse(200, 'Allowed once', cliAllowedPage(wallet, grant, command), ownerNav(s, 'wallets'));
      }),
      noParse,
    );
}
