/**
 * What the signed-in owner's pages share (src/web/routes.ts, src/web/passkey-routes.ts): the
 * session and CSRF check of every dashboard route, and the passkey glue's options step
 * (src/web/passkey-script.ts), which is answered as JSON — errors included — where a form post
 * gets a page.
 */
import { AppError } from '../errors.ts';
import type { Services } from '../services.ts';
import { problemPage, redirect, type Nav } from './html.ts';
import { errorPage, page, type Ctx } from './page-handler.ts';
import { currentOwner, readForm, validSessionCsrf, type OwnerSession } from './session.ts';

const CSRF_REFUSED = 'This form was refused because its security token is missing or does not match (CSRF protection).';
const CSRF_HOW = 'Go back, reload the page and submit the form again.';

/** The page of a form whose CSRF token is missing or wrong. */
export const csrfRefused = (n: Nav = {}) => problemPage(403, 'Form expired', CSRF_REFUSED, CSRF_HOW, n);

/** Whether a form POST is the glue's options step (src/web/passkey-script.ts). */
export const wantsPasskeyOptions = (form: URLSearchParams | null): boolean => form?.get('passkey_step') === 'options';

/** The browser's assertion a form carries (the glue's hidden `passkey` field), or undefined. */
export function assertionOf(form: URLSearchParams | null): string | undefined {
  const v = form?.get('passkey');
  return v ? v : undefined;
}

/** A JSON answer of a page route (the options step), never cached. */
export const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } });

/** An error of the options step as JSON the glue shows (the envelope of the API). */
export function jsonError(err: unknown, services: Services): Response {
  if (err instanceof AppError) return json(err.status, err.toEnvelope());
  services.log.error('passkey options failed', { error: (err as Error)?.message, stack: (err as Error)?.stack });
  return json(500, { success: false, error: { code: 'INTERNAL_ERROR', message: 'The passkey prompt could not be prepared.', how_to_fix: 'Reload the page and try again.' } });
}

/** The navigation of a signed-in owner's page. */
export const ownerNav = (s: OwnerSession, current?: Nav['current']): Nav => ({ email: s.email, csrf: s.csrf, current });

/** A page of the signed-in owner (else to sign-in); POSTs need the session's CSRF token, answered as JSON on the options step. */
export function ownerPage(services: Services, handler: (c: Ctx, s: OwnerSession, form: URLSearchParams | null) => Response | Promise<Response>) {
  return page(services, async (c) => {
    const session = await currentOwner(services, c.request);
    let form: URLSearchParams | null = null;
    if (c.request.method === 'POST') form = await readForm(c.request);
    if (!session) return wantsPasskeyOptions(form) ? json(401, new AppError('UNAUTHORIZED', 'You are signed out.', { howToFix: 'Sign in again and retry.' }).toEnvelope()) : redirect('/login');
    if (form && !validSessionCsrf(session, form.get('csrf'))) {
      return wantsPasskeyOptions(form) ? json(403, new AppError('UNAUTHORIZED', CSRF_REFUSED, { status: 403, howToFix: CSRF_HOW }).toEnvelope()) : csrfRefused(ownerNav(session));
    }
    try {
      return await handler(c, session, form);
    } catch (err) {
      if (wantsPasskeyOptions(form)) return jsonError(err, services);
      if (err instanceof AppError) return errorPage(err, ownerNav(session));
      throw err;
    }
  });
}
