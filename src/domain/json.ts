/** A parsed JSON value that is an object (not null, not an array): what untrusted bodies are checked with. */
export function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
