import { describe, expect, test } from 'bun:test';
import { parseRoute, priceOf, type PricedRoute } from '../../src/domain/paywall-routes.ts';

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
});
