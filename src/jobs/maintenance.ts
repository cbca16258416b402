/** Nightly ledger upkeep (PocketBase's habit): refresh the planner's statistics. */
import type { Store } from '../db/store.ts';
import type { JobDef } from './runner.ts';
import { optimize } from '../db/maintenance.ts';

export function maintenanceJob(db: Store): JobDef {
  return {
    name: 'db-maintenance',
    schedule: '0 30 3 * * *',
    run: async () => await optimize(db),
  };
}
