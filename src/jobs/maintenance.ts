/** Nightly SQLite upkeep (PocketBase's habit): fold the WAL into the main file and refresh planner statistics. */
import type { Database } from 'bun:sqlite';
import type { JobDef } from './runner.ts';
import { checkpointAndOptimize } from '../db/maintenance.ts';

export function maintenanceJob(db: Database): JobDef {
  return {
    name: 'db-maintenance',
    schedule: '0 30 3 * * *',
    run: () => checkpointAndOptimize(db),
  };
}
