/** What `admin doctor` reads of a PostgreSQL ledger: the server, the schema this binary needs, the network and the connections. */
import type { PgStore } from './pg-store.ts';

export interface PgHealth {
  serverVersion: string;
  serverVersionNum: number;
  schemaVersion: number | null;
  network: string | null;
  /** Connections open to this database now, and the server's limit for all databases. */
  connections: number;
  maxConnections: number;
}

export async function pgHealth(store: PgStore): Promise<PgHealth> {
  const server = (await store.get<{ v: string; n: string }>("SELECT current_setting('server_version') AS v, current_setting('server_version_num') AS n"))!;
  const meta = await store.all<{ key: string; value: string }>("SELECT key, value FROM meta WHERE key IN ('schema_version', 'network')");
  const conns = (await store.get<{ n: bigint; max: string }>("SELECT count(*) AS n, current_setting('max_connections') AS max FROM pg_stat_activity WHERE datname = current_database()"))!;
  const value = (key: string) => meta.find((m) => m.key === key)?.value ?? null;
  return {
    serverVersion: server.v,
    serverVersionNum: Number(server.n),
    schemaVersion: value('schema_version') === null ? null : Number(value('schema_version')),
    network: value('network'),
    connections: Number(conns.n),
    maxConnections: Number(conns.max),
  };
}
