/**
 * Oversized bodies over real HTTP (the daemon's server settings, via startTestServer): every one
 * is answered by the app with the JSON envelope, never by Bun's empty 413, whether its length is
 * declared or it comes chunked.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { MAX_BODY_BYTES } from '../../src/api/body.ts';
import { startTestServer, testServices } from '../helpers/services.ts';

const services = testServices();
const server = await startTestServer(services);
const origin = server.url.replace(/\/v1$/, '');
afterAll(() => server.stop());

/** `{"action":"ping"}` padded with spaces (still valid JSON) to exactly `size` bytes. */
function pingOf(size: number): Uint8Array {
  const json = '{"action":"ping"}';
  return new TextEncoder().encode(json + ' '.repeat(size - json.length));
}

/** The bytes as a chunked stream (no Content-Length), 16 KiB a chunk. */
function chunked(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.byteLength) return c.close();
      c.enqueue(bytes.subarray(at, at + 16 * 1024));
      at += 16 * 1024;
    },
  });
}

async function post(body: Uint8Array | ReadableStream<Uint8Array>, path = '/v1/bot'): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${origin}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, duplex: 'half' } as RequestInit);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? '(empty)' : JSON.parse(text) };
}

function expectTooLarge(res: { status: number; headers: Headers; body: any }) {
  expect(res.status).toBe(413);
  expect(res.headers.get('content-type')).toStartWith('application/json');
  expect(res.body).toEqual({
    success: false,
    error: { code: 'VALIDATION_ERROR', field: '(body)', message: '(body): larger than 64 KiB', how_to_fix: 'Send a JSON body of at most 64 KiB (65536 bytes).' },
  });
}

describe('body size limit over HTTP', () => {
  test('exactly 64 KiB is read and answered', async () => {
    const res = await post(pingOf(MAX_BODY_BYTES));
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
  });

  for (const [label, size] of [
    ['64 KiB + 1', MAX_BODY_BYTES + 1],
    ['100 KB', 100_000],
    ['300 KB', 300_000],
    ['10 MB', 10_000_000],
  ] as const) {
    test(`${label} with a declared length gets 413 with the envelope`, async () => {
      expectTooLarge(await post(pingOf(size)));
    });
  }

  test('chunked bodies are counted while read: 64 KiB passes, 64 KiB + 1 and 300 KB get 413 with the envelope', async () => {
    const fits = await post(chunked(pingOf(MAX_BODY_BYTES)));
    expect(fits.status).toBe(200);
    expect(fits.body.success).toBe(true);
    expectTooLarge(await post(chunked(pingOf(MAX_BODY_BYTES + 1))));
    expectTooLarge(await post(chunked(pingOf(300_000))));
  });

  test('a declared 5 GB is refused from the headers alone, and the connection is closed', async () => {
    const url = new URL(origin);
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      Bun.connect({
        hostname: url.hostname,
        port: Number(url.port),
        socket: {
          open(s) {
            s.write(`POST /v1/bot HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 5000000000\r\n\r\n{"action":"ping"`);
          },
          data(_s, d) {
            text += d.toString();
          },
          close: () => resolve(text),
          error: (_s, err) => reject(err),
        },
      }).catch(reject);
    });
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toStartWith('HTTP/1.1 413');
    expect(head!.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(body!).error).toMatchObject({ code: 'VALIDATION_ERROR', field: '(body)' });
  });

  test('a page form over its limit gets the 413 page, not an empty answer', async () => {
    const res = await fetch(`${origin}/login`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `email=${'a'.repeat(300_000)}` });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toStartWith('text/html');
    expect(await res.text()).toContain('The form is too large.');
  });

  test('a chunked page form over its limit gets the 413 page', async () => {
    const res = await fetch(`${origin}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: chunked(new TextEncoder().encode(`email=${'a'.repeat(300_000)}`)),
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.text()).toContain('The form is too large.');
  });
});
