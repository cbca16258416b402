/**
 * Public statistics (SPEC "Public endpoint": stats). Computed from the ledger and served from a
 * cache for {@link STATS_CACHE_SECONDS} seconds, so an unauthenticated caller cannot make the
 * daemon count the whole ledger on every request.
 */
import { STATS, STATS_CACHE_SECONDS } from '../contract/stats.ts';
import { serviceCounts } from '../db/merchants.ts';
import { toUsdcNumber } from '../domain/money.ts';
import type { Services } from '../services.ts';
import { implement } from './registry.ts';

interface CachedStats {
  at: number;
  data: Record<string, unknown>;
}

/** One cache per Services (a test builds many). */
const cache = new WeakMap<Services, CachedStats>();

/** The statistics as of `services.now()`, at most STATS_CACHE_SECONDS old. */
export async function serviceStats(services: Services): Promise<Record<string, unknown>> {
  const now = services.now().getTime();
  const hit = cache.get(services);
  if (hit && now >= hit.at && now - hit.at < STATS_CACHE_SECONDS * 1000) return hit.data;
  const c = await serviceCounts(services.db);
  const data = {
    wallets: c.wallets,
    claimed_wallets: c.claimedWallets,
    merchants: c.merchants,
    payments_completed: c.paymentsCompleted,
    volume_usdc: toUsdcNumber(c.volume),
    network: services.config.solana.network,
    as_of: new Date(now).toISOString(),
    cached_until: new Date(now + STATS_CACHE_SECONDS * 1000).toISOString(),
  };
  cache.set(services, { at: now, data });
  return data;
}

/** The public `stats` action. */
export const statsActions = implement(STATS, {
  stats: async ({ services }) => await serviceStats(services),
});
