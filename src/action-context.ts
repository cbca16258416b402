/**
 * The context of one action call. It sits beside Services, not in actions/, because the
 * services the actions call into (earning, x402) take it too.
 */
import type { Principal } from './domain/principal.ts';
import type { Services } from './services.ts';

/** What a handler receives besides its validated params. */
export interface ActionContext {
  services: Services;
  principal: Principal;
  requestId: string;
  headers: Headers;
  /**
   * Present when the action is idempotent and the caller sent a key. Handlers that write call
   * `record(data)` inside the same transaction as their change, so a crash can never
   * leave a change without its remembered response (DESIGN §3).
   */
  idempotency?: { key: string; record(data: unknown): Promise<void> };
}
