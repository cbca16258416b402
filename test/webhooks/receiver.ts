/**
 * Test helpers for webhooks: a real HTTP receiver on loopback that records every request and
 * answers from a script, and an independent Standard Webhooks verifier written from the spec
 * (standard-webhooks `spec/standard-webhooks.md`) with WebCrypto — deliberately not src/net.
 */
import { getBase58Decoder } from '@solana/kit';

export interface Received {
  path: string;
  headers: Headers;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Statuses still to answer, in order; when empty, `fallback` is answered. */
  script: number[];
  fallback: number;
  /** Resolves once `n` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  stop(): void;
}

/** Starts a receiver on 127.0.0.1 (port 0) answering `script` in order, then `fallback`. */
export function startReceiver(script: number[] = [], fallback = 200, extraHeaders: (status: number) => Record<string, string> = () => ({})): Receiver {
  const requests: Received[] = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests,
    script: [...script],
    fallback,
    async waitFor(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() > deadline) throw new Error(`receiver got ${requests.length} requests, expected ${n}`);
        await Bun.sleep(25);
      }
    },
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      requests.push({ path: new URL(req.url).pathname, headers: req.headers, body: await req.text(), at: Date.now() });
      const status = receiver.script.length ? receiver.script.shift()! : receiver.fallback;
      return new Response(status >= 200 && status < 300 ? 'ok' : `status ${status}`, { status, headers: extraHeaders(status) });
    },
  });
  receiver.port = server.port!;
  receiver.url = `http://127.0.0.1:${server.port}/hook`;
  return receiver;
}

/** A TCP listener that only counts connections: nothing may ever reach it. */
export function startCanary(): { port: number; connections: () => number; stop(): void } {
  let count = 0;
  const listener = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open() {
        count++;
      },
      data(socket) {
        socket.end('HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\ncanary');
      },
    },
  });
  return { port: listener.port, connections: () => count, stop: () => listener.stop(true) };
}

/**
 * The receiver's check, from the Standard Webhooks spec: the key is the base64 decoding of the
 * secret after "whsec_"; the signed content is `${webhook-id}.${webhook-timestamp}.${body}`;
 * webhook-signature is a space-separated list of `v1,<base64 HMAC-SHA256>`; the timestamp must
 * be within `toleranceSeconds` of `nowSeconds`.
 */
export async function verifyStandardWebhook(secret: string, headers: Headers, body: string, nowSeconds: number, toleranceSeconds = 300): Promise<boolean> {
  if (!secret.startsWith('whsec_')) return false;
  const id = headers.get('webhook-id');
  const timestamp = headers.get('webhook-timestamp');
  const signatures = headers.get('webhook-signature');
  if (!id || !timestamp || !signatures || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const key = await crypto.subtle.importKey('raw', Buffer.from(secret.slice('whsec_'.length), 'base64'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${body}`)));
  const expected = Buffer.from(mac).toString('base64');
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    return version === 'v1' && signature === expected;
  });
}

/** A random valid Solana address (32 random bytes, base58) that nobody controls. */
export function randomAddress(): string {
  return getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)));
}
