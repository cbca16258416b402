/**
 * What the signing coordinator (coordinator-sign.ts) keeps, as whole operations: the port the
 * ledger implements (src/db/signing-ledger.ts, on either backend). Each write is one database
 * transaction, or runs in the caller's where it says so.
 */
import type { NewSignSession, SignSession } from '../domain/custody-records.ts';

export type { NewSignSession, SignSession };

/** The fields of a ledger transaction the coordinator reads. */
export interface SignableTx {
  transaction_id: string;
  wallet_id: string;
  status: string;
  message: Uint8Array | null;
  signed_tx: Uint8Array | null;
  signature: string | null;
}

/** A transaction and the session a completion names (else its newest); no session is read for a transaction that does not exist. */
export interface RoundState<Tx extends SignableTx> {
  tx: Tx | null;
  session: SignSession | null;
}

/** What a completion stores: nothing, its nonces burnt with no signature released, or the signed transaction. */
export type RoundStore =
  | null
  | { kind: 'burn'; sessionId: string; agentShare: Uint8Array }
  | {
      kind: 'signed';
      sessionId: string;
      agentShare: Uint8Array;
      walletId: string;
      transactionId: string;
      signedTx: Uint8Array;
      /** The transaction id; null while another party (an x402 facilitator) still has to sign. */
      signature: string | null;
      /** Hex SHA-256 of the signed message, for the decision log. */
      messageSha256: string;
      now: number;
    };

export interface SigningLedger<Tx extends SignableTx> {
  /** The transaction and its session as they stand (read only). */
  round(txId: string, sessionId: string | undefined): Promise<RoundState<Tx>>;
  /**
   * Opens a round, atomically: `open` gets the transaction as it stands and returns the session to
   * open with its answer; the transaction's open sessions are closed (their nonces destroyed
   * unused) and this one stored.
   */
  openRound<T>(txId: string, open: (tx: Tx | null) => { session: NewSignSession; answer: T }): Promise<T>;
  /** Closes the transaction's open sessions and stores this one, inside the caller's write transaction. */
  recordRound(session: NewSignSession): Promise<void>;
  /**
   * Completes a round, atomically: `settle` gets the transaction and session as they stand and
   * returns what to store with its answer. Storing a signature consumes the nonces, marks the
   * transaction signed and appends the decision; burning consumes the nonces alone.
   */
  settleRound<T>(txId: string, sessionId: string | undefined, settle: (state: RoundState<Tx>) => Promise<{ store: RoundStore; answer: T }>): Promise<T>;
}
