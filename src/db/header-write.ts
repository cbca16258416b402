/**
 * The ledger's no-op write: the database header's application_id rewritten as it is. Made under the
 * write lock, it is the write that starts a wholly checkpointed WAL over (and syncs its new header),
 * or else one appended frame. durability.ts makes it while commits still sync; the checkpoint thread
 * makes it after each checkpoint, so that no other connection's write starts the WAL over.
 */
import type { Database } from 'bun:sqlite';

export function rewriteApplicationId(db: Database): void {
  const { application_id } = db.query<{ application_id: number | bigint }, []>('PRAGMA application_id').get()!;
  db.run(`PRAGMA application_id = ${Number(application_id)}`);
}
