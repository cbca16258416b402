/**
 * The webhooks job (STYLE habit 10): every second, deliver the due messages of the webhook
 * outbox. DB-driven and idempotent: a restart re-scans the table, and a message leased by a
 * process that died is retried when its lease ends.
 */
import { deliverDueWebhooks, type DeliveryOptions } from '../webhooks/deliver.ts';
import type { Services } from '../services.ts';
import type { JobDef } from './runner.ts';

/** The job the daemon registers; `opts` (outbound client, jitter) are for tests. */
export function webhookJob(services: Services, opts: DeliveryOptions = {}): JobDef {
  return {
    name: 'webhooks',
    schedule: { everySeconds: 1 },
    runAtStart: true,
    run: async () => {
      await deliverDueWebhooks(services, opts);
    },
  };
}
