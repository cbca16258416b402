/**
 * The signing coordinator's port (src/frost/signing-ledger.ts) over SQLite: each atomic operation
 * is one IMMEDIATE transaction; `recordRound` writes in the caller's.
 */
import type { Database } from 'bun:sqlite';
import { appendDecision } from './decision-log.ts';
import { closeOpenSessions, consumeNonces, getSignSession, insertSignSession, latestSignSession, type SignSessionRow } from './sign-sessions.ts';
import { getTx, setTxSigned, type TxRow } from './transactions.ts';

type NewSignSession = Parameters<typeof insertSignSession>[1];
type RoundState = { tx: TxRow | null; session: SignSessionRow | null };
type RoundStore =
  | null
  | { kind: 'burn'; sessionId: string; agentShare: Uint8Array }
  | { kind: 'signed'; sessionId: string; agentShare: Uint8Array; walletId: string; transactionId: string; signedTx: Uint8Array; signature: string | null; messageSha256: string; now: number };

export function sqliteSigningLedger(db: Database) {
  const round = (txId: string, sessionId: string | undefined): RoundState => {
    const tx = getTx(db, txId);
    if (!tx) return { tx, session: null };
    return { tx, session: sessionId ? getSignSession(db, sessionId) : latestSignSession(db, txId) };
  };
  const recordRound = (session: NewSignSession): void => {
    closeOpenSessions(db, session.transaction_id);
    insertSignSession(db, session);
  };
  const store = (s: RoundStore): void => {
    if (!s) return;
    if (s.kind === 'burn') {
      consumeNonces(db, s.sessionId, 'failed', s.agentShare);
      return;
    }
    consumeNonces(db, s.sessionId, 'used', s.agentShare);
    if (!setTxSigned(db, s.transactionId, s.signedTx, s.signature, s.now)) throw new Error('transaction changed during signing');
    appendDecision(db, { walletId: s.walletId, kind: 'signing.signed', data: { transaction_id: s.transactionId, message_sha256: s.messageSha256, signature: s.signature }, now: s.now });
  };
  return {
    round,
    recordRound,
    openRound<T>(txId: string, open: (tx: TxRow | null) => { session: NewSignSession; answer: T }): T {
      return db
        .transaction(() => {
          const { session, answer } = open(getTx(db, txId));
          recordRound(session);
          return answer;
        })
        .immediate();
    },
    settleRound<T>(txId: string, sessionId: string | undefined, settle: (state: RoundState) => { store: RoundStore; answer: T }): T {
      return db
        .transaction(() => {
          const settled = settle(round(txId, sessionId));
          store(settled.store);
          return settled.answer;
        })
        .immediate();
    },
  };
}
