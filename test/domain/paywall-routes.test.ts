import { describe, expect, test } from 'bun:test';
import { parseRoute, priceOf, routingPath, type PricedRoute } from '../../src/domain/paywall-routes.ts';

const routes = (...texts: string[]): PricedRoute[] =>
  texts.map((t) => {
    const p = parseRoute(t);
    if (!p.ok) throw new Error(p.reason);
    return p.route;
  });

describe('paywall routes', () => {
  test('parses METHOD /path=price into micro-USDC; a lower-case method and spaces around = are fine', () => {
    expect(parseRoute('get /api/* = 0.01')).toEqual({ ok: true, route: { method: 'GET', pattern: '/api/*', price: 10_000n, text: 'GET /api/*=0.01' } });
    expect(parseRoute('* /report=2.5')).toMatchObject({ ok: true, route: { method: '*', price: 2_500_000n } });
  });

  test.each([
    ['GET /api', 'is not METHOD /path=PRICE'],
    ['GET api/*=0.01', 'is not METHOD /path=PRICE'],
    ['FETCH /api=0.01', 'is not an HTTP method'],
    ['GET /api=0', 'greater than 0'],
    ['GET /api=-1', 'must be greater than 0'],
    ['GET /api=0.0000001', 'more than 6 decimal places'],
    ['GET /api=1e3', 'plain decimal'],
  ])('refuses %p, saying why', (text, reason) => {
    const p = parseRoute(text);
    expect(p.ok).toBe(false);
    expect(p.ok ? '' : p.reason).toContain(reason);
  });

  test('the first matching route prices; * matches any run of characters; HEAD is priced as GET; an unmatched path is free', () => {
    const r = routes('GET /api/premium/*=1', 'GET /api/*=0.01', 'POST /api/*/upload=0.5', '* /admin=9');
    expect(priceOf(r, 'GET', '/api/premium/x')?.price).toBe(1_000_000n);
    expect(priceOf(r, 'GET', '/api/joke')?.price).toBe(10_000n);
    expect(priceOf(r, 'HEAD', '/api/joke')?.price).toBe(10_000n);
    expect(priceOf(r, 'POST', '/api/files/upload')?.price).toBe(500_000n);
    expect(priceOf(r, 'POST', '/api/files/download')).toBeNull();
    expect(priceOf(r, 'DELETE', '/admin')?.price).toBe(9_000_000n);
    expect(priceOf(r, 'GET', '/admin/x')).toBeNull();
    expect(priceOf(r, 'GET', '/apix')).toBeNull();
    expect(priceOf(routes('GET /a*b*c=1'), 'GET', '/abc')?.price).toBe(1_000_000n);
    expect(priceOf(routes('GET /a*bc*c=1'), 'GET', '/abc')).toBeNull();
  });

  test.each([
    ['/API/Secret', '/api/secret'],
    ['/api/secret/', '/api/secret'],
    ['//api///secret//', '/api/secret'],
    ['/%61pi/%73ecret', '/api/secret'],
    ['/free/%2e%2E/api/./secret', '/api/secret'],
    ['/../../api', '/api'],
    ['/caf%C3%A9', '/café'],
    ['/a%3Fb', '/a?b'],
    ['/', '/'],
    ['', '/'],
  ])('the routing path of %p is %p: escapes decoded, case folded, dot-segments resolved, empty segments dropped', (raw, routed) => {
    expect(routingPath(raw)).toEqual({ ok: true, path: routed });
  });

  test.each([
    ['/api%2Fsecret', 'escape "%2F"'],
    ['/api%5csecret', 'escape "%5c"'],
    ['/%252e%252e/api', 'escape "%25"'],
    ['/api%00', 'escape "%00"'],
    ['/api%0a', 'escape "%0a"'],
    ['/api%7F', 'escape "%7F"'],
    ['/api/%zz', 'starts no %XX escape'],
    ['/api/%', 'starts no %XX escape'],
    ['/api/%C3', 'not UTF-8'],
    ['/api\\secret', 'backslash'],
    ['/api\u0000', 'control character'],
  ])('refuses the ambiguous path %p, saying why', (raw, reason) => {
    const r = routingPath(raw);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.reason).toContain(reason);
  });

  test("a route's path is read as a routing path too: any case, a trailing slash, escapes; an ambiguous one is refused", () => {
    expect(parseRoute('GET /API/Report/=1')).toMatchObject({ ok: true, route: { pattern: '/api/report', text: 'GET /API/Report/=1' } });
    expect(parseRoute('GET /%61pi/*=1')).toMatchObject({ ok: true, route: { pattern: '/api/*' } });
    const bad = parseRoute('GET /a%2Fb=1');
    expect(bad.ok ? '' : bad.reason).toContain('the path "/a%2Fb" has the escape "%2F"');
  });

  test('a routing path matches with or without its trailing slash: /api (sent as /api/) is priced by /api/*', () => {
    const r = routes('GET /api/*=1', 'GET /report=2');
    expect(priceOf(r, 'GET', '/api')?.price).toBe(1_000_000n);
    expect(priceOf(r, 'GET', '/report')?.price).toBe(2_000_000n);
    expect(priceOf(r, 'GET', '/apix')).toBeNull();
    expect(priceOf(r, 'GET', '/')).toBeNull();
  });
});
