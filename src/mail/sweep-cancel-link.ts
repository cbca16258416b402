/**
 * The one-click cancel link in the mail that announces a recovery sweep (issue 40):
 * `/sweep-cancel/<sweep_id>/<token>`, the token an HMAC-SHA-256 of the sweep id under a key derived
 * from the daemon's master key. Nothing is stored: a link names one sweep and can only cancel it,
 * until it is signed. Cancelling is the safe direction, so whoever reads the owner's mail (a
 * stolen mailbox included) gains nothing else by it: no session, no other action. Its GET shows
 * a confirmation page (mail scanners open links); the page's POST, with its CSRF token, cancels.
 */
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { sameHash } from '../domain/api-keys.ts';
import type { Services } from '../services.ts';
import { hashToken, TOKEN_PATTERN } from './links.ts';

const INFO = new TextEncoder().encode('agent-wallet sweep cancel link v1');
const keys = new WeakMap<Uint8Array, Uint8Array>();

function linkKey(masterKey: Uint8Array): Uint8Array {
  let key = keys.get(masterKey);
  if (!key) keys.set(masterKey, (key = hkdf(sha256, masterKey, undefined, INFO, 32)));
  return key;
}

/** The token of a sweep's cancel link (43 base64url characters, like every link token). */
export function sweepCancelToken(masterKey: Uint8Array, sweepId: string): string {
  return Buffer.from(hmac(sha256, linkKey(masterKey), new TextEncoder().encode(sweepId))).toString('base64url');
}

/** The cancel link of a sweep, for its mail. */
export function sweepCancelUrl(services: Services, sweepId: string): string {
  return `${services.publicUrl()}/sweep-cancel/${sweepId}/${sweepCancelToken(services.masterKey, sweepId)}`;
}

/** Whether `token` is the cancel link token of `sweepId` (compared in constant time). */
export function validSweepCancelToken(masterKey: Uint8Array, sweepId: string, token: string): boolean {
  return TOKEN_PATTERN.test(token) && sameHash(hashToken(token), hashToken(sweepCancelToken(masterKey, sweepId)));
}
