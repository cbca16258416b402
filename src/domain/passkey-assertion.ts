/**
 * Checking an owner's passkey assertion over a decision (DESIGN §7.1), by the daemon before it
 * acts and by `verify-log` offline, with the same rules: the client data's challenge is the
 * decision's (src/domain/owner-decision.ts), its origin and the RP ID are those the credential was
 * registered on, user verification is set, and the signature checks with the credential's public
 * key. The WebAuthn parsing and signature check are @simplewebauthn/server's.
 */
import { verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import { decisionChallenge, sameDecision, type OwnerDecision } from './owner-decision.ts';

/** What a decision's log row carries: the assertion and what it was made over. */
export interface PasskeyEvidence {
  credential_id: string;
  decision: OwnerDecision;
  nonce: string;
  /** The authenticator's answer as the browser gave it (base64url fields). */
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string };
}

/** A credential as the log and the ledger keep it: COSE public key (base64url) and where it was registered. */
export interface PasskeyKey {
  credential_id: string;
  public_key: string;
  rp_id: string;
  origin: string;
}

export type AssertionCheck = { ok: true; counter: number } | { ok: false; reason: string };

const isB64url = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length < 8192 && /^[A-Za-z0-9_-]+$/.test(v);

/** The evidence shape of an untrusted value (a form field, a log row), or null. */
export function evidenceOf(v: unknown): PasskeyEvidence | null {
  if (typeof v !== 'object' || v === null) return null;
  const e = v as Record<string, any>;
  const r = e.response as Record<string, unknown> | undefined;
  if (!isB64url(e.credential_id) || typeof e.nonce !== 'string' || typeof e.decision !== 'object' || e.decision === null || !r) return null;
  if (!isB64url(r.clientDataJSON) || !isB64url(r.authenticatorData) || !isB64url(r.signature)) return null;
  if (r.userHandle !== undefined && r.userHandle !== null && !isB64url(r.userHandle)) return null;
  return {
    credential_id: e.credential_id,
    decision: e.decision as OwnerDecision,
    nonce: e.nonce,
    response: { clientDataJSON: r.clientDataJSON, authenticatorData: r.authenticatorData, signature: r.signature, ...(typeof r.userHandle === 'string' ? { userHandle: r.userHandle } : {}) },
  };
}

/**
 * Whether `evidence` is `key`'s valid assertion over `expected`. `counter` is the signature counter
 * last seen (0 offline: a log is checked for who signed, not for cloned authenticators).
 */
export async function checkAssertion(evidence: PasskeyEvidence, expected: OwnerDecision, key: PasskeyKey, counter = 0): Promise<AssertionCheck> {
  if (evidence.credential_id !== key.credential_id) return { ok: false, reason: 'the assertion is by another credential' };
  if (!sameDecision(evidence.decision, expected)) return { ok: false, reason: 'the assertion is over another decision than this one' };
  const response: AuthenticationResponseJSON = {
    id: evidence.credential_id,
    rawId: evidence.credential_id,
    type: 'public-key',
    response: evidence.response,
    clientExtensionResults: {},
  };
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: decisionChallenge(expected, evidence.nonce),
      expectedOrigin: key.origin,
      expectedRPID: key.rp_id,
      expectedType: 'webauthn.get',
      credential: { id: key.credential_id, publicKey: Uint8Array.from(Buffer.from(key.public_key, 'base64url')), counter },
      requireUserVerification: true,
    });
    if (!result.verified) return { ok: false, reason: 'the signature does not check with the credential' };
    return { ok: true, counter: result.authenticationInfo.newCounter };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}
