/** Database upkeep and liveness, so nothing outside src/db speaks SQL. */
import type { Database } from 'bun:sqlite';

/** Folds the WAL into the main file and refreshes the planner's statistics (PocketBase's nightly habit). */
export function checkpointAndOptimize(db: Database): void {
  db.run('PRAGMA wal_checkpoint(TRUNCATE)');
  db.run('PRAGMA optimize');
}

/** Throws when the database cannot answer a trivial query. */
export function assertDatabaseAlive(db: Database): void {
  db.query('SELECT 1').get();
}
