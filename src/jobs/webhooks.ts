/**
 * The webhooks jobs (STYLE habit 10): every second, deliver the due messages of the webhook
 * outbox. DB-driven and idempotent: a restart re-scans the table, and a message leased by a
 * process that died is retried when its lease ends. Nightly, finished messages older than
 * WEBHOOK_HISTORY_DAYS go, with their attempts, so the history does not grow without bound.
 */
import { pruneFinishedDeliveries } from '../db/webhooks.ts';
import { deliverDueWebhooks, type DeliveryOptions } from '../webhooks/deliver.ts';
import type { Services } from '../services.ts';
import type { JobDef } from './runner.ts';

/** How long a delivered or failed message stays visible in webhook_deliveries (and can be redelivered). */
export const WEBHOOK_HISTORY_DAYS = 30;

/** Deletes finished messages older than WEBHOOK_HISTORY_DAYS, batch by batch; returns how many. */
export async function pruneWebhookHistory(services: Services): Promise<number> {
  const before = services.now().getTime() - WEBHOOK_HISTORY_DAYS * 86_400_000;
  let total = 0;
  for (;;) {
    const n = await services.db.transaction(async () => await pruneFinishedDeliveries(services.db, before));
    total += n;
    if (n === 0) return total;
  }
}

/** The nightly prune the daemon registers next to the delivery job. */
export function webhookHistoryJob(services: Services): JobDef {
  return { name: 'webhook-history-purge', schedule: '0 45 3 * * *', run: () => void pruneWebhookHistory(services) };
}

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
