/**
 * The ledger's alerting gauges, rendered at scrape time from indexed counts (src/db/ops-metrics.ts),
 * and the payments-completed counters, advanced from the completion events since the last scrape.
 */
import type { Store } from '../db/store.ts';
import { completedPaymentsSince, mailBacklog, unfinishedTxCounts, UNFINISHED_STATUSES, webhookBacklog } from '../db/ops-metrics.ts';
import { commitsFrom, commitsOf, OUTCOME_COMMITS } from '../db/commit-count.ts';
import { decisionLogStats } from '../db/decision-log.ts';
import { IMMEDIATE, type Durability } from '../db/durability.ts';
import { PgStore } from '../db/pg-store.ts';

export function ledgerMetricsSource(db: Store, durability: Durability = IMMEDIATE, now: () => number = Date.now): () => Promise<string[]> {
  let lastSeq = 0;
  let completed = 0;
  let volume = 0n;
  return async () => {
    const fresh = await completedPaymentsSince(db, lastSeq);
    lastSeq = fresh.lastSeq;
    completed += fresh.count;
    volume += fresh.volume;
    const counts = await unfinishedTxCounts(db);
    const webhooks = await webhookBacklog(db);
    const mail = await mailBacklog(db);
    const age = (oldestAt: number | null) => (oldestAt === null ? 0 : Math.max(0, (now() - oldestAt) / 1000));
    const stats = durability.stats;
    const log = decisionLogStats(db);
    return [
      ...counter('ledger_commits', 'Ledger transactions committed.', commitsOf(db)),
      ...counter('ledger_outcome_commits', 'Of those, the commits recording confirmed outcomes (each for as many payments as landed together).', commitsFrom(db, OUTCOME_COMMITS)),
      ...counter('ledger_syncs', 'WAL syncs by thread: on the event loop one per commit without the durability worker (synchronous=FULL), on the worker one per group of waiting effects.', [
        ['thread="event_loop"', durability === IMMEDIATE ? commitsOf(db) : 0],
        ['thread="worker"', stats.syncs],
      ]),
      ...counter('ledger_durable_waits', 'Effects (answers, broadcasts, webhooks, mails, payment headers) that waited for a sync.', stats.waits),
      ...counter('ledger_checkpoints', 'WAL checkpoints tried by the checkpoint thread.', stats.checkpoints),
      ...counter('ledger_checkpoint_errors', 'Checkpoints that failed (tried again later; the syncs go on).', stats.checkpointErrors),
      ...counter('ledger_checkpoints_forced', 'Checkpoints forced after commits never paused long enough for one (the event loop waited for each; steady load on a slow disk).', stats.forcedCheckpoints),
      ...counter('ledger_wal_restarts', 'Times the WAL started over (a write that syncs its header): by the checkpoint thread, or by another connection (the event loop, another process).', [
        ['by="worker"', stats.restarts],
        ['by="other"', stats.foreignRestarts],
      ]),
      ...counter('decision_log_rows', 'Decision-log rows appended by this process.', log.rows),
      ...counter('decision_log_seconds', 'Time spent appending them (hash, previous row, insert), inside the changes they record.', log.seconds),
      ...counter('decision_log_heads', 'Decision-log heads signed with the log key, one a wallet a commit, inside that commit.', log.heads),
      ...counter('decision_log_head_seconds', 'Time spent signing and storing those heads.', log.headSeconds),
      ...gauge('transactions', 'Transactions not finished yet, by status.', UNFINISHED_STATUSES.map((s) => [`status="${s}"`, counts.get(s) ?? 0])),
      ...gauge('webhook_queue_depth', 'Webhook messages waiting for delivery.', webhooks.depth),
      ...gauge('webhook_oldest_pending_seconds', 'Age of the oldest webhook message waiting (0 when none).', age(webhooks.oldestAt)),
      ...gauge('mail_queue_depth', 'Mail waiting in the outbox.', mail.depth),
      ...gauge('mail_oldest_queued_seconds', 'Age of the oldest mail waiting (0 when none).', age(mail.oldestAt)),
      ...counter('payments_completed', 'Outgoing payments and withdrawals completed (counted from the ledger at first scrape, then as they complete).', completed),
      ...counter('payments_completed_micro_usdc', 'Amount of the completed payments and withdrawals, micro-USDC.', volume),
      ...(db instanceof PgStore ? pgLines(db) : []),
    ];
  };
}

/** PostgreSQL only: the pool's size and how often SERIALIZABLE transactions had to run again. */
function pgLines(db: PgStore): string[] {
  return [
    ...gauge('ledger_pool_connections_max', 'Connections the PostgreSQL pool may open ([database] pool_size).', db.pool.max),
    ...counter('ledger_transactions', 'PostgreSQL transactions begun (each attempt of one run again counts).', db.stats.transactions),
    ...counter('ledger_transaction_retries', 'PostgreSQL transactions run again after a serialization failure or a deadlock (SQLSTATE 40001, 40P01).', db.stats.retries),
    ...counter('ledger_serialization_failures', 'Serialization failures and deadlocks PostgreSQL reported.', db.stats.serializationFailures),
  ];
}

type Samples = number | bigint | [labels: string, value: number | bigint][];

/** A metric in Prometheus text: its HELP and TYPE lines, then one sample, or one per label set. */
function metric(name: string, type: 'counter' | 'gauge', help: string, samples: Samples): string[] {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  if (typeof samples === 'number' || typeof samples === 'bigint') return [...lines, `${name} ${samples}`];
  return [...lines, ...samples.map(([labels, value]) => `${name}{${labels}} ${value}`)];
}

const counter = (name: string, help: string, samples: Samples) => metric(`agent_wallet_${name}_total`, 'counter', help, samples);
const gauge = (name: string, help: string, samples: Samples) => metric(`agent_wallet_${name}`, 'gauge', help, samples);
