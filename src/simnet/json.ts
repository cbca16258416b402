/**
 * JSON text for RPC answers. The real Solana RPC writes u64 values (lamports, rentEpoch
 * u64::MAX, slots) as bare JSON numbers, which `JSON.stringify` cannot do for `bigint`;
 * kit's client parses them back into `bigint` without loss. Simnet keeps such values as
 * `bigint` internally and renders them here, digit for digit.
 */

/** Serialises `value` like `JSON.stringify` (undefined members omitted), writing `bigint` as a bare number. */
export function encodeJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : encodeJson(v))).join(',')}]`;
      const parts: string[] = [];
      for (const [k, v] of Object.entries(value)) {
        if (v !== undefined) parts.push(`${JSON.stringify(k)}:${encodeJson(v)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return 'null';
  }
}
