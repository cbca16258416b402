/**
 * What the key-generation coordinator (coordinator-dkg.ts) keeps, as whole operations: the port the
 * ledger implements (src/db/dkg-ledger.ts, on either backend). Each write is one database transaction.
 */
import type { DkgSession, NewDkgSession } from '../domain/custody-records.ts';

export type { DkgSession, NewDkgSession };

export interface DkgLedger {
  /** Stores a started session, atomically; false when its round-1 package was used before (a replay). */
  startSession(session: NewDkgSession): Promise<boolean>;
  session(id: string): Promise<DkgSession | null>;
  /** Moves a started session to completed with its sealed key package, atomically; false when it was not started (a concurrent completion won). */
  completeSession(id: string, result: Uint8Array, publicPackage: string, address: string): Promise<boolean>;
}
