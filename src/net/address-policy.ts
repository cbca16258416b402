/**
 * Which outbound targets the daemon may reach (DESIGN §8 "Outbound HTTP"). Pure functions: no
 * DNS, no sockets. The rule is decided on the address actually connected to, never on how the
 * URL spells it, so every spelling `inet_aton` or the WHATWG URL parser accepts (`2130706433`,
 * `0x7f.1`, `0177.0.0.1`, `127.1`, `::ffff:7f00:1`, …) is parsed to bytes before it is judged.
 * Ranges follow the IANA special-purpose registries (RFC 6890 and updates); an address that
 * cannot be parsed is `invalid`, and only `public` is reachable without an allowlist entry.
 */

/** What an IP address is, for the purpose of deciding whether it may be contacted. */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'reserved'
  | 'ula'
  | 'invalid';

/** A URL accepted by {@link parseTargetUrl}: `host` is lower case, without IPv6 brackets or a trailing dot. */
export interface TargetUrl {
  ok: true;
  url: URL;
  host: string;
  port: number;
}

/** Why {@link parseTargetUrl} refused a URL, in words a caller can show. */
export interface RefusedUrl {
  ok: false;
  reason: string;
}

type ParsedIp = { version: 4; value: number } | { version: 6; value: bigint };

const V4_RANGES: ReadonlyArray<readonly [string, number, AddressClass]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'cgnat'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['255.255.255.255', 32, 'broadcast'],
  ['240.0.0.0', 4, 'reserved'],
];

/** IPv6 ranges that need no look inside; embedding ranges are handled in {@link classifyV6}. */
const V6_RANGES: ReadonlyArray<readonly [string, number, AddressClass]> = [
  ['64:ff9b:1::', 48, 'private'],
  ['100::', 64, 'reserved'],
  ['2001::', 23, 'reserved'],
  ['2001:db8::', 32, 'reserved'],
  ['3fff::', 20, 'reserved'],
  ['fc00::', 7, 'ula'],
  ['fe80::', 10, 'link_local'],
  ['fec0::', 10, 'private'],
  ['ff00::', 8, 'multicast'],
];

/**
 * Parses one IPv4 part the way `inet_aton` and the WHATWG URL parser do: `0x` hex, leading-zero
 * octal, else decimal.
 */
function parseV4Part(part: string): number | null {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
  if (/^0[0-7]+$/.test(part)) return Number.parseInt(part, 8);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return Number(part);
  return null;
}

/** `a`, `a.b`, `a.b.c` or `a.b.c.d` (the last part fills the remaining bytes), one trailing dot allowed. */
function parseV4(text: string): number | null {
  const parts = (text.endsWith('.') ? text.slice(0, -1) : text).split('.');
  if (parts.length > 4) return null;
  const nums: number[] = [];
  for (const part of parts) {
    const n = parseV4Part(part);
    if (n === null || !Number.isSafeInteger(n)) return null;
    nums.push(n);
  }
  const last = nums.pop() as number;
  if (nums.some((n) => n > 255) || last >= 256 ** (4 - nums.length)) return null;
  return nums.reduce((acc, n, i) => acc + n * 256 ** (3 - i), 0) + last;
}

