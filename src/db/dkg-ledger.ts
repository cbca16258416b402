/** The key-generation coordinator's port (src/frost/dkg-ledger.ts) over SQLite: each write is one IMMEDIATE transaction. */
import type { Database } from 'bun:sqlite';
import { completeDkgSession, getDkgSession, insertDkgSession } from './dkg.ts';

export function sqliteDkgLedger(db: Database) {
  return {
    startSession: (session: Parameters<typeof insertDkgSession>[1]) => db.transaction(() => insertDkgSession(db, session)).immediate(),
    session: (id: string) => getDkgSession(db, id),
    completeSession: (id: string, result: Uint8Array, publicPackage: string, address: string) =>
      db.transaction(() => completeDkgSession(db, id, result, publicPackage, address)).immediate(),
  };
}
