/**
 * A JSON codec for secret protocol state — noble's `DKG_Secret` (bigints, byte arrays, caches),
 * key packages and signing nonces — so it can be sealed and stored. Plain JSON cannot hold them:
 * `JSON.stringify` throws on bigint and turns a Uint8Array into an index map.
 *
 * Format: UTF-8 JSON `{"v":1,"value":…}` where a bigint is `{"$bigint":"<decimal>"}` and a byte
 * array is `{"$bytes":"<lowercase hex>"}`. Invariant: `decode(encode(x))` deep-equals `x` for every
 * accepted `x`; values it could not restore exactly (undefined, functions, class instances such as
 * `Secret`, non-finite numbers, keys starting with `$` or named `__proto__`) are refused at encode time.
 * The output is plaintext secret material: seal it (seal.ts) before it touches disk.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

const VERSION = 1;
const DECIMAL = /^-?(0|[1-9][0-9]*)$/;
const HEX = /^(?:[0-9a-f]{2})*$/;

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function toTagged(value: unknown, path: string): unknown {
  switch (typeof value) {
    case 'bigint':
      return { $bigint: value.toString(10) };
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${path}: non-finite number cannot be encoded`);
      return value;
    case 'object': {
      if (value === null) return null;
      if (value instanceof Uint8Array) return { $bytes: bytesToHex(value) };
      if (Array.isArray(value)) return value.map((item, i) => toTagged(item, `${path}[${i}]`));
      if (!isPlainObject(value)) throw new TypeError(`${path}: only plain objects, arrays, bigints and Uint8Arrays can be encoded`);
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        if (key.startsWith('$') || key === '__proto__') throw new TypeError(`${path}.${key}: this key is reserved`);
        out[key] = toTagged(item, `${path}.${key}`);
      }
      return out;
    }
    default:
      throw new TypeError(`${path}: ${typeof value} cannot be encoded`);
  }
}

function fromTagged(value: unknown, path: string): unknown {
  if (Array.isArray(value)) return value.map((item, i) => fromTagged(item, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const [first] = entries;
  if (first !== undefined && first[0].startsWith('$')) {
    const [tag, payload] = first;
    if (entries.length !== 1 || typeof payload !== 'string') throw new TypeError(`${path}: malformed ${tag} tag`);
    if (tag === '$bigint' && DECIMAL.test(payload)) return BigInt(payload);
    if (tag === '$bytes' && HEX.test(payload)) return hexToBytes(payload);
    throw new TypeError(`${path}: malformed ${tag} tag`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of entries) {
    if (key.startsWith('$') || key === '__proto__') throw new TypeError(`${path}.${key}: reserved key`);
    out[key] = fromTagged(item, `${path}.${key}`);
  }
  return out;
}

/** Serializes secret state to bytes (see the module comment for the format and what is refused). */
export function encodeSecretState(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ v: VERSION, value: toTagged(value, 'value') }));
}

/**
 * Restores state written by `encodeSecretState`. Throws a TypeError on anything else; the caller
 * still owns checking the shape of the result.
 */
export function decodeSecretState(bytes: Uint8Array): unknown {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new TypeError('secret state is not UTF-8 JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new TypeError('secret state is not an object');
  const keys = Object.keys(doc).sort().join(',');
  if (keys !== 'v,value' || (doc as { v: unknown }).v !== VERSION) throw new TypeError('secret state has an unknown format version');
  return fromTagged((doc as { value: unknown }).value, 'value');
}
