/**
 * The paywall prices a path the way its upstream routes it (issue 40, item 4): in front of a real
 * Express upstream (case-insensitive, a trailing slash ignored) and a real Hono upstream (the path
 * percent-decoded), every spelling of a priced path either pays (402 without payment) or is
 * refused (400, ambiguous); none reaches the paid content free. The requests go over a raw socket,
 * byte for byte as written here: a fetch would normalise some of them on the way.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { Hono } from 'hono';
import { parseRoute } from '../../src/domain/paywall-routes.ts';
import { startPaywall, type Paywall } from '../../src/x402/paywall.ts';
import { ApiClient } from '../../src/client/api.ts';
import { generateKeyPairSigner } from '@solana/kit';
import { startWorld, type World } from '../helpers/world.ts';

let world: World;
let expressServer: Server;
let expressPort: number;
let honoServer: ReturnType<typeof Bun.serve>;
const gates: Record<'express' | 'hono', Paywall> = {} as never;
/** What each upstream served, paid content marked. */
const served: Record<'express' | 'hono', string[]> = { express: [], hono: [] };

const SECRET = 'the paid content';

beforeAll(async () => {
  world = await startWorld();
  const payout = (await generateKeyPairSigner()).address;
  await world.fund(payout, 0n);
  const { api_key } = await new ApiClient(world.url).call<{ api_key: string }>('merchant', 'register', { name: 'Paths', username: 'paths-api', payout_address: payout });

  // Express's defaults: case-insensitive routing, a trailing slash ignored (strict: false).
  const app = express();
  for (const path of ['/api/secret', '/report']) {
    app.get(path, (req, res) => {
      served.express.push(`paid ${req.url}`);
      res.send(SECRET);
    });
  }
  app.use((req, res) => {
    served.express.push(`free ${req.url}`);
    res.status(404).send('not found');
  });
  expressServer = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => expressServer.once('listening', resolve));
  expressPort = (expressServer.address() as AddressInfo).port;

  // Hono's defaults: the path percent-decoded, case-sensitive, strict about a trailing slash.
  const hono = new Hono();
  for (const path of ['/api/secret', '/report']) {
    hono.get(path, (c) => {
      served.hono.push(`paid ${c.req.path}`);
      return c.text(SECRET);
    });
  }
  hono.notFound((c) => {
    served.hono.push(`free ${c.req.path}`);
    return c.text('not found', 404);
  });
  honoServer = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: hono.fetch });

  const routes = ['GET /api/*=0.01', 'GET /report=0.01'].map((t) => {
    const parsed = parseRoute(t);
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.route;
  });
  const gate = (upstream: string) => startPaywall({ server: world.url, merchantKey: api_key, upstream, routes, hostname: '127.0.0.1', port: 0, journal: ':memory:', log: () => {} });
  gates.express = await gate(`http://127.0.0.1:${expressPort}`);
  gates.hono = await gate(`http://127.0.0.1:${honoServer.port}`);
});

afterAll(async () => {
  await gates.express?.stop();
  await gates.hono?.stop();
  await new Promise((resolve) => expressServer?.close(resolve));
  await honoServer?.stop(true);
  await world?.stop();
});

/** GET `path` exactly as written (no client normalises it), over a fresh connection. */
function rawGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`));
    let raw = '';
    socket.on('data', (chunk) => (raw += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      let body = rest.join('\r\n\r\n');
      if (/transfer-encoding: chunked/i.test(head)) body = body.replace(/(^|\r\n)[0-9a-f]+\r\n/gi, '$1').replace(/\r\n$/, '');
      resolve({ status, body });
    });
  });
}

const portOf = (name: 'express' | 'hono') => (name === 'express' ? expressPort : honoServer.port!);
const gatePort = (name: 'express' | 'hono') => Number(new URL(gates[name].url).port);

/** Spellings each upstream routes to its paid handler although they are not the route as written. */
const EVASIONS = {
  express: ['/API/secret', '/Api/Secret', '/api/secret/', '/report/', '/Report', '/REPORT/'],
  hono: ['/%61pi/secret', '/api/%73ecret', '/%72eport', '/%72%65%70%6F%72%74', '/%61pi/secret?x=1'],
} as const;

/** Other spellings: dot-segments, doubled slashes, escaped dots; each must pay or be refused. */
const OTHERS = ['/api/secret', '/report', '//api/secret', '/api//secret', '/free/../api/secret', '/free/%2e%2e/api/secret', '/free/%2E%2E/%61PI/Secret/', '/./report', '/%2e/report'];

/** Ambiguous: an escaped slash or backslash, an escaped %, NUL, an escape that is not one, bytes that are not UTF-8. */
const AMBIGUOUS = ['/api%2Fsecret', '/api%2fsecret', '/api%5Csecret', '/%2525/api/secret', '/%252e%252e/api/secret', '/api/secret%00', '/api/%zzsecret', '/api/secret%', '/api/%C3secret', '/report%0A'];

describe.each(['express', 'hono'] as const)('in front of %s', (name) => {
  test('each spelling the upstream routes to its paid handler reaches it directly, and answers 402 through the paywall; the upstream never sees them', async () => {
    for (const path of EVASIONS[name]) expect({ path, ...(await rawGet(portOf(name), path)) }).toEqual({ path, status: 200, body: SECRET });
    const before = served[name].length;
    const through = [];
    for (const path of EVASIONS[name]) through.push({ path, status: (await rawGet(gatePort(name), path)).status });
    expect(through).toEqual(EVASIONS[name].map((path) => ({ path, status: 402 })));
    expect(served[name].slice(before)).toEqual([]);
  });

  test('dot-segments, doubled slashes and escaped dots pay too; ambiguous paths are refused with 400 saying why; nothing reaches the upstream', async () => {
    const before = served[name].length;
    const through = [];
    for (const path of OTHERS) through.push({ path, status: (await rawGet(gatePort(name), path)).status });
    expect(through).toEqual(OTHERS.map((path) => ({ path, status: 402 })));
    for (const path of AMBIGUOUS) {
      const r = await rawGet(gatePort(name), path);
      expect({ path, status: r.status }).toEqual({ path, status: 400 });
      expect(JSON.parse(r.body)).toMatchObject({ error: 'ambiguous_path', how_to_fix: expect.any(String) });
    }
    expect(served[name].slice(before)).toEqual([]);
  });

  test('a free path still passes through, its spelling untouched', async () => {
    const r = await rawGet(gatePort(name), '/Free/Page/');
    expect(r.status).toBe(404);
    expect(served[name].at(-1)).toBe('free /Free/Page/');
  });
});
