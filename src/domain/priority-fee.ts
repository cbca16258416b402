/**
 * The priority-fee rules (micro-lamports per compute unit): what recent blocks charged, at a
 * percentile and under the operator's cap, and how much more a re-signed message offers after one
 * expired unlanded at the previous price.
 */

/** The smallest raise on a re-sign, so an expired message priced at 0 or near it offers something real. */
export const MIN_ESCALATION_STEP = 10_000n;

/** The `percentile` (0–100, nearest rank) of `fees`, capped at `cap`; 0 when there are no fees. */
export function percentileFee(fees: readonly bigint[], percentile: number, cap: bigint): bigint {
  if (fees.length === 0) return 0n;
  const sorted = [...fees].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rank = Math.max(1, Math.ceil((percentile / 100) * sorted.length));
  const fee = sorted[rank - 1]!;
  return fee < cap ? fee : cap;
}

/**
 * The price of a message re-signed after one priced `previous` expired unlanded: double it (at
 * least MIN_ESCALATION_STEP more), never below the current `estimate`, never above `cap`.
 */
export function escalatedFee(previous: bigint, estimate: bigint, cap: bigint): bigint {
  const doubled = previous * 2n;
  const stepped = previous + MIN_ESCALATION_STEP;
  let next = doubled > stepped ? doubled : stepped;
  if (estimate > next) next = estimate;
  return next < cap ? next : cap;
}
