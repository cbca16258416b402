/**
 * Owner browser sessions and CSRF protection of the pages.
 *
 * - Session: cookie `aw_session` (HttpOnly, SameSite=Lax, Path=/, Secure when served over TLS or
 *   behind an https public_url); the database keeps only its SHA-256. Lifetime 7 days.
 * - CSRF: every form carries a `csrf` field. With a session it is bound to the session
 *   (SHA-256 of a label and the session secret: unguessable without the cookie). Without one
 *   (claim page, approval links, sign-in) it is a double-submit token: a random `aw_csrf` cookie
 *   that the form must repeat. Compared in constant time.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bodyWithin } from '../api/body.ts';
import { deleteSession, findSession, getOwner } from '../db/owners.ts';
import { sameHash } from '../domain/api-keys.ts';
import { hashToken, newToken, TOKEN_PATTERN } from '../mail/links.ts';
import type { Services } from '../services.ts';

export const SESSION_COOKIE = 'aw_session';
export const CSRF_COOKIE = 'aw_csrf';
export const SESSION_DAYS = 7;
const SESSION_MS = SESSION_DAYS * 24 * 60 * 60 * 1000;

/** The cookies of a request. */
export function cookies(request: Request): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/** Whether cookies must be Secure: the request came over TLS or the public URL is https. */
export function secureContext(services: Services, request: Request): boolean {
  return new URL(request.url).protocol === 'https:' || services.publicUrl().startsWith('https://');
}

function cookie(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** A signed-in owner as the pages see them. */
export interface OwnerSession {
  ownerId: string;
  email: string;
  /** The CSRF token of this session's forms. */
  csrf: string;
  sessionHash: Uint8Array;
}

function sessionCsrf(sessionToken: string): string {
  return Buffer.from(sha256(new TextEncoder().encode(`aw-csrf:${sessionToken}`))).toString('base64url');
}

/** A fresh session secret, its hash to store, its expiry and the cookie that carries it. */
export function newSession(services: Services, request: Request): { hash: Uint8Array; expiresAt: number; setCookie: string } {
  const { token, hash } = newToken();
  return { hash, expiresAt: services.now().getTime() + SESSION_MS, setCookie: cookie(SESSION_COOKIE, token, SESSION_MS / 1000, secureContext(services, request)) };
}

/** The owner of the request's live session, or null. */
export async function currentOwner(services: Services, request: Request): Promise<OwnerSession | null> {
  const token = cookies(request).get(SESSION_COOKIE);
  if (!token || !TOKEN_PATTERN.test(token)) return null;
  const hash = hashToken(token);
  const row = await findSession(services.db, hash, services.now().getTime());
  if (!row || !sameHash(row.session_hash, hash)) return null;
  const owner = await getOwner(services.db, row.owner_id);
  if (!owner) return null;
  return { ownerId: owner.owner_id, email: owner.email, csrf: sessionCsrf(token), sessionHash: hash };
}

/** Ends the session and returns the cookie that clears it. */
export async function endSession(services: Services, request: Request, session: OwnerSession): Promise<string> {
  await services.db.transaction(async () => await deleteSession(services.db, session.sessionHash));
  return cookie(SESSION_COOKIE, '', 0, secureContext(services, request));
}

/**
 * The double-submit token for forms shown without a session: the request's `aw_csrf` cookie, or
 * a new one (then `setCookie` must go out with the page).
 */
export function anonymousCsrf(services: Services, request: Request): { token: string; setCookie: string | null } {
  const existing = cookies(request).get(CSRF_COOKIE);
  if (existing && TOKEN_PATTERN.test(existing)) return { token: existing, setCookie: null };
  const { token } = newToken();
  return { token, setCookie: cookie(CSRF_COOKIE, token, 24 * 60 * 60, secureContext(services, request)) };
}

function sameToken(a: string, b: string): boolean {
  return a.length > 0 && sameHash(hashToken(a), hashToken(b));
}

/** Checks a session form's CSRF field. */
export function validSessionCsrf(session: OwnerSession, submitted: string | null): boolean {
  return submitted !== null && sameToken(submitted, session.csrf);
}

/** Checks an anonymous form's CSRF field against its cookie. */
export function validAnonymousCsrf(request: Request, submitted: string | null): boolean {
  const cookieToken = cookies(request).get(CSRF_COOKIE);
  return submitted !== null && cookieToken !== undefined && TOKEN_PATTERN.test(cookieToken) && sameToken(submitted, cookieToken);
}

/** Largest form body the pages accept (the advanced guard-rails editor is the largest form). */
export const MAX_FORM_BYTES = 64 * 1024;

/** Thrown by `readForm` for a body that is too large or not a form. */
export class FormError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'FormError';
  }
}

/** Reads an urlencoded form body with a size cap (routes are mounted with `parse: 'none'`). */
export async function readForm(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get('content-type') ?? '';
  if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) throw new FormError(415, 'The form must be sent as application/x-www-form-urlencoded.');
  const bytes = await bodyWithin(request, MAX_FORM_BYTES);
  if (bytes === null) throw new FormError(413, 'The form is too large.');
  return new URLSearchParams(new TextDecoder().decode(bytes));
}