/** RFC 4291 §2.2 text forms, with `::`, a trailing dotted IPv4 and an optional `%zone`; brackets allowed. */
function parseV6(text: string): bigint | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const noZone = bare.split('%')[0] as string;
  const halves = noZone.split('::');
  if (halves.length > 2) return null;
  const toGroups = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    const pieces = s.split(':');
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes('.')) {
        const bytes = piece.split('.').map(Number);
        if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(piece) || bytes.some((b) => b > 255)) return null;
        const [a, b, c, d] = bytes as [number, number, number, number];
        out.push(a * 256 + b, c * 256 + d);
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
        out.push(Number.parseInt(piece, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = toGroups(halves[0] as string);
  const tail = halves.length === 2 ? toGroups(halves[1] as string) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<number>(missing).fill(0), ...tail];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function parseIp(text: string): ParsedIp | null {
  if (text.includes(':')) {
    const value = parseV6(text);
    return value === null ? null : { version: 6, value };
  }
  const value = parseV4(text);
  return value === null ? null : { version: 4, value };
}

function inV4(addr: number, base: string, prefix: number): boolean {
  const shift = 32 - prefix;
  return Math.floor(addr / 2 ** shift) === Math.floor((parseV4(base) as number) / 2 ** shift);
}

function inV6(addr: bigint, base: string, prefix: number): boolean {
  const shift = BigInt(128 - prefix);
  return addr >> shift === (parseV6(base) as bigint) >> shift;
}

function classifyV4(addr: number): AddressClass {
  for (const [base, prefix, cls] of V4_RANGES) if (inV4(addr, base, prefix)) return cls;
  return 'public';
}

/**
 * An address that carries an IPv4 address inside is as dangerous as that address: a non-public
 * embedded address decides; otherwise `whenPublic` (a translation prefix that really reaches the
 * IPv4 internet is public, a deprecated one is reserved).
 */
function embedded(v4: number, whenPublic: AddressClass): AddressClass {
  const cls = classifyV4(v4);
  return cls === 'public' ? whenPublic : cls;
}

function classifyV6(addr: bigint): AddressClass {
  const low32 = Number(addr & 0xffffffffn);
  if (addr === 0n) return 'unspecified';
  if (addr === 1n) return 'loopback';
  if (inV6(addr, '::ffff:0:0', 96)) return classifyV4(low32);
  if (inV6(addr, '::ffff:0:0:0', 96)) return classifyV4(low32);
  if (inV6(addr, '64:ff9b::', 96)) return embedded(low32, 'public');
  if (inV6(addr, '::', 96)) return embedded(low32, 'reserved');
  if (inV6(addr, '2002::', 16)) return embedded(Number((addr >> 80n) & 0xffffffffn), 'public');
  for (const [base, prefix, cls] of V6_RANGES) if (inV6(addr, base, prefix)) return cls;
  return inV6(addr, '2000::', 3) ? 'public' : 'reserved';
}

/**
 * Classifies an IPv4 or IPv6 address given in any textual form `inet_aton`, the WHATWG URL
 * parser or RFC 4291 accepts (brackets and `%zone` tolerated). IPv4-mapped, IPv4-compatible,
 * SIIT, NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses are judged by the IPv4 address
 * they embed. Anything outside IPv6 global unicast (`2000::/3`) is `reserved`; text that is not
 * an address is `invalid`. Only `public` MAY be contacted without an allowlist entry.
 */
export function classifyIp(ip: string): AddressClass {
  const parsed = parseIp(ip.trim());
  if (parsed === null) return 'invalid';
  return parsed.version === 4 ? classifyV4(parsed.value) : classifyV6(parsed.value);
}

function formatV6(addr: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((addr >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { start: -1, len: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { start: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start < 0) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.len).join(':')}`;
}

/**
 * The RFC 5952 / dotted-decimal spelling of an address, or null when `ip` is not one. The
 * outbound client connects to this spelling, so it is the same address {@link classifyIp} judged.
 */
export function canonicalIp(ip: string): string | null {
  const parsed = parseIp(ip.trim());
  if (parsed === null) return null;
  if (parsed.version === 6) return formatV6(parsed.value);
  const v = parsed.value;
  return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
}

/** The text between `scheme:` (and its slashes) and the first `/`, `\`, `?` or `#` of a raw URL. */
function rawAuthority(raw: string): string {
  return /^\s*[a-z][a-z0-9+.-]*:[\\/]*([^\\/?#]*)/i.exec(raw)?.[1] ?? '';
}

/**
 * Parses a URL the daemon is asked to contact. Refuses schemes other than http and https,
 * any userinfo (`http://example.com@127.0.0.1/` and even an empty `http://@host/`, which hide
 * the real host from a human reader) and an empty host. IPv4 spellings come back canonical
 * (the WHATWG parser rewrites `0x7f.1` to `127.0.0.1`). Addresses are NOT judged here.
 */
export function parseTargetUrl(raw: string): TargetUrl | RefusedUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: `not a valid URL: ${JSON.stringify(raw.slice(0, 200))}` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: `scheme ${JSON.stringify(url.protocol)} is not allowed: use http or https` };
  }
  if (url.username !== '' || url.password !== '' || rawAuthority(raw).includes('@')) {
    return { ok: false, reason: 'URLs with user info (user@host) are not allowed' };
  }
  const bracketless = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const host = bracketless.endsWith('.') ? bracketless.slice(0, -1) : bracketless;
  if (host === '') return { ok: false, reason: 'the URL has no host' };
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { ok: true, url, host: host.toLowerCase(), port };
}

/** The form an allowlist entry or address is compared in: canonical IP (IPv4-mapped unwrapped) or lower-case name without trailing dot. */
function allowKey(entry: string): string {
  const trimmed = entry.trim().toLowerCase();
  const ip = canonicalIp(trimmed);
  if (ip === null) return trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed;
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(ip);
  if (mapped === null) return ip;
  const v4 = Number.parseInt(mapped[1] as string, 16) * 65536 + Number.parseInt(mapped[2] as string, 16);
  return canonicalIp(String(v4)) as string;
}

/**
 * Whether the daemon may connect to `ip`, reached as `host`: yes when the address is public, or
 * when the operator listed the host name or the address in `allowHosts` (DESIGN §8: "allow named
 * hosts or loopback for local development"). Entries match exactly after normalisation (case,
 * trailing dot, IP spelling); there are no wildcards or CIDR ranges.
 */
export function isAllowedTarget(host: string, ip: string, allowHosts: readonly string[]): boolean {
  if (classifyIp(ip) === 'public') return true;
  const keys = new Set(allowHosts.map(allowKey));
  return keys.has(allowKey(host)) || keys.has(allowKey(ip));
}
