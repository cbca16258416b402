/** Nightly SQLite upkeep (PocketBase's habit): refresh the planner's statistics. */
import type { Database } from 'bun:sqlite';
import type { JobDef } from './runner.ts';
import { optimize } from '../db/maintenance.ts';

export function maintenanceJob(db: Database): JobDef {
  return {
    name: 'db-maintenance',
    schedule: '0 30 3 * * *',
    run: () => optimize(db),
  };
}
