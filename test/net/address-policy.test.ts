/** The pure SSRF rules: every spelling of an address is judged by the address it denotes. */
import { describe, expect, it } from 'bun:test';
import { canonicalIp, classifyIp, isAllowedTarget, parseTargetUrl, type AddressClass } from '../../src/net/address-policy.ts';

const classes: Array<[string, AddressClass]> = [
  ['8.8.8.8', 'public'],
  ['93.184.216.34', 'public'],
  ['0x08080808', 'public'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['2130706433', 'loopback'],
  ['0x7f000001', 'loopback'],
  ['0x7f.1', 'loopback'],
  ['0177.0.0.1', 'loopback'],
  ['127.1', 'loopback'],
  ['127.0.1', 'loopback'],
  ['127.0.0.1.', 'loopback'],
  ['10.0.0.1', 'private'],
  ['167772161', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['172.32.0.1', 'public'],
  ['192.168.1.1', 'private'],
  ['0xc0a80101', 'private'],
  ['169.254.169.254', 'link_local'],
  ['2852039166', 'link_local'],
  ['169.254.43518', 'link_local'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['100.128.0.0', 'public'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['0.0.0.0', 'unspecified'],
  ['0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.170', 'reserved'],
  ['192.0.2.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['198.19.255.255', 'reserved'],
  ['198.20.0.1', 'public'],
  ['203.0.113.7', 'reserved'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:a9fe:a9fe', 'link_local'],
  ['::ffff:8.8.8.8', 'public'],
  ['::ffff:0:a00:1', 'private'],
  ['::127.0.0.1', 'loopback'],
  ['::7f00:1', 'loopback'],
  ['::8.8.8.8', 'reserved'],
  ['64:ff9b::10.0.0.1', 'private'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['64:ff9b:1::1', 'private'],
  ['2002:c0a8:101::1', 'private'],
  ['2002:7f00:1::', 'loopback'],
  ['2002:808:808::1', 'public'],
  ['fe80::1', 'link_local'],
  ['fe80::1%eth0', 'link_local'],
  ['febf::1', 'link_local'],
  ['fec0::1', 'private'],
  ['fc00::1', 'ula'],
  ['fd00::1', 'ula'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'multicast'],
  ['2001:db8::1', 'reserved'],
  ['2001::1', 'reserved'],
  ['100::1', 'reserved'],
  ['3fff::1', 'reserved'],
  ['1::', 'reserved'],
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450::1', 'public'],
  ['example.com', 'invalid'],
  ['', 'invalid'],
  ['256.0.0.1', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
  ['09.0.0.1', 'invalid'],
  ['0x100000000', 'invalid'],
  ['1::2::3', 'invalid'],
  ['1:2:3:4:5:6:7:8:9', 'invalid'],
  ['::ffff:300.0.0.1', 'invalid'],
  ['127.0.0.1 evil', 'invalid'],
];

describe('classifyIp', () => {
  it.each(classes)('classifies %s as %s', (ip, expected) => {
    expect(classifyIp(ip)).toBe(expected);
  });
});

describe('canonicalIp', () => {
  it.each([
    ['0x7f.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['2001:0db8:0000:0000:0001:0000:0000:0001', '2001:db8::1:0:0:1'],
    ['[FE80::1]', 'fe80::1'],
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
  ])('spells %s as %s', (ip, canonical) => {
    expect(canonicalIp(ip)).toBe(canonical);
  });

  it('returns null for text that is not an address', () => {
    expect(canonicalIp('localhost')).toBeNull();
  });
});

describe('parseTargetUrl', () => {
  it('accepts http and https and canonicalises the host and port', () => {
    const http = parseTargetUrl('http://0x7f.1/x');
    expect(http.ok && { host: http.host, port: http.port }).toEqual({ host: '127.0.0.1', port: 80 });
    const https = parseTargetUrl('HTTPS://Example.COM./pay');
    expect(https.ok && { host: https.host, port: https.port }).toEqual({ host: 'example.com', port: 443 });
    const v6 = parseTargetUrl('http://[::ffff:127.0.0.1]:8080/');
    expect(v6.ok && { host: v6.host, port: v6.port }).toEqual({ host: '::ffff:7f00:1', port: 8080 });
  });

  it.each([
    'http://example.com@127.0.0.1/',
    'http://user:pass@example.com/',
    'http://@example.com/',
    'https://:@example.com/',
  ])('refuses user info in %s', (raw) => {
    const parsed = parseTargetUrl(raw);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toContain('user info');
  });

  it.each(['file:///etc/passwd', 'ftp://example.com/', 'gopher://example.com/', 'data:text/plain,x', 'javascript:alert(1)', 'ws://example.com/'])(
    'refuses the scheme of %s',
    (raw) => {
      const parsed = parseTargetUrl(raw);
      expect(!parsed.ok && parsed.reason).toContain('scheme');
    },
  );

  it.each(['', 'http://', 'not a url', 'http://exa mple.com/'])('refuses the non-URL %j', (raw) => {
    expect(parseTargetUrl(raw).ok).toBe(false);
  });

  it('keeps the real host when an @ only appears after a fragment or backslash', () => {
    for (const raw of ['http://127.0.0.1#@example.com/', 'http://127.0.0.1\\@example.com/']) {
      const parsed = parseTargetUrl(raw);
      expect(parsed.ok && parsed.host).toBe('127.0.0.1');
    }
  });
});

describe('isAllowedTarget', () => {
  it('allows public addresses without any allowlist', () => {
    expect(isAllowedTarget('example.com', '93.184.216.34', [])).toBe(true);
  });

  it('refuses every non-public class without an allowlist', () => {
    for (const ip of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '100.64.0.1', '224.0.0.1', '0.0.0.0', 'fd00::1', 'fe80::1', 'not-an-ip']) {
      expect(isAllowedTarget('example.com', ip, [])).toBe(false);
    }
  });

  it('allows a private address the operator listed, in any spelling', () => {
    expect(isAllowedTarget('127.0.0.1', '127.0.0.1', ['127.0.0.1'])).toBe(true);
    expect(isAllowedTarget('dev.test', '::ffff:127.0.0.1', ['127.0.0.1'])).toBe(true);
    expect(isAllowedTarget('dev.test', '0:0:0:0:0:0:0:1', ['::1'])).toBe(true);
    expect(isAllowedTarget('dev.test', '127.0.0.2', ['127.0.0.1'])).toBe(false);
  });

  it('allows any address of a host name the operator listed, matching case and trailing dot', () => {
    expect(isAllowedTarget('localhost', '127.0.0.1', ['localhost'])).toBe(true);
    expect(isAllowedTarget('Intranet.Example.', '10.1.2.3', ['intranet.example'])).toBe(true);
    expect(isAllowedTarget('other.example', '10.1.2.3', ['intranet.example'])).toBe(false);
    expect(isAllowedTarget('evil.intranet.example', '10.1.2.3', ['intranet.example'])).toBe(false);
  });
});
