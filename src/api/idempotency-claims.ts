/**
 * Idempotency keys (DESIGN §3) without a commit of their own. While a request with a key runs, its
 * claim is held in this process's memory and, on a ledger other nodes share, as the key's node
 * lock (src/db/node-locks.ts), which dies with the node; the key is written only with its
 * answer, inside the transaction that makes the change when there is one. A crash loses the claim
 * together with the uncommitted change, so the retry — through any node — runs anew; a committed
 * change always has its answer beside it, so the retry replays it.
 */
import { localNodeLocks, type NodeLocks } from '../db/node-locks.ts';
import type { Store } from '../db/store.ts';
import { findIdempotencyKey, type IdempotencyScope } from '../db/idempotency.ts';
import { sameHash } from '../domain/api-keys.ts';

export type Claim = { state: 'new' } | { state: 'replay'; status: number; response: string } | { state: 'running' } | { state: 'conflict' };

const id = (s: IdempotencyScope) => `${s.principal}\n${s.action}\n${s.key}`;
const lockOf = (k: string) => `idempotency:${k}`;

export class IdempotencyClaims {
  private readonly running = new Map<string, Uint8Array>();

  constructor(private readonly nodes: NodeLocks = localNodeLocks()) {}

  /**
   * What a request with this key may do: replay the recorded answer, refuse a different request
   * under the same key, wait while the same request runs, or run (`new`, claimed until `release`).
   * A `running` row (written by an earlier version, which claimed in the database) is taken over
   * once older than `staleMs`.
   *
   * The claim is taken before the ledger is read: a read begun while the holder still ran may
   * answer after it committed and released, and must not find the key free then.
   */
  async claim(db: Store, scope: IdempotencyScope, hash: Uint8Array, now: number, staleMs: number): Promise<Claim> {
    const k = id(scope);
    const held = this.running.get(k);
    if (held) return sameHash(held, hash) ? { state: 'running' } : { state: 'conflict' };
    this.running.set(k, hash);
    let locked = false;
    try {
      // Another node runs it (or has just answered, which the ledger then shows): never run it here too.
      locked = !this.nodes.shared || (await this.nodes.tryTake(lockOf(k)));
      const claim = await this.fromLedger(db, scope, hash, now, staleMs);
      if (claim.state === 'new' && !locked) {
        this.running.delete(k);
        return { state: 'running' };
      }
      if (claim.state !== 'new') this.release(scope);
      return claim;
    } catch (err) {
      this.release(scope);
      throw err;
    }
  }

  private async fromLedger(db: Store, scope: IdempotencyScope, hash: Uint8Array, now: number, staleMs: number): Promise<Claim> {
    const row = await findIdempotencyKey(db, scope);
    if (!row) return { state: 'new' };
    if (!sameHash(row.request_hash, hash)) return { state: 'conflict' };
    if (row.state === 'done') return { state: 'replay', status: Number(row.status), response: row.response ?? '' };
    return Number(row.created_at) >= now - staleMs ? { state: 'running' } : { state: 'new' };
  }

  /** Ends the claim of a request that has answered (its answer recorded) or failed (nothing changed). */
  release(scope: IdempotencyScope): void {
    const k = id(scope);
    this.running.delete(k);
    if (this.nodes.shared) void this.nodes.release(lockOf(k)).catch(() => undefined);
  }
}
