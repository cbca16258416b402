import { describe, expect, test } from 'bun:test';
import { Type as T } from '@sinclair/typebox';
import { createApp } from '../../src/api/app.ts';
import { dispatch, type DispatchDeps } from '../../src/api/dispatch.ts';
import { IdempotencyClaims } from '../../src/api/idempotency-claims.ts';
import { Metrics } from '../../src/metrics.ts';
import { RateLimiter } from '../../src/api/rate-limit.ts';
import { buildTable, implement } from '../../src/actions/registry.ts';
import { actionTable } from '../../src/actions/index.ts';
import { action } from '../../src/contract/action.ts';
import { ERROR_CODES } from '../../src/contract/errors.ts';
import { call, memoryLogger, testServices } from '../helpers/services.ts';
import { rng } from '../helpers/random.ts';
import { ChainRejectedError } from '../../src/solana/errors.ts';

const services = testServices();
const app = createApp(services);

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.how_to_fix.length).toBeGreaterThan(0);
}

describe('envelope paths', () => {
  test('ping answers the success envelope with status, version, network, mint, treasury, fee payer and fee schedule', async () => {
    const res = await call(app, '/v1/bot', { action: 'ping' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        status: 'ok',
        version: services.version,
        network: 'simnet',
        usdc_mint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
        treasury: services.feePayer.address,
        fee_payer: services.feePayer.address,
        fees: { payment_bps: 50, payment_min: 0.01, account_setup_fee: 0.25, withdrawal_fee: 0.1 },
      },
    });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('malformed JSON is a VALIDATION_ERROR naming the body', async () => {
    const res = await call(app, '/v1/bot', undefined, { raw: '{"action": "ping",' });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.message).toContain('(body)');
  });

  test.each([
    ['empty body', ''],
    ['array body', '[1,2]'],
    ['string body', '"ping"'],
    ['null body', 'null'],
  ])('%s is a VALIDATION_ERROR', async (_name, raw) => {
    expectError(await call(app, '/v1/bot', undefined, { raw }), 400, 'VALIDATION_ERROR');
  });

  test('invalid UTF-8 is a VALIDATION_ERROR', async () => {
    const res = await app.handle(new Request('http://localhost/v1/bot', { method: 'POST', body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) }));
    const body = (await res.json()) as any;
    expect(res.status).toBe(400);
    expect(body.error.message).toContain('UTF-8');
  });

  test('a body over 64 KiB is refused before parsing, with 413', async () => {
    const res = await call(app, '/v1/bot', { action: 'ping', pad: 'x'.repeat(70 * 1024) });
    expectError(res, 413, 'VALIDATION_ERROR');
    expect(res.body.error.field).toBe('(body)');
    expect(res.body.error.message).toContain('64 KiB');
  });

  test('an unknown action lists the valid actions', async () => {
    const res = await call(app, '/v1/bot', { action: 'steal_funds' });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.message).toContain('unknown action "steal_funds"');
    expect(res.body.error.how_to_fix).toContain('ping');
  });

  test('a missing or non-string action is a VALIDATION_ERROR on /action', async () => {
    for (const body of [{}, { action: 42 }, { action: null }, { action: ['ping'] }]) {
      const res = await call(app, '/v1/bot', body);
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.field).toBe('/action');
    }
  });

  test('an unknown parameter is refused naming the field', async () => {
    const res = await call(app, '/v1/bot', { action: 'ping', extra: 1 });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.message).toContain('/extra');
  });

  test('a __proto__ key is an unknown parameter, not a prototype', async () => {
    const res = await call(app, '/v1/bot', undefined, { raw: '{"action":"ping","__proto__":{"polluted":true}}' });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(({} as any).polluted).toBeUndefined();
  });

  test('an unknown path or method is a NOT_FOUND envelope with X-Request-Id', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/v1/bot'],
      ['POST', '/v2/bot'],
      ['DELETE', '/v1/merchant'],
    ] as const) {
      const res = await call(app, path, undefined, { method });
      expectError(res, 404, 'NOT_FOUND');
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
  });

  test('an unknown action on another endpoint lists that endpoint\'s actions', async () => {
    const res = await call(app, '/v1/merchant', { action: 'pay' });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.message).toContain('/v1/merchant');
  });

  test('healthz answers ok', async () => {
    const res = await call(app, '/healthz');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
  });

  test('openapi.json describes each endpoint as a oneOf discriminated by action', async () => {
    const res = await call(app, '/v1/openapi.json');
    expect(res.status).toBe(200);
    const post = res.body.paths['/bot'].post;
    const schema = post.requestBody.content['application/json'].schema;
    expect(schema.discriminator.propertyName).toBe('action');
    expect(schema.oneOf.length).toBeGreaterThan(0);
    expect(res.body.components.schemas.bot_ping.properties.action.const).toBe('ping');
  });
});

