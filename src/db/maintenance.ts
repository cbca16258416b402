/** Database upkeep and liveness, so nothing outside src/db speaks SQL. */
import type { Store } from './store.ts';

/**
 * Refreshes the planner's statistics (PocketBase's nightly habit; ANALYZE on PostgreSQL, whose
 * autovacuum does the rest). The WAL is not checkpointed here: the checkpoint thread does that off
 * the event loop (durability.ts), and a checkpoint on this connection would sync the disk on the
 * event loop and start the WAL over from it.
 */
export async function optimize(db: Store): Promise<void> {
  await db.exec(db.dialect === 'postgres' ? 'ANALYZE' : 'PRAGMA optimize');
}

/** The schema version the ledger is at now (another node of a newer release may have moved it); null when it records none. */
export async function ledgerSchemaVersion(db: Store): Promise<number | null> {
  if (db.dialect === 'sqlite') return Number((await db.get<{ user_version: bigint }>('PRAGMA user_version'))!.user_version);
  const row = await db.get<{ value: string }>("SELECT value FROM meta WHERE key = 'schema_version'");
  return row ? Number(row.value) : null;
}

/** The oldest release (by schema version) the ledger's last migration left able to serve it (PostgreSQL; SQLite has one node). */
export async function ledgerOldestServing(db: Store): Promise<number | null> {
  if (db.dialect === 'sqlite') return await ledgerSchemaVersion(db);
  const row = await db.get<{ value: string }>("SELECT value FROM meta WHERE key IN ('oldest_serving', 'schema_version') ORDER BY CASE key WHEN 'oldest_serving' THEN 0 ELSE 1 END LIMIT 1");
  return row ? Number(row.value) : null;
}

/** Throws when the database cannot answer a trivial query. */
export async function assertDatabaseAlive(db: Store): Promise<void> {
  await db.get('SELECT 1');
}
