/**
 * The paylink job (DESIGN §8): open paylinks past their expiry become expired. Payments of
 * paylinks are found by the deposit watch (src/jobs/deposits.ts) on the payee's token account, and
 * by an open checkout page's scan of the reference key (src/earning/scan.ts `nudgeScan`).
 */
import { expirePaylinks } from '../earning/scan.ts';
import type { Services } from '../services.ts';
import type { JobDef } from './runner.ts';

export function paylinkJobs(services: Services): JobDef[] {
  return [{ name: 'paylink-expiry', schedule: { everySeconds: 10 }, run: () => void expirePaylinks(services), runAtStart: true }];
}
