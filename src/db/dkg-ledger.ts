/** The key-generation coordinator's port (src/frost/dkg-ledger.ts) over the store: each write is one transaction. */
import type { Store } from './store.ts';
import { completeDkgSession, getDkgSession, insertDkgSession } from './dkg.ts';

export function storeDkgLedger(db: Store) {
  return {
    startSession: async (session: Parameters<typeof insertDkgSession>[1]) => await db.transaction(async () => await insertDkgSession(db, session)),
    session: async (id: string) => await getDkgSession(db, id),
    completeSession: async (id: string, result: Uint8Array, publicPackage: string, address: string) =>
      await db.transaction(async () => await completeDkgSession(db, id, result, publicPackage, address)),
  };
}
