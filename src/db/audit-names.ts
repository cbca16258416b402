/**
 * The names behind the ids an audit page shows (domain/audit-sentence.ts): owners' e-mails and the
 * transactions entries refer to, scoped to one wallet. Reads only.
 */
import type { AuditNames, AuditTransaction } from '../domain/audit-sentence.ts';
import type { Store } from './store.ts';

const OWNER_ACTOR = /^owner:(\S+)/;

/** The owners and transactions `entries` name, looked up in one pass each (at most one query per id). */
export async function auditNames(
  db: Store,
  walletId: string,
  walletName: string,
  entries: readonly { actor: string; data: unknown }[],
): Promise<AuditNames> {
  const ownerIds = new Set<string>();
  const txIds = new Set<string>();
  for (const e of entries) {
    const m = OWNER_ACTOR.exec(e.actor);
    if (m) ownerIds.add(m[1]!);
    const d = e.data as Record<string, unknown> | null;
    if (d && typeof d.transaction_id === 'string') txIds.add(d.transaction_id);
    if (d && typeof d.decided_by === 'string') {
      const by = OWNER_ACTOR.exec(d.decided_by);
      if (by) ownerIds.add(by[1]!);
    }
  }
  const owners = new Map<string, string>();
  for (const id of ownerIds) {
    const row = await db.get<{ email: string }>('SELECT email FROM owners WHERE owner_id = ?', id);
    if (row) owners.set(id, row.email);
  }
  const transactions = new Map<string, AuditTransaction>();
  for (const id of txIds) {
    const row = await db.get<{ type: string; amount: bigint | number; fee: bigint | number; setup_fee: bigint | number; counterparty: string | null }>(
      'SELECT type, amount, fee, setup_fee, counterparty FROM transactions WHERE transaction_id = ? AND wallet_id = ?',
      id,
      walletId,
    );
    if (row) transactions.set(id, { type: row.type, to: row.counterparty, money: { amount: BigInt(row.amount), fee: BigInt(row.fee), setup_fee: BigInt(row.setup_fee) } });
  }
  return { owners, transactions, wallet: { name: walletName } };
}
