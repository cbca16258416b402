/**
 * x402 jobs: the daily re-verification of the public catalog (an entry that stops answering a
 * payable 402 is hidden; one that recovers is shown again), and the lookup of purchases whose
 * outcome is unknown (sent, then a timeout or a crash) — found on chain → completed; absent with
 * an expired blockhash → failed and released; sales settled here whose outcome is unknown; and
 * merchants' payments of their sale fees.
 */
import type { Services } from '../services.ts';
import { reverifyCatalog } from '../x402/catalog.ts';
import { resolvePendingPurchases } from '../x402/purchase.ts';
import { resolveSales } from '../x402/facilitator.ts';
import { scanInvoices } from '../earning/sale-fees.ts';
import type { JobDef } from './runner.ts';

/** One pass of the catalog re-verification; exported for tests and the admin CLI. */
export async function reverifyCatalogJob(services: Services): Promise<{ verified: number; hidden: number }> {
  const result = await reverifyCatalog(services.config, services.db, () => services.now().getTime());
  if (result.verified + result.hidden > 0) services.log.info('x402 catalog re-verified', result);
  return result;
}

export function x402Jobs(services: Services): JobDef[] {
  return [
    { name: 'x402-catalog-reverify', schedule: '0 17 4 * * *', run: async () => void (await reverifyCatalogJob(services)) },
    { name: 'x402-outcomes', schedule: { everySeconds: 15 }, run: async () => void (await resolvePendingPurchases(services)), runAtStart: true },
    // Sales this daemon settled as a facilitator whose outcome the chain had not shown yet.
    { name: 'x402-sales', schedule: { everySeconds: 15 }, run: async () => void (await resolveSales(services)), runAtStart: true },
    // Merchants' payments of their sale fees, found by their invoices' reference keys.
    { name: 'x402-sale-fees', schedule: { everySeconds: 60 }, run: async () => void (await scanInvoices(services)) },
  ];
}
