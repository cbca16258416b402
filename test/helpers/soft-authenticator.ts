/**
 * A software WebAuthn authenticator for tests (issue 44): one P-256 credential (ES256, WebCrypto)
 * that answers real registration ceremonies (attestation "none": a CBOR attestationObject whose
 * authenticator data carries the COSE public key) and real assertions (authenticatorData =
 * sha256(rpId) | flags | counter, clientDataJSON {type, challenge, origin}, a DER ECDSA signature
 * over authenticatorData | sha256(clientDataJSON)) — what a browser and a platform authenticator
 * send, byte for byte in shape. It stands in for them where Chromium's virtual authenticator cannot
 * make the case under test, so every answer has switches for an attacker's (or a broken device's)
 * version: user verification off, another origin, another RP ID, a chosen (stale) counter, a
 * challenge of the caller's own, the wrong ceremony type.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (bytes: Uint8Array | ArrayBuffer) => Buffer.from(bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes).toString('base64url');
const sha256 = async (bytes: Uint8Array) => new Uint8Array(await crypto.subtle.digest('SHA-256', Uint8Array.from(bytes)));
const utf8 = (s: string) => new TextEncoder().encode(s);

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

/** What a ceremony's options carry that the authenticator uses (the JSON the server hands the browser). */
export interface CeremonyOptions {
  challenge: string;
  rp?: { id?: string };
  rpId?: string;
}

/** The switches of one answer; each default is what an honest browser on `origin` sends. */
export interface AnswerSwitches {
  /** The page's origin the browser reports (default: the authenticator's). */
  origin?: string;
  /** The RP ID whose hash the authenticator data starts with (default: the options', else the authenticator's). */
  rpId?: string;
  /** false: the UV flag is not set (a device that did not verify the user). */
  userVerified?: boolean;
  /** false: the UP flag is not set either. */
  userPresent?: boolean;
  /** The signature counter to report (default: one more than the last). A value not above the last one is a stale counter. */
  counter?: number;
  /** A challenge of the caller's choosing instead of the options' (a forged or replayed prompt). */
  challenge?: string;
  /** The clientData type (default: webauthn.create / webauthn.get). */
  type?: string;
}

function derSignature(raw: Uint8Array): Uint8Array {
  // WebCrypto answers IEEE P1363 (r | s, 32 bytes each); WebAuthn carries ASN.1 DER.
  const int = (half: Uint8Array) => {
    let i = 0;
    while (i < half.length - 1 && half[i] === 0) i++;
    let v = half.slice(i);
    if (v[0]! & 0x80) v = Uint8Array.from([0, ...v]);
    return Uint8Array.from([0x02, v.length, ...v]);
  };
  const r = int(raw.slice(0, 32));
  const s = int(raw.slice(32, 64));
  return Uint8Array.from([0x30, r.length + s.length, ...r, ...s]);
}

function counterBytes(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n >>> 0, false);
  return out;
}

export class SoftAuthenticator {
  /** The credential's id (raw bytes; base64url in every JSON). */
  readonly credentialId: Uint8Array;
  /** The last counter this authenticator reported. */
  counter = 0;
  private constructor(
    private readonly keys: CryptoKeyPair,
    private readonly publicCose: Uint8Array,
    /** The origin an honest browser reports for this authenticator's pages. */
    readonly origin: string,
    /** The RP ID it was made for (the origin's host unless said). */
    readonly rpId: string,
  ) {
    this.credentialId = crypto.getRandomValues(new Uint8Array(32));
  }

  /** A new credential for `origin` (the daemon's public URL origin: http://localhost:PORT in tests). */
  static async create(origin: string, rpId = new URL(origin).hostname): Promise<SoftAuthenticator> {
    const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
    const jwk = await crypto.subtle.exportKey('jwk', keys.publicKey);
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Uint8Array.from(Buffer.from(jwk.x!, 'base64url'))],
        [-3, Uint8Array.from(Buffer.from(jwk.y!, 'base64url'))],
      ]) as never,
    );
    return new SoftAuthenticator(keys, cose, origin, rpId);
  }

  /** The credential id as the JSON ceremonies and the ledger name it. */
  get id(): string {
    return b64url(this.credentialId);
  }

  /** The COSE public key, base64url, as the decision log records it. */
  get publicKey(): string {
    return b64url(this.publicCose);
  }

  private async authData(rpId: string, flags: number, counter: number, attested?: Uint8Array): Promise<Uint8Array> {
    return Uint8Array.from([...(await sha256(utf8(rpId))), flags, ...counterBytes(counter), ...(attested ?? [])]);
  }

  private flags(s: AnswerSwitches): number {
    return (s.userPresent === false ? 0 : FLAG_UP) | (s.userVerified === false ? 0 : FLAG_UV);
  }

  private clientData(type: string, challenge: string, origin: string): Uint8Array {
    return utf8(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** The browser's answer to registration options (navigator.credentials.create → toJSON). */
  async register(options: CeremonyOptions, s: AnswerSwitches = {}): Promise<RegistrationResponseJSON> {
    const rpId = s.rpId ?? options.rp?.id ?? this.rpId;
    const counter = s.counter ?? 0;
    this.counter = counter;
    const aaguid = new Uint8Array(16);
    const idLen = Uint8Array.from([this.credentialId.length >> 8, this.credentialId.length & 0xff]);
    const authData = await this.authData(rpId, this.flags(s) | FLAG_AT, counter, Uint8Array.from([...aaguid, ...idLen, ...this.credentialId, ...this.publicCose]));
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]) as never);
    const clientDataJSON = this.clientData(s.type ?? 'webauthn.create', s.challenge ?? options.challenge, s.origin ?? this.origin);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
        publicKeyAlgorithm: -7,
        publicKey: b64url(await crypto.subtle.exportKey('spki', this.keys.publicKey)),
        authenticatorData: b64url(authData),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** The browser's answer to authentication options (navigator.credentials.get → toJSON), signed by this credential. */
  async assert(options: CeremonyOptions, s: AnswerSwitches = {}): Promise<AuthenticationResponseJSON> {
    const rpId = s.rpId ?? options.rpId ?? this.rpId;
    const counter = s.counter ?? this.counter + 1;
    this.counter = Math.max(this.counter, counter);
    const authData = await this.authData(rpId, this.flags(s), counter);
    const clientDataJSON = this.clientData(s.type ?? 'webauthn.get', s.challenge ?? options.challenge, s.origin ?? this.origin);
    const signed = Uint8Array.from([...authData, ...(await sha256(clientDataJSON))]);
    const raw = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, this.keys.privateKey, signed));
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(derSignature(raw)),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
