/**
 * The outbound client against real loopback sockets. Every refused case must fail before any
 * socket is opened: the loopback guard records connect attempts (and blocks anything that is not
 * loopback), and a canary TCP listener on 127.0.0.1 counts the connections it accepts; every
 * loopback spelling targets the canary's port. No test uses real DNS: each passes a resolver.
 */
import { afterAll, beforeEach, describe, expect, it } from 'bun:test';
import { connectAttempts, resetConnectAttempts } from './loopback-guard.ts';
import { connect } from 'node:net';
import { createOutbound, OutboundError, type OutboundErrorKind, type OutboundOptions } from '../../src/net/outbound.ts';

const canaryConnections = { count: 0 };
const canary = Bun.listen({
  hostname: '127.0.0.1',
  port: 0,
  socket: {
    open() {
      canaryConnections.count += 1;
    },
    data(socket) {
      socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 6\r\nconnection: close\r\n\r\ncanary');
    },
  },
});
const port = canary.port;

const fakeDns: Record<string, string[]> = {
  'localhost': ['127.0.0.1'],
  'internal.test': ['10.0.0.5'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['93.184.216.34', '10.0.0.5'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'hexloop.test': ['0x7f.1'],
  'ula.test': ['fd12::1'],
  'pinned.test': ['127.0.0.1'],
};
const resolved: string[] = [];
async function resolve(host: string): Promise<string[]> {
  resolved.push(host);
  const addresses = fakeDns[host];
  if (addresses === undefined) throw new Error(`ENOTFOUND ${host}`);
  return addresses;
}

function outbound(overrides: Partial<OutboundOptions> = {}) {
  return createOutbound({ allowHosts: [], resolve, ...overrides });
}

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof OutboundError) return err;
    throw err;
  }
  throw new Error('expected the request to fail');
}

const servers: { stop(force?: boolean): void }[] = [];
afterAll(() => {
  for (const server of servers) server.stop(true);
  canary.stop(true);
});

beforeEach(() => {
  resetConnectAttempts();
  canaryConnections.count = 0;
  resolved.length = 0;
});

const refused: Array<[string, OutboundErrorKind]> = [
  // loopback, every spelling, aimed at the canary
  [`http://127.0.0.1:${port}/`, 'refused_address'],
  [`http://127.1:${port}/`, 'refused_address'],
  [`http://127.0.0.1.:${port}/`, 'refused_address'],
  [`http://2130706433:${port}/`, 'refused_address'],
  [`http://0x7f000001:${port}/`, 'refused_address'],
  [`http://0x7f.1:${port}/`, 'refused_address'],
  [`http://0177.0.0.1:${port}/`, 'refused_address'],
  [`http://127.0.0.2:${port}/`, 'refused_address'],
  [`HTTP://127.0.0.1:${port}/`, 'refused_address'],
  [`https://127.0.0.1:${port}/`, 'refused_address'],
  [`http://localhost:${port}/`, 'refused_address'],
  [`http://[::1]:${port}/`, 'refused_address'],
  [`http://[::ffff:127.0.0.1]:${port}/`, 'refused_address'],
  [`http://[::ffff:7f00:1]:${port}/`, 'refused_address'],
  [`http://[::127.0.0.1]:${port}/`, 'refused_address'],
  [`http://[64:ff9b::7f00:1]:${port}/`, 'refused_address'],
  [`http://[2002:7f00:1::1]:${port}/`, 'refused_address'],
  [`http://mapped.test:${port}/`, 'refused_address'],
  [`http://hexloop.test:${port}/`, 'refused_address'],
  // unspecified (reaches this host on Linux)
  [`http://0.0.0.0:${port}/`, 'refused_address'],
  [`http://0:${port}/`, 'refused_address'],
  [`http://[::]:${port}/`, 'refused_address'],
  // RFC 1918, also spelled as numbers
  ['http://10.0.0.1/', 'refused_address'],
  ['http://172.16.0.1/', 'refused_address'],
  ['http://172.31.255.254/', 'refused_address'],
  ['http://192.168.1.1/', 'refused_address'],
  ['http://167772161/', 'refused_address'],
  ['http://0xa000001/', 'refused_address'],
  ['http://0xac100001/', 'refused_address'],
  ['http://3232235777/', 'refused_address'],
  ['http://0300.0250.1.1/', 'refused_address'],
  ['http://[::ffff:10.0.0.1]/', 'refused_address'],
  // cloud metadata and link-local
  ['http://169.254.169.254/latest/meta-data/', 'refused_address'],
  ['http://2852039166/', 'refused_address'],
  ['http://169.254.43518/', 'refused_address'],
  ['http://[::ffff:a9fe:a9fe]/', 'refused_address'],
  ['http://metadata.test/', 'refused_address'],
  ['http://[fe80::1]/', 'refused_address'],
  // CGNAT, multicast, broadcast, reserved
  ['http://100.64.0.1/', 'refused_address'],
  ['http://224.0.0.1/', 'refused_address'],
  ['http://[ff02::1]/', 'refused_address'],
  ['http://255.255.255.255/', 'refused_address'],
  ['http://240.0.0.1/', 'refused_address'],
  ['http://198.18.0.1/', 'refused_address'],
  ['http://192.0.0.170/', 'refused_address'],
  // IPv6 ULA and embeddings of private IPv4
  ['http://[fd00::1]/', 'refused_address'],
  ['http://ula.test/', 'refused_address'],
  ['http://[64:ff9b::a00:1]/', 'refused_address'],
  ['http://[64:ff9b::192.168.1.1]/', 'refused_address'],
  ['http://[2002:c0a8:101::1]/', 'refused_address'],
  ['http://[2002:a9fe:a9fe::]/', 'refused_address'],
  // names whose (injected) resolution is private, even partly
  ['http://internal.test/', 'refused_address'],
  ['http://mixed.test/', 'refused_address'],
  // userinfo and fragment tricks
  [`http://example.com@127.0.0.1:${port}/`, 'bad_url'],
  [`http://user:pass@127.0.0.1:${port}/`, 'bad_url'],
  [`http://@127.0.0.1:${port}/`, 'bad_url'],
  [`http://127.0.0.1:${port}#@example.com/`, 'refused_address'],
  [`http://127.0.0.1:${port}\\@example.com/`, 'refused_address'],
  // schemes other than http(s), and non-URLs
  ['file:///etc/passwd', 'bad_url'],
  [`ftp://127.0.0.1:${port}/`, 'bad_url'],
  [`gopher://127.0.0.1:${port}/_GET%20/`, 'bad_url'],
  ['data:text/plain,hello', 'bad_url'],
  ['javascript:alert(1)', 'bad_url'],
  [`ws://127.0.0.1:${port}/`, 'bad_url'],
  ['http://', 'bad_url'],
  ['not a url', 'bad_url'],
  // resolution failures
  ['http://nowhere.test/', 'dns_failed'],
];

