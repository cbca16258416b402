/**
 * Rules for the human-facing identity of wallets and merchants: display names, usernames,
 * e-mail addresses and claim codes. Pure: randomness is passed in where it matters.
 */
import { base32 } from '../contract/ids.ts';

export type Check<T> = { ok: true; value: T } | { ok: false; reason: string };

// Control characters (C0, DEL, C1) and the bidi controls that can make a name read backwards.
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u;

/** A display name: NFC, trimmed, 1–64 visible characters, no control or bidi-override characters. */
export function checkName(raw: string): Check<string> {
  const value = raw.normalize('NFC').trim();
  if (FORBIDDEN.test(value)) return { ok: false, reason: 'contains control or bidirectional-override characters' };
  const length = [...value].length;
  if (length < 1) return { ok: false, reason: 'must not be empty' };
  if (length > 64) return { ok: false, reason: `must be at most 64 characters (got ${length})` };
  return { ok: true, value };
}

const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** An e-mail address in the common ASCII form (what SMTP servers accept), stored lower-cased. */
export function checkEmail(raw: string): Check<string> {
  const value = raw.trim();
  if (value.length > 254 || !EMAIL.test(value)) return { ok: false, reason: 'must be an e-mail address like owner@example.com' };
  return { ok: true, value: value.toLowerCase() };
}

/** The slug of a display name: lower-case ASCII letters, digits and single dashes, ≤ 24 chars. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 24)
    .replace(/-+$/, '');
  return slug || 'agent';
}

/** A generated wallet username: the slug of the name plus a short random suffix (`alice-bot-7k2m`). */
export function generateUsername(name: string, random: Uint8Array): string {
  return `${slugify(name)}-${base32(random).slice(0, 4)}`;
}

const USERNAME = /^[a-z0-9](?:[a-z0-9-]{1,30}[a-z0-9])$/;

/** A username chosen by a merchant: 3–32 of a-z, 0-9 and inner dashes. */
export function checkUsername(raw: string): Check<string> {
  const value = raw.trim().toLowerCase();
  if (!USERNAME.test(value) || value.includes('--')) return { ok: false, reason: 'must be 3–32 characters of a-z, 0-9 and single inner dashes' };
  return { ok: true, value };
}

const CLAIM_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';

/**
 * A claim code a human can read aloud and type: 8 characters (~40 bits) from an alphabet without
 * 0/O/1/I/L, as XXXX-XXXX. Rejection sampling keeps it unbiased; 32 random bytes are plenty.
 */
export function generateClaimCode(random: Uint8Array): string {
  const limit = 256 - (256 % CLAIM_ALPHABET.length);
  let code = '';
  for (const byte of random) {
    if (byte >= limit) continue;
    code += CLAIM_ALPHABET[byte % CLAIM_ALPHABET.length];
    if (code.length === 8) return `${code.slice(0, 4)}-${code.slice(4)}`;
  }
  throw new Error('not enough random bytes for a claim code');
}

/** Normalises what a human typed (case, spaces, dashes) before comparing. */
export function normalizeClaimCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, '');
}

/** Masks an e-mail for public display: `al***@example.com`. */
export function maskEmail(email: string): string {
  const [local = '', domain = ''] = email.split('@');
  return `${local.slice(0, 2)}***@${domain}`;
}
