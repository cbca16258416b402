/**
 * How webhooks reach the network: the one outbound client (src/net/outbound.ts) configured from
 * `[outbound]`, and the URL check that set_webhook and register run before a URL is stored. Both
 * use the same rules (DESIGN §8): http(s) only, no userinfo, every address the host resolves to
 * must be public unless the operator listed the host or address in `outbound.allow_hosts`. The
 * check at set time is a courtesy to the merchant; the rule that protects the network is applied
 * again at every delivery, on the address actually connected to (a name may re-resolve).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { canonicalIp, classifyIp, isAllowedTarget, parseTargetUrl } from '../net/address-policy.ts';
import { createOutbound, type Outbound } from '../net/outbound.ts';
import type { Services } from '../services.ts';

/** Resolves a host name to all its addresses. */
export type Resolver = (host: string) => Promise<string[]>;

/** Longest webhook URL stored. */
export const MAX_WEBHOOK_URL = 2048;

async function systemResolve(host: string): Promise<string[]> {
  const records = await lookup(host, { all: true, verbatim: true });
  return records.map((r) => r.address);
}

/** Per-Services resolver overrides (tests inject one so that no name ever reaches real DNS). */
const resolvers = new WeakMap<Services, Resolver>();
const clients = new WeakMap<Services, Outbound>();

/** Makes webhooks of `services` resolve host names with `resolve` (URL checks and deliveries alike). */
export function setWebhookResolver(services: Services, resolve: Resolver): void {
  resolvers.set(services, resolve);
  clients.delete(services);
}

function resolverOf(services: Services): Resolver {
  return resolvers.get(services) ?? systemResolve;
}

/** The outbound client webhook deliveries use: `[outbound]` timeouts and allowlist, no redirects. */
export function webhookOutbound(services: Services): Outbound {
  let client = clients.get(services);
  if (!client) {
    const o = services.config.outbound;
    client = createOutbound({ allowHosts: o.allow_hosts, connectTimeoutMs: o.connect_timeout_ms, totalTimeoutMs: o.total_timeout_ms, resolve: resolverOf(services) });
    clients.set(services, client);
  }
  return client;
}

export type UrlCheck = { ok: true; url: string } | { ok: false; reason: string };

/**
 * Checks a webhook URL before it is stored: parse ({@link parseTargetUrl}), resolve once, and
 * refuse unless every address passes {@link isAllowedTarget} with `outbound.allow_hosts`. Never
 * connects. Returns the URL in its normalised WHATWG form (e.g. `0x7f.1` becomes `127.0.0.1`).
 */
export async function checkWebhookUrl(services: Services, raw: string): Promise<UrlCheck> {
  if (raw.length > MAX_WEBHOOK_URL) return { ok: false, reason: `must be at most ${MAX_WEBHOOK_URL} characters` };
  const target = parseTargetUrl(raw.trim());
  if (!target.ok) return { ok: false, reason: target.reason };
  const allowHosts = services.config.outbound.allow_hosts;
  let addresses: string[];
  if (isIP(target.host) !== 0) {
    addresses = [target.host];
  } else {
    const timeoutMs = services.config.outbound.total_timeout_ms;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      addresses = await Promise.race([
        resolverOf(services)(target.host),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
        }),
      ]);
    } catch {
      return { ok: false, reason: `the host ${target.host} could not be resolved` };
    } finally {
      clearTimeout(timer);
    }
    if (addresses.length === 0) return { ok: false, reason: `the host ${target.host} has no address` };
  }
  for (const address of addresses) {
    if (canonicalIp(address) === null || !isAllowedTarget(target.host, address, allowHosts)) {
      const what = isIP(target.host) !== 0 ? 'is' : 'resolves to';
      return {
        ok: false,
        reason: `${target.host} ${what} an address of class ${classifyIp(address)}; webhooks go to public addresses only unless the operator lists the host in outbound.allow_hosts`,
      };
    }
  }
  return { ok: true, url: target.url.href };
}