describe('createOutbound refuses before connecting', () => {
  it('has a matrix of at least 40 refused forms', () => {
    expect(refused.length).toBeGreaterThanOrEqual(40);
  });

  it.each(refused)('refuses %s with %s and opens no connection', async (url, kind) => {
    const err = await failure(outbound().request(url, { maxBytes: 1024 }));
    expect(err.kind).toBe(kind);
    expect(err.maybeSent).toBe(false);
    expect(connectAttempts).toEqual([]);
    expect(canaryConnections.count).toBe(0);
  });

  it.each([
    ['an invalid method', { method: 'GET /admin HTTP/1.1\r\nX:' }],
    ['a header value with CRLF', { headers: { 'x-a': 'b\r\nhost: evil.test' } }],
    ['an invalid header name', { headers: { 'bad name': 'x' } }],
  ])('refuses %s as bad_request before resolving', async (_label, extra) => {
    const err = await failure(outbound({ allowHosts: ['pinned.test'] }).request('http://pinned.test/', { maxBytes: 1, ...extra }));
    expect(err.kind).toBe('bad_request');
    expect(resolved).toEqual([]);
    expect(connectAttempts).toEqual([]);
  });

  it('does not leak the resolved private address in the message', async () => {
    const err = await failure(outbound().request('http://internal.test/', { maxBytes: 1024 }));
    expect(err.message).toContain('private');
    expect(err.message).not.toContain('10.0.0.5');
  });

  it('refuses a host whose resolver yields nothing', async () => {
    const err = await failure(outbound({ resolve: async () => [] }).request('http://empty.test/', { maxBytes: 1 }));
    expect(err.kind).toBe('dns_failed');
  });

  it('times out a resolver that never answers, within the total deadline', async () => {
    const stuck = outbound({ resolve: () => new Promise<string[]>(() => {}), totalTimeoutMs: 200 });
    const err = await failure(stuck.request('http://slow-dns.test/', { maxBytes: 1 }));
    expect(err.kind).toBe('timeout');
    expect(err.maybeSent).toBe(false);
    expect(connectAttempts).toEqual([]);
  });

  it('does not let an allowlisted name vouch for another name resolving to the same address', async () => {
    const err = await failure(outbound({ allowHosts: ['pinned.test'] }).request(`http://localhost:${port}/`, { maxBytes: 1 }));
    expect(err.kind).toBe('refused_address');
    expect(canaryConnections.count).toBe(0);
  });
});

describe('the loopback guard of these tests', () => {
  it('throws before opening a socket to a non-loopback address', () => {
    expect(() => connect({ host: '10.0.0.1', port: 80 })).toThrow('loopback guard');
    expect(connectAttempts).toEqual(['10.0.0.1']);
  });
});

