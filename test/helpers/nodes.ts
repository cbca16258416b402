/**
 * Several daemons on one PostgreSQL ledger (DESIGN §10.2, README "More than one node"): each node
 * its own data dir with a config.toml naming the shared database, all of them with the first
 * node's master.key and fee payer, all on one chain (a standalone simnet, network `custom`).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import type { Simnet } from '../../src/simnet/index.ts';
import { customChainEnv, startDaemonProcess, type DaemonProcess } from './daemon.ts';
import { emptyPgDatabase, PG_SERVER } from './ledger.ts';
import { startPgCluster, type PgCluster } from './pg.ts';
import { tempDir } from './services.ts';

export interface Nodes {
  /** The shared ledger's URL. */
  url: string;
  nodes: DaemonProcess[];
  /** Starts one more node on the same ledger and secrets (e.g. to replace a killed one). */
  add(env?: Record<string, string>): Promise<DaemonProcess>;
  /** Stops every node still running, then the cluster this started (if any). */
  stop(): Promise<void>;
}

/** A PostgreSQL server for the file: AW_TEST_PG_URL's, or a throwaway cluster this starts. */
export async function pgServer(): Promise<{ url: string; cluster: PgCluster | null }> {
  if (PG_SERVER) return { url: PG_SERVER, cluster: null };
  const cluster = await startPgCluster();
  return { url: cluster.url, cluster };
}

/**
 * Starts `count` nodes on a fresh database of `server` in front of `simnet`, and funds the fee
 * payer. `env` is added to every node's environment.
 */
export async function startNodes(server: string, simnet: Simnet, count: number, env: Record<string, string> = {}): Promise<Nodes> {
  const url = await emptyPgDatabase(server);
  const root = tempDir('aw-nodes-');
  const nodes: DaemonProcess[] = [];
  const nodeEnv = { ...customChainEnv(simnet.url), ...env };
  const dataDir = (i: number) => {
    const dir = join(root, `node-${i}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'config.toml'), `[database]\nurl = "${url}"\npool_size = 4\n`, { mode: 0o600 });
    return dir;
  };
  const add = async (extra: Record<string, string> = {}) => {
    const dir = dataDir(nodes.length);
    // Every node after the first gets the first one's secrets: the same master.key and fee payer.
    if (nodes.length > 0) for (const file of ['master.key', 'fee-payer.json']) copyFileSync(join(nodes[0]!.dataDir, file), join(dir, file));
    const node = await startDaemonProcess({ dataDir: dir, env: { ...nodeEnv, ...extra } });
    nodes.push(node);
    return node;
  };
  for (let i = 0; i < count; i++) await add();
  const feePayer = nodes[0]!.started.fee_payer as Address;
  await simnet.airdrop(feePayer, 50_000_000_000n);
  await simnet.faucet(feePayer, 0n);
  return {
    url,
    nodes,
    add,
    stop: async () => {
      for (const n of nodes) await n.stop().catch(() => undefined);
    },
  };
}
