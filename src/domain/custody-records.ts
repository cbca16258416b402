/**
 * The rows the FROST coordinators keep through their ports (src/frost/signing-ledger.ts,
 * dkg-ledger.ts) and the ledger stores (src/db/sign-sessions.ts, dkg.ts): declared once, here,
 * below both, since custody may not import storage.
 */

/** A signing session: the server's sealed nonces for one message, single use. */
export interface SignSession {
  sign_session_id: string;
  transaction_id: string;
  message_hash: Uint8Array;
  agent_commitments: string;
  server_commitments: string;
  nonces: Uint8Array | null;
  status: 'open' | 'used' | 'failed';
  agent_share: Uint8Array | null;
  expires_at: bigint;
}

/** A session to open: its nonces sealed, its message's hash, both parties' commitments. */
export interface NewSignSession {
  sign_session_id: string;
  transaction_id: string;
  message_hash: Uint8Array;
  agent_commitments: string;
  server_commitments: string;
  nonces: Uint8Array;
  now: number;
  expires_at: number;
}

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
