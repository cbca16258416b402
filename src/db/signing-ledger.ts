/**
 * The signing coordinator's port (src/frost/signing-ledger.ts) over the store: each atomic operation
 * is one write transaction; `recordRound` writes in the caller's.
 */
import type { Store } from './store.ts';
import { appendDecision } from './decision-log.ts';
import { closeOpenSessions, consumeNonces, getSignSession, insertSignSession, latestSignSession, type SignSessionRow } from './sign-sessions.ts';
import { getTx, setTxSigned, type TxRow } from './transactions.ts';

type NewSignSession = Parameters<typeof insertSignSession>[1];
type RoundState = { tx: TxRow | null; session: SignSessionRow | null };
type RoundStore =
  | null
  | { kind: 'burn'; sessionId: string; agentShare: Uint8Array }
  | { kind: 'signed'; sessionId: string; agentShare: Uint8Array; walletId: string; transactionId: string; signedTx: Uint8Array; signature: string | null; messageSha256: string; now: number };

/** A completion's keys: its transaction and nonces, the payer's rails and log, what it pays (an account to create, a paylink, an order). */
function signingLocks(tx: TxRow): string[] {
  return [
    `tx:${tx.transaction_id}`,
    `wallet:${tx.wallet_id}`,
    ...(tx.to_address ? [`address:${tx.to_address}`] : []),
    ...(tx.payment_request_id ? [`paylink:${tx.payment_request_id}`] : []),
    ...(tx.to_merchant_id && tx.reference !== null ? [`reference:${tx.reference}`] : []),
  ];
}

export function storeSigningLedger(db: Store) {
  const round = async (txId: string, sessionId: string | undefined): Promise<RoundState> => {
    const tx = await getTx(db, txId);
    if (!tx) return { tx, session: null };
    return { tx, session: sessionId ? await getSignSession(db, sessionId) : await latestSignSession(db, txId) };
  };
  const recordRound = async (session: NewSignSession): Promise<void> => {
    await closeOpenSessions(db, session.transaction_id);
    await insertSignSession(db, session);
  };
  const store = async (s: RoundStore): Promise<void> => {
    if (!s) return;
    if (s.kind === 'burn') {
      await consumeNonces(db, s.sessionId, 'failed', s.agentShare);
      return;
    }
    await consumeNonces(db, s.sessionId, 'used', s.agentShare);
    if (!(await setTxSigned(db, s.transactionId, s.signedTx, s.signature, s.now))) throw new Error('transaction changed during signing');
    await appendDecision(db, { walletId: s.walletId, kind: 'signing.signed', data: { transaction_id: s.transactionId, message_sha256: s.messageSha256, signature: s.signature }, now: s.now });
  };
  return {
    round,
    recordRound,
    async openRound<T>(txId: string, open: (tx: TxRow | null) => { session: NewSignSession; answer: T }): Promise<T> {
      return await db
        .transaction(async () => {
          const { session, answer } = open(await getTx(db, txId));
          await recordRound(session);
          return answer;
        });
    },
    async settleRound<T>(txId: string, sessionId: string | undefined, settle: (state: RoundState) => Promise<{ store: RoundStore; answer: T }>): Promise<T> {
      // What a completion decides about (TxOptions.locks), from fields of the transaction that never change.
      const tx = await getTx(db, txId);
      const locks = tx ? signingLocks(tx) : undefined;
      return await db.transaction(
        async () => {
          const settled = await settle(await round(txId, sessionId));
          await store(settled.store);
          return settled.answer;
        },
        { locks },
      );
    },
  };
}
