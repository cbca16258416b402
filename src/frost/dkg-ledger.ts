/**
 * What the key-generation coordinator (coordinator-dkg.ts) keeps, as whole operations: the port the
 * ledger implements (src/db/dkg-ledger.ts over SQLite). Each write is one database transaction.
 * Synchronous: a bun:sqlite transaction must not await.
 */

/** A key generation: single use, short-lived, its secret state sealed. */
export interface DkgSession {
  dkg_session_id: string;
  state: Uint8Array;
  client_round1: string;
  status: 'started' | 'completed' | 'used';
  result: Uint8Array | null;
  public_package: string | null;
  address: string | null;
  expires_at: bigint;
}

/** A session to start: the server's round state sealed, the agent's round-1 package and its hash. */
export interface NewDkgSession {
  dkg_session_id: string;
  state: Uint8Array;
  client_round1: string;
  client_round1_hash: Uint8Array;
  created_at: number;
  expires_at: number;
}

export interface DkgLedger {
  /** Stores a started session, atomically; false when its round-1 package was used before (a replay). */
  startSession(session: NewDkgSession):  Promise<boolean>;
  session(id: string):  Promise<DkgSession | null>;
  /** Moves a started session to completed with its sealed key package, atomically; false when it was not started (a concurrent completion won). */
  completeSession(id: string, result: Uint8Array, publicPackage: string, address: string):  Promise<boolean>;
}
