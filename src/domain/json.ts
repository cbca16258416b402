/** A parsed JSON value that is an object (not null, not an array): what untrusted bodies are checked with. */
export function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * JSON.stringify with `bigints` rendering each bigint. A replacer makes stringify several times
 * slower and most values carry no bigint, so plain first; a value with one throws a TypeError and
 * is written again with the replacer.
 */
export function stringifyWithBigints(value: unknown, bigints: (bigint: bigint) => unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? bigints(v) : v));
  }
}

/** JSON text with bigints as decimal strings: what the ledger stores in its events, audit, decision and webhook rows. */
export function jsonText(value: unknown): string {
  return stringifyWithBigints(value, String);
}
