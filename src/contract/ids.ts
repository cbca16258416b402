/**
 * Prefixed random identifiers (DESIGN §3). The prefix tells a human and a log reader what an id
 * names; the random part is 128 bits in lower-case Crockford base32 (no i, l, o, u).
 */

export const ID_PREFIXES = {
  wallet: 'wal',
  transaction: 'tx',
  paymentRequest: 'req',
  fundRequest: 'fr',
  withdrawal: 'wd',
  approval: 'apr',
  event: 'evt',
  merchant: 'mer',
  x402: 'x402',
  x402SignIn: 'siwx',
  x402Sale: 'sale',
  saleFeeInvoice: 'inv',
  dkgSession: 'dkg',
  signSession: 'sig',
  owner: 'own',
  export: 'exp',
  request: 'rq',
  ownerToken: 'otk',
  mail: 'mail',
  catalogEntry: 'cat',
  recoveryEnrollment: 'rce',
  keyRefresh: 'kr',
  recoverySweep: 'rsw',
  passkeyGrant: 'pkg',
  passkeyReset: 'pkr',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Encodes bytes in lower-case Crockford base32 without padding. */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/** A fresh id such as `wal_7k2m…` (26 random base32 characters). */
export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${base32(crypto.getRandomValues(new Uint8Array(16)))}`;
}

/** The shape an id of `kind` must have; used to validate ids in params before any lookup. */
export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIXES[kind]}_[0-9a-hjkmnp-tv-z]{26}$`;
}