describe('metrics', () => {
  test('metrics are refused to non-loopback callers without the token', async () => {
    const res = await call(app, '/metrics');
    expectError(res, 401, 'UNAUTHORIZED');
  });

  test('metrics with the configured token count requests by action and status', async () => {
    const s = testServices({ env: { AGENT_WALLET_SERVER_METRICS_TOKEN: 'm3trics' } });
    const a = createApp(s);
    await call(a, '/v1/bot', { action: 'ping' });
    await call(a, '/v1/bot', { action: 'nope' });
    const res = await call(a, '/metrics', undefined, { headers: { authorization: 'Bearer m3trics' } });
    expect(res.status).toBe(200);
    expect(res.body).toContain('agent_wallet_requests_total{endpoint="bot",action="ping",status="200"} 1');
    expect(res.body).toContain('agent_wallet_requests_total{endpoint="bot",action="unknown",status="400"} 1');
    expect(res.body).toContain('agent_wallet_request_duration_seconds_bucket');
  });
});

describe('rate limits', () => {
  test('the per-IP limit answers 429 with Retry-After and RateLimit headers', async () => {
    const s = testServices({ env: { AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '3' } });
    const a = createApp(s);
    for (let i = 0; i < 3; i++) expect((await call(a, '/v1/bot', { action: 'ping' })).status).toBe(200);
    const res = await call(a, '/v1/bot', { action: 'ping' });
    expectError(res, 429, 'RATE_LIMITED');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.headers.get('ratelimit-limit')).toBe('3');
  });

  test('a call without a key is counted per caller address, looked up once a call; a keyed call never looks the address up', async () => {
    const s = testServices({ env: { AGENT_WALLET_RATE_LIMITS_PER_IP_PER_MINUTE: '1' } });
    const deps: DispatchDeps = { services: s, table: actionTable(), limiter: new RateLimiter(60_000), metrics: new Metrics(), unclaimedDetails: async () => ({}), claims: new IdempotencyClaims() };
    const lookups: string[] = [];
    const from = (ip: string) => () => {
      lookups.push(ip);
      return ip;
    };
    const send = (body: string, ip: string, headers: Record<string, string> = {}) =>
      dispatch(deps, { endpoint: 'bot', request: new Request('http://localhost/v1/bot', { method: 'POST', body, headers }), ip: from(ip), requestId: 'req-ip' }).then((r) => r.response.status);
    expect(await send('{"action":"ping"}', '10.0.0.1')).toBe(200);
    expect(await send('{"action":"ping"}', '10.0.0.1')).toBe(429);
    expect(await send('{"action":"ping"}', '10.0.0.2')).toBe(200);
    expect(lookups).toEqual(['10.0.0.1', '10.0.0.1', '10.0.0.2']);
    // Counted against its key (then refused: no such key), from an address that is never looked up.
    expect(await send('{"action":"list_payment_requests"}', '10.0.0.3', { authorization: 'Bearer wallet_bot_unknown' })).toBe(401);
    expect(lookups).toHaveLength(3);
  });
});

