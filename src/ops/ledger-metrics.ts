/**
 * The ledger's alerting gauges, rendered at scrape time from indexed counts (src/db/ops-metrics.ts),
 * and the payments-completed counters, advanced from the completion events since the last scrape.
 */
import type { Database } from 'bun:sqlite';
import { completedPaymentsSince, mailBacklog, unfinishedTxCounts, UNFINISHED_STATUSES, webhookBacklog } from '../db/ops-metrics.ts';
import { commitsFrom, commitsOf, OUTCOME_COMMITS } from '../db/commit-count.ts';
import { decisionLogStats } from '../db/decision-log.ts';
import { IMMEDIATE, type Durability } from '../db/durability.ts';

export function ledgerMetricsSource(db: Database, durability: Durability = IMMEDIATE, now: () => number = Date.now): () => string[] {
  let lastSeq = 0;
  let completed = 0;
  let volume = 0n;
  return () => {
    const fresh = completedPaymentsSince(db, lastSeq);
    lastSeq = fresh.lastSeq;
    completed += fresh.count;
    volume += fresh.volume;
    const counts = unfinishedTxCounts(db);
    const webhooks = webhookBacklog(db);
    const mail = mailBacklog(db);
    const age = (oldestAt: number | null) => (oldestAt === null ? 0 : Math.max(0, (now() - oldestAt) / 1000));
    return [
      '# HELP agent_wallet_ledger_commits_total Ledger transactions committed.',
      '# TYPE agent_wallet_ledger_commits_total counter',
      `agent_wallet_ledger_commits_total ${commitsOf(db)}`,
      '# HELP agent_wallet_ledger_outcome_commits_total Of those, the commits recording confirmed outcomes (each for as many payments as landed together).',
      '# TYPE agent_wallet_ledger_outcome_commits_total counter',
      `agent_wallet_ledger_outcome_commits_total ${commitsFrom(db, OUTCOME_COMMITS)}`,
      '# HELP agent_wallet_ledger_syncs_total WAL syncs by thread: on the event loop one per commit without the durability worker (synchronous=FULL), on the worker one per group of waiting effects.',
      '# TYPE agent_wallet_ledger_syncs_total counter',
      `agent_wallet_ledger_syncs_total{thread="event_loop"} ${durability === IMMEDIATE ? commitsOf(db) : 0}`,
      `agent_wallet_ledger_syncs_total{thread="worker"} ${durability.stats.syncs}`,
      '# HELP agent_wallet_ledger_durable_waits_total Effects (answers, broadcasts, webhooks, mails, payment headers) that waited for a sync.',
      '# TYPE agent_wallet_ledger_durable_waits_total counter',
      `agent_wallet_ledger_durable_waits_total ${durability.stats.waits}`,
      '# HELP agent_wallet_ledger_checkpoints_total WAL checkpoints tried by the checkpoint thread.',
      '# TYPE agent_wallet_ledger_checkpoints_total counter',
      `agent_wallet_ledger_checkpoints_total ${durability.stats.checkpoints}`,
      '# HELP agent_wallet_ledger_checkpoint_errors_total Checkpoints that failed (tried again later; the syncs go on).',
      '# TYPE agent_wallet_ledger_checkpoint_errors_total counter',
      `agent_wallet_ledger_checkpoint_errors_total ${durability.stats.checkpointErrors}`,
      '# HELP agent_wallet_ledger_checkpoints_forced_total Checkpoints forced after commits never paused long enough for one (the event loop waited for each; steady load on a slow disk).',
      '# TYPE agent_wallet_ledger_checkpoints_forced_total counter',
      `agent_wallet_ledger_checkpoints_forced_total ${durability.stats.forcedCheckpoints}`,
      '# HELP agent_wallet_ledger_wal_restarts_total Times the WAL started over (a write that syncs its header): by the checkpoint thread, or by another connection (the event loop, another process).',
      '# TYPE agent_wallet_ledger_wal_restarts_total counter',
      `agent_wallet_ledger_wal_restarts_total{by="worker"} ${durability.stats.restarts}`,
      `agent_wallet_ledger_wal_restarts_total{by="other"} ${durability.stats.foreignRestarts}`,
      '# HELP agent_wallet_decision_log_rows_total Decision-log rows appended by this process.',
      '# TYPE agent_wallet_decision_log_rows_total counter',
      `agent_wallet_decision_log_rows_total ${decisionLogStats(db).rows}`,
      '# HELP agent_wallet_decision_log_seconds_total Time spent appending them (hash, previous row, insert), inside the changes they record.',
      '# TYPE agent_wallet_decision_log_seconds_total counter',
      `agent_wallet_decision_log_seconds_total ${decisionLogStats(db).seconds}`,
      '# HELP agent_wallet_transactions Transactions not finished yet, by status.',
      '# TYPE agent_wallet_transactions gauge',
      ...UNFINISHED_STATUSES.map((s) => `agent_wallet_transactions{status="${s}"} ${counts.get(s) ?? 0}`),
      '# HELP agent_wallet_webhook_queue_depth Webhook messages waiting for delivery.',
      '# TYPE agent_wallet_webhook_queue_depth gauge',
      `agent_wallet_webhook_queue_depth ${webhooks.depth}`,
      '# HELP agent_wallet_webhook_oldest_pending_seconds Age of the oldest webhook message waiting (0 when none).',
      '# TYPE agent_wallet_webhook_oldest_pending_seconds gauge',
      `agent_wallet_webhook_oldest_pending_seconds ${age(webhooks.oldestAt)}`,
      '# HELP agent_wallet_mail_queue_depth Mail waiting in the outbox.',
      '# TYPE agent_wallet_mail_queue_depth gauge',
      `agent_wallet_mail_queue_depth ${mail.depth}`,
      '# HELP agent_wallet_mail_oldest_queued_seconds Age of the oldest mail waiting (0 when none).',
      '# TYPE agent_wallet_mail_oldest_queued_seconds gauge',
      `agent_wallet_mail_oldest_queued_seconds ${age(mail.oldestAt)}`,
      '# HELP agent_wallet_payments_completed_total Outgoing payments and withdrawals completed (counted from the ledger at first scrape, then as they complete).',
      '# TYPE agent_wallet_payments_completed_total counter',
      `agent_wallet_payments_completed_total ${completed}`,
      '# HELP agent_wallet_payments_completed_micro_usdc_total Amount of the completed payments and withdrawals, micro-USDC.',
      '# TYPE agent_wallet_payments_completed_micro_usdc_total counter',
      `agent_wallet_payments_completed_micro_usdc_total ${volume}`,
    ];
  };
}
