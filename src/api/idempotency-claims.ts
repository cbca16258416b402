/**
 * Idempotency keys (DESIGN §3) without a commit of their own. While a request with a key runs, its
 * claim is held in this process's memory — one daemon serves a data directory (src/daemon/lock.ts)
 * — and the key is written only with its answer, inside the transaction that makes the change
 * when there is one. A crash loses the claim together with the uncommitted change, so the retry
 * runs anew; a committed change always has its answer beside it, so the retry replays it.
 */
import type { Store } from '../db/store.ts';
import { findIdempotencyKey, type IdempotencyScope } from '../db/idempotency.ts';
import { sameHash } from '../domain/api-keys.ts';

export type Claim = { state: 'new' } | { state: 'replay'; status: number; response: string } | { state: 'running' } | { state: 'conflict' };

const id = (s: IdempotencyScope) => `${s.principal}\n${s.action}\n${s.key}`;

export class IdempotencyClaims {
  private readonly running = new Map<string, Uint8Array>();

  /**
   * What a request with this key may do: replay the recorded answer, refuse a different request
   * under the same key, wait while the same request runs, or run (`new`, claimed until `release`).
   * A `running` row (written by an earlier version, which claimed in the database) is taken over
   * once older than `staleMs`.
   */
  async claim(db: Store, scope: IdempotencyScope, hash: Uint8Array, now: number, staleMs: number): Promise<Claim> {
    const row = await findIdempotencyKey(db, scope);
    if (row) {
      if (!sameHash(row.request_hash, hash)) return { state: 'conflict' };
      if (row.state === 'done') return { state: 'replay', status: Number(row.status), response: row.response ?? '' };
      if (Number(row.created_at) >= now - staleMs) return { state: 'running' };
    }
    const held = this.running.get(id(scope));
    if (held) return sameHash(held, hash) ? { state: 'running' } : { state: 'conflict' };
    this.running.set(id(scope), hash);
    return { state: 'new' };
  }

  /** Ends the claim of a request that has answered (its answer recorded) or failed (nothing changed). */
  release(scope: IdempotencyScope): void {
    this.running.delete(id(scope));
  }
}