describe('unexpected errors', () => {
  test('a handler crash is INTERNAL_ERROR without stack or SQL, logged under the request id', async () => {
    const { log, lines } = memoryLogger();
    const s = { ...testServices(), log };
    const crashing = implement(
      { crash: action({ endpoint: 'bot', auth: 'none', params: T.Object({}, { additionalProperties: false }), summary: 'test' }) },
      {
        crash: async ({ services: sv }) => {
          await sv.db.all('SELECT * FROM no_such_table');
        },
      },
    );
    const deps: DispatchDeps = { services: s, table: buildTable([crashing]), limiter: new RateLimiter(60_000), metrics: new Metrics(), unclaimedDetails: async () => ({}), claims: new IdempotencyClaims() };
    const { response } = await dispatch(deps, {
      endpoint: 'bot',
      request: new Request('http://localhost/v1/bot', { method: 'POST', body: '{"action":"crash"}' }),
      ip: () => '127.0.0.1',
      requestId: 'req-123',
    });
    const text = await response.text();
    expect(response.status).toBe(500);
    expect(JSON.parse(text).error.code).toBe('INTERNAL_ERROR');
    expect(text).not.toContain('no_such_table');
    expect(text).not.toContain('SELECT');
    expect(text).not.toContain('at ');
    const logged = lines.map((l) => JSON.parse(l)).find((e) => e.msg === 'internal error');
    expect(logged.request_id).toBe('req-123');
    expect(logged.error).toContain('no_such_table');
  });

  test('a chain refusal reaching the dispatcher is SERVICE_UNAVAILABLE with how_to_fix and Retry-After, logged with its kind and logs, never INTERNAL_ERROR', async () => {
    const { log, lines } = memoryLogger();
    const s = { ...testServices(), log };
    const refused = implement(
      { refused: action({ endpoint: 'bot', auth: 'none', params: T.Object({}, { additionalProperties: false }), summary: 'test' }) },
      {
        refused: () => {
          throw new ChainRejectedError('simulation_failed', 'Transaction simulation failed', ['Program log: insufficient lamports']);
        },
      },
    );
    const deps: DispatchDeps = { services: s, table: buildTable([refused]), limiter: new RateLimiter(60_000), metrics: new Metrics(), unclaimedDetails: async () => ({}), claims: new IdempotencyClaims() };
    const { response } = await dispatch(deps, {
      endpoint: 'bot',
      request: new Request('http://localhost/v1/bot', { method: 'POST', body: '{"action":"refused"}' }),
      ip: () => '127.0.0.1',
      requestId: 'req-chain',
    });
    expectError({ status: response.status, body: await response.json() }, 503, 'SERVICE_UNAVAILABLE');
    expect(response.headers.get('retry-after')).toBe('10');
    const logged = lines.map((l) => JSON.parse(l)).find((e) => e.msg === 'chain refused a transaction');
    expect(logged).toMatchObject({ request_id: 'req-chain', kind: 'simulation_failed', logs: ['Program log: insufficient lamports'] });
    expect(lines.some((l) => JSON.parse(l).msg === 'internal error')).toBe(false);
  });
});

describe('fuzz', () => {

  test('2,000 random and garbled requests all get a valid envelope, never 5xx', async () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
    const r = rng(seed);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const values = [null, true, false, 0, -1, 1e308, -0, 2 ** 53 + 1, '', ' ', 'ping', '١', '\u202e', '\u0000', '💸', [], {}, [1, [2]], { a: { b: {} } }, 'x'.repeat(3000)];
    const actions = ['ping', 'register', 'pay', 'info', '', 'PING', 'ping ', '__proto__', 'constructor', 'toString'];
    const paths = ['/v1/bot', '/v1/merchant', '/v1/public', '/v1/owner'];
    const garble = (s: string) => {
      const chars = [...s];
      const n = Math.floor(r() * 4);
      for (let i = 0; i < n && chars.length; i++) chars[Math.floor(r() * chars.length)] = String.fromCharCode(Math.floor(r() * 0x2fff));
      return chars.join('');
    };
    for (let i = 0; i < 2000; i++) {
      const body: Record<string, unknown> = {};
      if (r() < 0.9) body.action = r() < 0.7 ? pick(actions) : pick(values);
      const extra = Math.floor(r() * 4);
      for (let k = 0; k < extra; k++) body[pick(['amount', 'to', 'name', '__proto__', 'constructor', 'x', ''])] = pick(values);
      let raw = JSON.stringify(body);
      if (r() < 0.3) raw = garble(raw);
      if (r() < 0.05) raw = raw.slice(0, Math.floor(r() * raw.length));
      const headers: Record<string, string> = {};
      if (r() < 0.4) headers.authorization = pick(['Bearer', 'Bearer ', 'Bearer wallet_bot_', 'Bearer wallet_bot_' + 'A'.repeat(44), 'Basic abc', 'Bearer wallet_merchant_x', `Bearer ${'z'.repeat(300)}`]);
      if (r() < 0.3) headers['content-type'] = pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/json; charset=latin1']);
      if (r() < 0.1) headers['x-idempotency-key'] = pick(['', 'k', '\u00e9', 'x'.repeat(300)]);
      const method = r() < 0.9 ? 'POST' : 'GET';
      const path = pick(paths) + (method === 'GET' ? `?action=${encodeURIComponent(String(pick(actions)))}` : '');
      const res = await call(app, path, undefined, { method, raw: method === 'GET' ? undefined : raw, headers });
      const context = `seed ${seed}, request ${i}: ${method} ${path} ${raw.slice(0, 200)}`;
      if (res.status >= 500 || typeof res.body !== 'object' || res.body === null) throw new Error(`bad response (${res.status}) for ${context}`);
      if (res.body.success === true) continue;
      const err = res.body.error;
      if (!ERROR_CODES.includes(err?.code) || err.code === 'INTERNAL_ERROR' || !err.how_to_fix || typeof err.message !== 'string') {
        throw new Error(`bad envelope ${JSON.stringify(res.body)} for ${context}`);
      }
    }
  });
});
