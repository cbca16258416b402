/** The deposit watch's state (DESIGN §6.1): per watched owner, the amount last seen and the newest signature handled. */
import type { Store } from './store.ts';

export interface WatchedOwner {
  /** The token account owner's address. */
  owner: string;
  /** The wallet at this address, if it is one of ours. */
  wallet_id: string | null;
  /** Base units last seen; null: the account did not exist (or was never read). */
  amount: bigint | null;
  /** When the amount was last read; null: never. */
  checked_at: bigint | null;
  last_signature: string | null;
  /** When one of our own transfers out of it last completed; null: never. */
  moved_at: bigint | null;
  /** Oldest creation time of this owner's watched merchant paylinks (null for a wallet). */
  paylinks_since: bigint | null;
}

/**
 * Every owner to watch: our wallets, and merchant payout addresses that have a paylink still
 * watched (open, or closed at or after `closedSince`, so late payments are recorded against it).
 */
export async function watchedOwners(db: Store, closedSince: number): Promise<WatchedOwner[]> {
  return await db
    .all<WatchedOwner>(`WITH owners AS (
         SELECT address AS owner, wallet_id, NULL AS paylinks_since FROM wallets
         UNION ALL
         SELECT m.payout_address, NULL, min(p.created_at) FROM payment_requests p JOIN merchants m ON m.merchant_id = p.merchant_id
           WHERE (p.status = 'open' OR p.updated_at >= ?1) AND m.payout_address NOT IN (SELECT address FROM wallets)
           GROUP BY m.payout_address
       )
       SELECT o.owner, o.wallet_id, o.paylinks_since, t.amount, t.checked_at, t.last_signature, t.moved_at
       FROM owners o LEFT JOIN token_watch t ON t.owner = o.owner`, closedSince);
}

/** Remembers the amount read for `owner`'s token account (null: absent) and when it was read. */
export async function setWatchedAmount(db: Store, owner: string, amount: bigint | null, now: number): Promise<void> {
  await db.run(`INSERT INTO token_watch (owner, amount, checked_at, last_signature, updated_at) VALUES (?1, ?2, ?3, NULL, ?3)
     ON CONFLICT (owner) DO UPDATE SET amount = excluded.amount, checked_at = excluded.checked_at, updated_at = excluded.updated_at`, owner, amount, now);
}

/**
 * One of our own transfers out of `owner`'s account completed: the next pass looks at its
 * signatures whatever its amount (a deposit spent by this transfer leaves the amount unchanged).
 */
export async function markWatchedMoved(db: Store, owner: string, now: number): Promise<void> {
  await db.run('UPDATE token_watch SET moved_at = ? WHERE owner = ?', now, owner);
}

/**
 * `owner`'s account has signatures left to handle (a backlog longer than a pass takes, or a
 * transaction not served yet): the next pass looks at it whatever its amount, after a restart too.
 */
export async function setWatchUnread(db: Store, owner: string, now: number): Promise<void> {
  await db.run('UPDATE token_watch SET checked_at = NULL, updated_at = ? WHERE owner = ?', now, owner);
}

/** Moves `owner`'s cursor past `signature` (handled, whatever it was). */
export async function setWatchCursor(db: Store, owner: string, signature: string, now: number): Promise<void> {
  await db.run(`INSERT INTO token_watch (owner, amount, checked_at, last_signature, updated_at) VALUES (?1, NULL, NULL, ?2, ?3)
     ON CONFLICT (owner) DO UPDATE SET last_signature = excluded.last_signature, updated_at = excluded.updated_at`, owner, signature, now);
}

/** The newest signature of `owner`'s token account the watch has handled, if any. */
export async function watchCursor(db: Store, owner: string): Promise<string | null> {
  return (await db.get<{ last_signature: string | null }>('SELECT last_signature FROM token_watch WHERE owner = ?', owner))?.last_signature ?? null;
}

/**
 * After a restore the amounts remembered are the backup's: an account whose balance happens to be
 * back at that amount would never be looked at. Every account is read and its history since the
 * cursor looked up again.
 */
export async function forgetWatchedAmounts(db: Store): Promise<void> {
  await db.run('UPDATE token_watch SET checked_at = NULL');
}
