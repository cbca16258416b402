/**
 * Sign-In With Solana (CAIP-122 `siws`, as x402's `sign-in-with-x` extension writes it): the text
 * a wallet signs to prove it is the one that paid for a resource, and the rules under which our
 * wallet signs one at all. The daemon builds the text from a seller's challenge and checks it
 * before it takes part in signing; the agent's client parses the text the daemon hands it and
 * checks it against its own request before its share. Both apply `siwsProblem` to what they
 * know: neither trusts the other's word (DESIGN §4).
 *
 * Never signed: a text for another host or resource, another chain, without a fresh nonce, out of
 * its time window, with line breaks smuggled into a field, or whose bytes decode as a Solana
 * transaction or message (a sign-in must never double as a transfer). Pure: the clock is given.
 */
import { getCompiledTransactionMessageDecoder, getTransactionDecoder } from '@solana/kit';

/** The fields of a sign-in, as the challenge gives them plus the wallet's address and chain. */
export interface SiwsFields {
  domain: string;
  address: string;
  statement?: string;
  uri: string;
  version: string;
  /** CAIP-2, e.g. solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1. */
  chainId: string;
  nonce: string;
  issuedAt: string;
  expirationTime?: string;
  notBefore?: string;
  requestId?: string;
  resources?: string[];
}

/** What the signer expects: the URL it fetches, its own address and chain, and now. */
export interface SiwsExpectation {
  url: string;
  address: string;
  chainId: string;
  now: Date;
}

/** The longest a sign-in may stay valid, and how old or early its issue time may be. */
export const MAX_SIGN_IN_LIFETIME_MS = 10 * 60_000;
const MAX_AGE_MS = 5 * 60_000;
const MAX_SKEW_MS = 60_000;

/** The text of a sign-in (the SIWS layout the official x402 packages sign and verify). */
export function siwsMessage(f: SiwsFields): string {
  const lines = [`${f.domain} wants you to sign in with your Solana account:`, f.address, ''];
  if (f.statement) lines.push(f.statement, '');
  lines.push(`URI: ${f.uri}`, `Version: ${f.version}`, `Chain ID: ${f.chainId.slice(f.chainId.indexOf(':') + 1)}`, `Nonce: ${f.nonce}`, `Issued At: ${f.issuedAt}`);
  if (f.expirationTime) lines.push(`Expiration Time: ${f.expirationTime}`);
  if (f.notBefore) lines.push(`Not Before: ${f.notBefore}`);
  if (f.requestId) lines.push(`Request ID: ${f.requestId}`);
  if (f.resources?.length) lines.push('Resources:', ...f.resources.map((r) => `- ${r}`));
  return lines.join('\n');
}

/**
 * Reads a sign-in text back into its fields (the chain as given: the caller supplies the CAIP-2
 * namespace). Null when it is not exactly a SIWS text.
 */
export function parseSiwsMessage(text: string, chainNamespace = 'solana'): SiwsFields | null {
  const lines = text.split('\n');
  const head = /^(.+) wants you to sign in with your Solana account:$/.exec(lines[0] ?? '');
  if (!head || lines[2] !== '') return null;
  const f: Partial<SiwsFields> = { domain: head[1]!, address: lines[1] ?? '' };
  let i = 3;
  if (lines[i] !== undefined && !lines[i]!.startsWith('URI: ')) {
    f.statement = lines[i];
    if (lines[i + 1] !== '') return null;
    i += 2;
  }
  const take = (label: string): string | undefined => {
    const line = lines[i];
    if (line === undefined || !line.startsWith(`${label}: `)) return undefined;
    i++;
    return line.slice(label.length + 2);
  };
  f.uri = take('URI');
  f.version = take('Version');
  const chain = take('Chain ID');
  f.nonce = take('Nonce');
  f.issuedAt = take('Issued At');
  if (f.uri === undefined || f.version === undefined || chain === undefined || f.nonce === undefined || f.issuedAt === undefined) return null;
  f.chainId = `${chainNamespace}:${chain}`;
  f.expirationTime = take('Expiration Time');
  f.notBefore = take('Not Before');
  f.requestId = take('Request ID');
  if (lines[i] === 'Resources:') {
    i++;
    f.resources = [];
    while (lines[i]?.startsWith('- ')) f.resources.push(lines[i++]!.slice(2));
  }
  if (i !== lines.length) return null;
  for (const k of ['expirationTime', 'notBefore', 'requestId'] as const) if (f[k] === undefined) delete f[k];
  return f as SiwsFields;
}

/** Whether `bytes` decode as a Solana transaction or a transaction message. */
export function decodesAsSolana(bytes: Uint8Array): boolean {
  for (const decode of [(b: Uint8Array) => getTransactionDecoder().decode(b), (b: Uint8Array) => getCompiledTransactionMessageDecoder().decode(b)]) {
    try {
      decode(bytes);
      return true;
    } catch {
      // Not that shape.
    }
  }
  return false;
}

/** Why our wallet must not sign this sign-in, or null when it may. */
export function siwsProblem(f: SiwsFields, expect: SiwsExpectation): string | null {
  let target: URL;
  let uri: URL;
  try {
    target = new URL(expect.url);
    uri = new URL(f.uri);
  } catch {
    return 'the sign-in URI is not a URL';
  }
  for (const [name, value] of Object.entries(f)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v !== 'string' || /[\r\n\u2028\u2029]/.test(v))) return `the sign-in field ${name} carries a line break or is not text`;
  }
  if (f.domain.toLowerCase() !== target.host.toLowerCase()) return `the sign-in is for ${f.domain}, not ${target.host}, the host being fetched`;
  if (uri.origin !== target.origin) return `the sign-in URI ${f.uri} is not on ${target.origin}`;
  for (const r of f.resources ?? []) {
    let resource: URL;
    try {
      resource = new URL(r);
    } catch {
      return `the sign-in resource ${r} is not a URL`;
    }
    if (resource.origin !== target.origin) return `the sign-in resource ${r} is not on ${target.origin}`;
  }
  if (f.address !== expect.address) return `the sign-in is for ${f.address}, not this wallet (${expect.address})`;
  if (f.chainId !== expect.chainId) return `the sign-in is for chain ${f.chainId}, not ${expect.chainId}`;
  if (f.version !== '1') return `the sign-in version is ${f.version}, not 1`;
  if (!/^[A-Za-z0-9]{8,128}$/.test(f.nonce)) return 'the sign-in nonce is not 8–128 letters and digits';
  if (f.statement !== undefined && f.statement.length > 200) return 'the sign-in statement is longer than 200 characters';
  const now = expect.now.getTime();
  const issued = Date.parse(f.issuedAt);
  if (!Number.isFinite(issued) || issued < now - MAX_AGE_MS || issued > now + MAX_SKEW_MS) return `the sign-in was issued at ${f.issuedAt}, outside the last 5 minutes`;
  if (f.expirationTime === undefined) return 'the sign-in never expires; only a sign-in valid for at most 10 minutes is signed';
  const expires = Date.parse(f.expirationTime);
  if (!Number.isFinite(expires) || expires <= now) return `the sign-in expired at ${f.expirationTime}`;
  if (expires > now + MAX_SIGN_IN_LIFETIME_MS) return `the sign-in stays valid until ${f.expirationTime}, more than 10 minutes from now`;
  if (f.notBefore !== undefined && !(Date.parse(f.notBefore) <= now + MAX_SKEW_MS)) return `the sign-in is valid only from ${f.notBefore}`;
  if (decodesAsSolana(new TextEncoder().encode(siwsMessage(f)))) return 'the sign-in text decodes as a Solana transaction or message';
  return null;
}
