/**
 * Request bodies read with a limit. A declared Content-Length is checked before a byte is read;
 * a body without one (chunked) is counted while it is read and abandoned at the limit. Every
 * refusal is ours, with our answer: Bun's own, above its `maxRequestBodySize`, is a 413 with an
 * empty body, so the servers set that cap out of reach (`SERVER_BODY_CAP`). Bun hands a request
 * to the app as soon as its headers arrive, so the cap buys no memory safety that the readers
 * here do not already give.
 */

/** Largest JSON body of the API (DESIGN §3). */
export const MAX_BODY_BYTES = 64 * 1024;

/** The `maxRequestBodySize` of the HTTP servers: never reached, see above. */
export const SERVER_BODY_CAP = Number.MAX_SAFE_INTEGER;

/**
 * The body's bytes, or null when it is larger than `limit`. With a declared length the bytes
 * come from `request.bytes()` directly: the HTTP framing holds the body to that length.
 */
export function bodyWithin(request: Request, limit: number): Promise<Uint8Array | null> {
  const declared = request.headers.get('content-length');
  if (declared === null) return countedBody(request, limit);
  return Number(declared) > limit ? Promise.resolve(null) : request.bytes();
}

async function countedBody(request: Request, limit: number): Promise<Uint8Array | null> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
