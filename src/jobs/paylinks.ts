/**
 * The paylink jobs (DESIGN §8): find Solana Pay payments by each paylink's reference key and judge
 * them (src/earning/scan.ts; each paylink is looked at on its own schedule, `next_scan_at`), and
 * move open paylinks past their expiry to expired. Both work from the database, so a restart
 * resumes where the last tick stopped.
 */
import { expirePaylinks, scanPaylinks } from '../earning/scan.ts';
import type { Services } from '../services.ts';
import type { JobDef } from './runner.ts';

export function paylinkJobs(services: Services, opts: { scanEverySeconds?: number } = {}): JobDef[] {
  return [
    { name: 'paylink-payments', schedule: { everySeconds: opts.scanEverySeconds ?? 2 }, run: () => scanPaylinks(services), runAtStart: true },
    { name: 'paylink-expiry', schedule: { everySeconds: 10 }, run: () => void expirePaylinks(services), runAtStart: true },
  ];
}
