/**
 * What a node of a shared ledger knows of the others, for /metrics: the nodes it counts, whether it
 * holds the chain watch, and its clock against the database server's. Summed over nodes, the watch
 * gauge is 1 when exactly one node watches (deploy/alerts.yml pages at 0 for a minute).
 */
import type { NodeLocks } from '../db/node-locks.ts';
import { DEPOSIT_JOB } from '../jobs/deposits.ts';
import { leaseOf } from '../jobs/runner.ts';

export function nodeMetricsSource(nodes: NodeLocks): () => string[] {
  return () => [
    '# HELP agent_wallet_nodes Daemons on this ledger, this one included, at its last heartbeat (1 on SQLite).',
    '# TYPE agent_wallet_nodes gauge',
    `agent_wallet_nodes ${nodes.liveNodes()}`,
    '# HELP agent_wallet_chain_watch 1 while this node holds the chain watch (summed over the nodes: 1).',
    '# TYPE agent_wallet_chain_watch gauge',
    `agent_wallet_chain_watch ${!nodes.shared || nodes.holds(leaseOf(DEPOSIT_JOB)) ? 1 : 0}`,
    "# HELP agent_wallet_clock_skew_seconds This node's clock less the database server's (0 on SQLite); beyond 2 s it runs no job and is not ready.",
    '# TYPE agent_wallet_clock_skew_seconds gauge',
    `agent_wallet_clock_skew_seconds ${(nodes.clockSkewMs() / 1000).toFixed(3)}`,
  ];
}
