/**
 * The fee payer watch: reads the fee payer's SOL for /metrics and warns in the log while there is
 * still time to top it up (src/domain/fee-payer.ts), before payments start failing for lack of SOL.
 */
import type { Metrics } from '../api/metrics.ts';
import { recentCompletedTransfers } from '../db/ops-metrics.ts';
import { assessFeePayer, dailyFeeLamports } from '../domain/fee-payer.ts';
import type { JobDef } from '../jobs/runner.ts';
import type { Services } from '../services.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** One reading; exported for tests. */
export async function watchFeePayer(services: Services, metrics: Metrics): Promise<void> {
  const lamports = await services.chain.getSolBalance(services.feePayer.address);
  metrics.setFeePayerLamports(lamports);
  const perDay = dailyFeeLamports(recentCompletedTransfers(services.db, services.now().getTime() - DAY_MS));
  const verdict = assessFeePayer(lamports, perDay);
  if (!verdict.ok) {
    services.log.warn('the fee payer is running low on SOL: top it up before payments fail', { fee_payer: services.feePayer.address, lamports: lamports.toString(), detail: verdict.reason });
  }
}

export function feePayerJob(services: Services, metrics: Metrics): JobDef {
  return { name: 'fee-payer-watch', schedule: { everySeconds: 60 }, run: () => watchFeePayer(services, metrics), runAtStart: true };
}
