/**
 * Storage of the owner's guard rails (DESIGN §5): one row per wallet with the rails in force and
 * an optional pending loosening that takes over at `pending_apply_at` (src/domain/rails-change.ts).
 * Rails are stored as the JSON of `railsToJson` and read back through `parseGuardRails`, so the
 * stored form is exactly the wire form and passes the same validation.
 */
import type { Store } from './store.ts';
import { parseGuardRails, railsToJson } from '../contract/guard-rails.ts';
import type { GuardRails } from '../domain/guardrails.ts';
import { effectiveRails, type PendingRails } from '../domain/rails-change.ts';

interface GuardRailsRow {
  wallet_id: string;
  rails: string;
  pending: string | null;
  pending_apply_at: bigint | null;
  updated_at: bigint;
  updated_by: string;
}

/** The stored state of a wallet's rails: what is in force as written, and the pending loosening. */
export interface RailsState {
  current: GuardRails;
  pending: PendingRails | null;
  updatedAt: Date | null;
  updatedBy: string | null;
}

function decode(json: string, walletId: string): GuardRails {
  const parsed = parseGuardRails(JSON.parse(json));
  // Written by saveRails from parsed rails: a failure here means the row was edited by hand.
  if (!parsed.ok) throw new Error(`guard_rails of ${walletId} do not parse: ${parsed.errors.map((e) => e.message).join('; ')}`);
  return parsed.rails;
}

/** The stored rails of a wallet; a wallet without a row has no rails (`{}`) and nothing pending. */
export async function loadRailsState(db: Store, walletId: string): Promise<RailsState> {
  const row = await db.get<GuardRailsRow>('SELECT * FROM guard_rails WHERE wallet_id = ?', walletId);
  if (!row) return { current: {}, pending: null, updatedAt: null, updatedBy: null };
  return {
    current: decode(row.rails, walletId),
    pending: row.pending !== null && row.pending_apply_at !== null ? { rails: decode(row.pending, walletId), apply_at: new Date(Number(row.pending_apply_at)) } : null,
    updatedAt: new Date(Number(row.updated_at)),
    updatedBy: row.updated_by,
  };
}

/**
 * The guard rails in force for `walletId` at `now`: the stored rails, or the pending loosening
 * once its time has come. No row → `{}` (nothing restricts). Read-only; safe inside a write
 * transaction. This is what `pay`, `can_i_afford`, `my_limits` and `balance` decide with.
 */
export async function loadEffectiveRails(db: Store, walletId: string, now: Date): Promise<GuardRails> {
  const state = await loadRailsState(db, walletId);
  return effectiveRails(state.current, state.pending, now);
}

/** Writes the rails in force and the pending loosening (or none). Call inside a write transaction. */
export async function saveRails(db: Store, walletId: string, s: { current: GuardRails; pending: PendingRails | null; now: number; by: string }): Promise<void> {
  await db.run(`INSERT INTO guard_rails (wallet_id, rails, pending, pending_apply_at, updated_at, updated_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
     ON CONFLICT (wallet_id) DO UPDATE SET rails = ?2, pending = ?3, pending_apply_at = ?4, updated_at = ?5, updated_by = ?6`, walletId,
    JSON.stringify(railsToJson(s.current)),
    s.pending ? JSON.stringify(railsToJson(s.pending.rails)) : null,
    s.pending ? s.pending.apply_at.getTime() : null,
    s.now,
    s.by,
  );
}
