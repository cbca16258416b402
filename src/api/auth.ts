/**
 * Bearer-key authentication (SPEC "Authentication"). The principal comes from the key alone.
 * A missing, malformed, wrong-kind or unknown key is the same 401 with a how_to_fix naming
 * the header and prefix to send.
 */
import type { Store } from '../db/store.ts';
import type { AuthKind } from '../contract/action.ts';
import { KEY_PREFIXES, hashApiKey, isWellFormedKey, sameHash, type KeyKind } from '../domain/api-keys.ts';
import { findMerchantByKeyHash, findWalletByKeyHash, type KeyHolder } from '../db/credentials.ts';
import { findOwnerByTokenHash } from '../db/owners.ts';
import { AppError } from '../errors.ts';
import type { Principal } from '../domain/principal.ts';

type KeyResolver = (db: Store, hash: Uint8Array) => Promise<KeyHolder | null>;

/** One resolver per key kind; owner tokens resolve through owner_tokens (revoked ones to nobody). */
const RESOLVERS: Partial<Record<KeyKind, KeyResolver>> = { bot: findWalletByKeyHash, merchant: findMerchantByKeyHash, owner: findOwnerByTokenHash };

function unauthorized(kind: KeyKind, message: string): AppError {
  return new AppError('UNAUTHORIZED', message, {
    howToFix: `Send the header "Authorization: Bearer ${KEY_PREFIXES[kind]}…" with the ${kind} API key${kind === 'bot' ? ' returned by register' : ''}.`,
  });
}

/** Reads the bearer token from the Authorization header, or null. */
export function bearerToken(headers: Headers): string | null {
  const value = headers.get('authorization');
  if (!value) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(value);
  return m ? m[1]! : null;
}

/** The bearer token of a request and its SHA-256, computed once for the rate limiter and authentication. */
export interface Credential {
  token: string;
  hash: Uint8Array;
}

export function credentialOf(headers: Headers): Credential | null {
  const token = bearerToken(headers);
  return token === null ? null : { token, hash: hashApiKey(token) };
}

/** Authenticates a request for an action requiring `auth` from its credential; throws UNAUTHORIZED. */
export async function authenticate(db: Store, credential: Credential | null, auth: AuthKind): Promise<Principal> {
  if (auth === 'none') return { kind: 'none' };
  if (!credential) throw unauthorized(auth, 'Missing API key.');
  const { token, hash } = credential;
  if (!isWellFormedKey(token, auth)) throw unauthorized(auth, `Invalid API key: this endpoint takes a ${KEY_PREFIXES[auth]}… key.`);
  const holder = (await RESOLVERS[auth]?.(db, hash)) ?? null;
  if (!holder || !sameHash(holder.keyHash, hash)) throw unauthorized(auth, 'Invalid API key.');
  switch (auth) {
    case 'bot':
      return { kind: 'bot', walletId: holder.id, claimed: holder.claimed };
    case 'merchant':
      return { kind: 'merchant', merchantId: holder.id };
    case 'owner':
      return { kind: 'owner', ownerId: holder.id, tokenId: holder.tokenId ?? '' };
  }
}
