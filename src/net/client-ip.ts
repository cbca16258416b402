/**
 * The address a request came from. Behind a balancer or TLS proxy every request arrives from the
 * proxy, so per-IP rate limits would count all clients as one and the loopback-only /metrics would
 * answer anyone the proxy forwards. The proxies the operator names (server.trusted_proxies) are
 * believed about X-Forwarded-For; nobody else is, so a client cannot choose its own address.
 */

/** IPv4 peers of a dual-stack socket come as ::ffff:a.b.c.d. */
const plain = (address: string): string => (address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address);

/**
 * `peer` when it is not a trusted proxy; else the nearest address in X-Forwarded-For that is not one
 * (read from the right: each proxy appends the address it was reached from).
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | null, trusted: ReadonlySet<string>): string {
  if (!peer) return 'unknown';
  let address = plain(peer);
  if (!trusted.has(address) || !forwardedFor) return address;
  const hops = forwardedFor.split(',').map((s) => plain(s.trim())).filter((s) => s.length > 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    address = hops[i]!;
    if (!trusted.has(address)) return address;
  }
  return address;
}
