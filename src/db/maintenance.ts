/** Database upkeep and liveness, so nothing outside src/db speaks SQL. */
import type { Database } from 'bun:sqlite';

/**
 * Refreshes the planner's statistics (PocketBase's nightly habit). The WAL is not checkpointed
 * here: the checkpoint thread does that off the event loop (durability.ts), and a checkpoint on
 * this connection would sync the disk on the event loop and start the WAL over from it.
 */
export function optimize(db: Database): void {
  db.run('PRAGMA optimize');
}

/** Throws when the database cannot answer a trivial query. */
export function assertDatabaseAlive(db: Database): void {
  db.query('SELECT 1').get();
}
