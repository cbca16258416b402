/**
 * The provider faults simnet can play, their settings and how `simnet_setFaults` spells them:
 * congestion (transactions priced below a floor are dropped), a request-rate limit (HTTP 429),
 * a lagging node (recent transactions invisible to status queries) and the outage modes
 * ('error' → 503, 'hang' → held until cleared).
 */

/** A fault injected into every RPC call: 'error' → HTTP 503, 'hang' → wait until cleared. */
export type FaultMode = 'error' | 'hang' | null;

/** At most `rps` calls per rolling second; refusals carry `Retry-After: 1` when `retryAfter`. */
export interface RateLimit {
  rps: number;
  retryAfter: boolean;
}

/** Every fault's current setting; null is off. */
export interface FaultSettings {
  /** Lowest compute-unit price (micro-lamports/CU) that lands. */
  congestionFloor: bigint | null;
  rateLimit: RateLimit | null;
  /** How many slots status queries trail the chain by. */
  statusLagSlots: number | null;
  mode: FaultMode;
}

/** The faults RPC handlers consult on each call (the HTTP layer applies the rest). */
export type ChainFaults = Pick<FaultSettings, 'congestionFloor' | 'statusLagSlots'>;

/** A change to some faults; absent keys stay as they are. */
export interface FaultPatch {
  congestionFloor?: bigint | null;
  rateLimitRps?: number | null;
  retryAfter?: boolean;
  statusLagSlots?: number | null;
  mode?: FaultMode;
}

/** A `simnet_setFaults` argument that is not a valid patch. */
export class FaultPatchError extends Error {}

const PATCH_KEYS = ['congestion_floor', 'rate_limit_rps', 'rate_limit_retry_after', 'status_lag_slots', 'mode'];

function countOrNull(value: unknown, key: string): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new FaultPatchError(`${key} must be a whole number ≥ 1 or null`);
  return value;
}

/** Throws unless every count in `patch` is a whole number ≥ 1 and the floor is positive (the in-process setters' check). */
export function checkFaultPatch(patch: FaultPatch): void {
  for (const [key, n] of [['rate_limit_rps', patch.rateLimitRps], ['status_lag_slots', patch.statusLagSlots]] as const) {
    if (n !== undefined && n !== null) countOrNull(n, key);
  }
  if (patch.congestionFloor !== undefined && patch.congestionFloor !== null && patch.congestionFloor < 1n) throw new FaultPatchError('congestion_floor must be ≥ 1 or null');
}

/** Reads `simnet_setFaults`' object (snake_case keys, only those given change). */
export function parseFaultPatch(value: unknown): FaultPatch {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FaultPatchError('expected an object of faults');
  const v = value as Record<string, unknown>;
  const unknown = Object.keys(v).find((k) => !PATCH_KEYS.includes(k));
  if (unknown !== undefined) throw new FaultPatchError(`unknown fault ${unknown}; known: ${PATCH_KEYS.join(', ')}`);
  const patch: FaultPatch = {};
  if ('congestion_floor' in v) {
    const floor = countOrNull(v.congestion_floor, 'congestion_floor');
    patch.congestionFloor = floor === null ? null : BigInt(floor);
  }
  if ('rate_limit_rps' in v) patch.rateLimitRps = countOrNull(v.rate_limit_rps, 'rate_limit_rps');
  if ('rate_limit_retry_after' in v) {
    if (typeof v.rate_limit_retry_after !== 'boolean') throw new FaultPatchError('rate_limit_retry_after must be true or false');
    patch.retryAfter = v.rate_limit_retry_after;
  }
  if ('status_lag_slots' in v) patch.statusLagSlots = countOrNull(v.status_lag_slots, 'status_lag_slots');
  if ('mode' in v) {
    if (v.mode !== null && v.mode !== 'error' && v.mode !== 'hang') throw new FaultPatchError("mode must be 'error', 'hang' or null");
    patch.mode = v.mode;
  }
  return patch;
}

/** The settings in `simnet_setFaults`' spelling (null = off), plain JSON (the floor as a number). */
export function faultsJson(f: FaultSettings): Record<string, unknown> {
  return {
    congestion_floor: f.congestionFloor === null ? null : Number(f.congestionFloor),
    rate_limit_rps: f.rateLimit?.rps ?? null,
    rate_limit_retry_after: f.rateLimit?.retryAfter ?? null,
    status_lag_slots: f.statusLagSlots,
    mode: f.mode,
  };
}
