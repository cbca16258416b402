/**
 * The fee payer watch: reads the fee payer's SOL every minute for /metrics and warns in the log
 * while there is still time to top it up (src/domain/fee-payer.ts), before payments start failing.
 * The spending rate comes from its own readings of the last day, so a tick costs one RPC call and
 * no ledger scan.
 */
import type { Metrics } from '../metrics.ts';
import { assessFeePayer, dailyRateFromSamples, type BalanceSample } from '../domain/fee-payer.ts';
import type { JobDef } from '../jobs/runner.ts';
import type { Services } from '../services.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface FeePayerWatch {
  /** One reading; exported for tests. */
  tick(): Promise<void>;
  job: JobDef;
}

export function feePayerWatch(services: Services, metrics: Metrics): FeePayerWatch {
  const samples: BalanceSample[] = [];
  const tick = async () => {
    const lamports = await services.chain.getSolBalance(services.feePayer.address);
    const at = services.now().getTime();
    metrics.setFeePayerLamports(lamports);
    samples.push({ at, lamports });
    while (samples.length > 0 && samples[0]!.at < at - DAY_MS) samples.shift();
    const verdict = assessFeePayer(lamports, dailyRateFromSamples(samples));
    if (!verdict.ok) {
      services.log.warn('the fee payer is running low on SOL: top it up before payments fail', { fee_payer: services.feePayer.address, lamports: lamports.toString(), detail: verdict.reason });
    }
  };
  return { tick, job: { name: 'fee-payer-watch', schedule: { everySeconds: 60 }, run: tick, runAtStart: true } };
}
