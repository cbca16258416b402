import { expect, test } from 'bun:test';
import { clientAddress } from '../../src/net/client-ip.ts';

const proxies = new Set(['127.0.0.1', '10.0.0.2']);

test("a request from a trusted proxy is the client's in X-Forwarded-For: the nearest address that is not a proxy", () => {
  expect(clientAddress('127.0.0.1', '203.0.113.7', proxies)).toBe('203.0.113.7');
  // Through two proxies of ours: the balancer appended the edge proxy, the edge proxy the client.
  expect(clientAddress('127.0.0.1', '203.0.113.7, 10.0.0.2', proxies)).toBe('203.0.113.7');
  expect(clientAddress('::ffff:127.0.0.1', '::ffff:198.51.100.4', proxies)).toBe('198.51.100.4');
});

test('a client cannot choose its address: X-Forwarded-For from anyone else is ignored, and a forged left part is never reached', () => {
  expect(clientAddress('203.0.113.7', '127.0.0.1', proxies)).toBe('203.0.113.7');
  expect(clientAddress('127.0.0.1', '1.2.3.4, 203.0.113.7', proxies)).toBe('203.0.113.7');
  expect(clientAddress('127.0.0.1', null, proxies)).toBe('127.0.0.1');
  expect(clientAddress('127.0.0.1', '203.0.113.7', new Set())).toBe('127.0.0.1');
  expect(clientAddress(undefined, '203.0.113.7', proxies)).toBe('unknown');
});