describe('createOutbound with an allowlist', () => {
  it('reaches an allowlisted loopback address and returns status, headers and body', async () => {
    const res = await outbound({ allowHosts: ['127.0.0.1'] }).request(`http://127.0.0.1:${port}/`, { maxBytes: 1024 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(new TextDecoder().decode(res.body)).toBe('canary');
    expect(res.truncated).toBe(false);
    expect(canaryConnections.count).toBe(1);
  });

  it('resolves an allowlisted name once and connects to the checked address with the original Host', async () => {
    const seen: { host: string | null; method: string; body: string; path: string }[] = [];
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        const url = new URL(req.url);
        seen.push({ host: req.headers.get('host'), method: req.method, body: await req.text(), path: url.pathname + url.search });
        return new Response('ok');
      },
    });
    servers.push(server);
    const res = await outbound({ allowHosts: ['pinned.test'] }).request(`http://pinned.test:${server.port}/hook?x=1#frag`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', host: 'evil.test' },
      body: '{"a":1}',
      maxBytes: 1024,
    });
    expect(res.status).toBe(200);
    expect(resolved).toEqual(['pinned.test']);
    expect(connectAttempts).toEqual(['127.0.0.1']);
    expect(seen).toEqual([{ host: `pinned.test:${server.port}`, method: 'POST', body: '{"a":1}', path: '/hook?x=1' }]);
  });

  it('returns a 302 to a loopback URL as is and never follows it', async () => {
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${port}/` } }),
    });
    servers.push(server);
    const res = await outbound({ allowHosts: ['127.0.0.1'] }).request(`http://127.0.0.1:${server.port}/`, { maxBytes: 1024 });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`http://127.0.0.1:${port}/`);
    expect(connectAttempts).toEqual(['127.0.0.1']);
    expect(canaryConnections.count).toBe(0);
  });

  it('cuts a body larger than maxBytes at maxBytes and says so', async () => {
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('x'.repeat(200_000)) });
    servers.push(server);
    const client = outbound({ allowHosts: ['127.0.0.1'] });
    const big = await client.request(`http://127.0.0.1:${server.port}/`, { maxBytes: 1000 });
    expect(big.body.length).toBe(1000);
    expect(big.truncated).toBe(true);
    const exact = await client.request(`http://127.0.0.1:${server.port}/`, { maxBytes: 200_000 });
    expect(exact.body.length).toBe(200_000);
    expect(exact.truncated).toBe(false);
  });

  it('fails with kind timeout when the server never answers within totalTimeoutMs', async () => {
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Promise<Response>(() => {}) });
    servers.push(server);
    const started = performance.now();
    const err = await failure(
      outbound({ allowHosts: ['127.0.0.1'], totalTimeoutMs: 300 }).request(`http://127.0.0.1:${server.port}/`, { maxBytes: 10 }),
    );
    expect(err.kind).toBe('timeout');
    expect(err.maybeSent).toBe(true);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('fails with kind timeout when the body stalls after the headers', async () => {
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('partial'));
            },
          }),
        ),
    });
    servers.push(server);
    const err = await failure(
      outbound({ allowHosts: ['127.0.0.1'], totalTimeoutMs: 300 }).request(`http://127.0.0.1:${server.port}/`, { maxBytes: 1024 }),
    );
    expect(err.kind).toBe('timeout');
  });

  it('fails with kind timeout, not sent, when the TLS handshake does not finish within connectTimeoutMs', async () => {
    const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
    servers.push(silent);
    const started = performance.now();
    const client = outbound({ allowHosts: ['127.0.0.1'], connectTimeoutMs: 200, totalTimeoutMs: 10_000 });
    const err = await failure(client.request(`https://127.0.0.1:${silent.port}/`, { maxBytes: 1 }));
    expect(err.kind).toBe('timeout');
    expect(err.maybeSent).toBe(false);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('reports network_error, maybe sent, when the server closes before the announced body ends', async () => {
    const liar = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data(socket) {
          socket.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort');
        },
      },
    });
    servers.push(liar);
    const err = await failure(outbound({ allowHosts: ['127.0.0.1'] }).request(`http://127.0.0.1:${liar.port}/`, { maxBytes: 1000 }));
    expect(err.kind).toBe('network_error');
    expect(err.maybeSent).toBe(true);
  });

  it('reports connect_failed, not sent, when nothing listens on the port', async () => {
    const closed = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
    const deadPort = closed.port;
    closed.stop(true);
    const err = await failure(outbound({ allowHosts: ['127.0.0.1'] }).request(`http://127.0.0.1:${deadPort}/`, { maxBytes: 1 }));
    expect(err.kind).toBe('connect_failed');
    expect(err.maybeSent).toBe(false);
  });

  it('keeps TLS verification on: a self-signed certificate for the pinned name is tls_failed', async () => {
    const dir = `${import.meta.dir}/fixtures`;
    const seen: string[] = [];
    const server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      tls: {
        cert: Bun.file(`${dir}/self-signed-test-only.cert.pem`),
        key: Bun.file(`${dir}/self-signed-test-only.key.pem`),
      },
      fetch(req) {
        seen.push(req.url);
        return new Response('should not be read');
      },
    });
    servers.push(server);
    const err = await failure(outbound({ allowHosts: ['pinned.test'] }).request(`https://pinned.test:${server.port}/`, { maxBytes: 1 }));
    expect(err.kind).toBe('tls_failed');
    expect(err.maybeSent).toBe(false);
    expect(seen).toEqual([]);
    expect(connectAttempts).toEqual(['127.0.0.1']);
  });
});
