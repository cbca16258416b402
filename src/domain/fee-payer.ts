/**
 * How long the fee payer's SOL lasts. Every transfer costs the fee payer its signature fees, and
 * one that creates the recipient's token account also its rent; the daemon warns, and the doctor
 * fails, while there is still time to top it up.
 */

/** Two signatures (fee payer and wallet) at the base fee of 5,000 lamports each. */
export const LAMPORTS_PER_TRANSFER = 10_000n;
/** Rent-exempt minimum of an SPL token account (165 bytes). */
export const LAMPORTS_PER_ACCOUNT_SETUP = 2_039_280n;
/** Below this the fee payer is low whatever the rate: a few dozen account creations. */
export const MIN_FEE_PAYER_LAMPORTS = 50_000_000n;
/** Days of fees the fee payer should hold at the recent rate. */
export const RUNWAY_DAYS = 7;

/** Lamports a day at the rate of the last day's transfers (the doctor, reading the ledger once). */
export function dailyFeeLamports(lastDay: { transfers: number; accountSetups: number }): bigint {
  return BigInt(lastDay.transfers) * LAMPORTS_PER_TRANSFER + BigInt(lastDay.accountSetups) * LAMPORTS_PER_ACCOUNT_SETUP;
}

export interface BalanceSample {
  at: number;
  lamports: bigint;
}

/** Shortest span of readings a rate is computed from; shorter spans say nothing yet. */
export const MIN_SAMPLE_SPAN_MS = 10 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Lamports a day from the fee payer's own readings (oldest first): the drop since the last top-up,
 * scaled to a day. 0 until the readings span MIN_SAMPLE_SPAN_MS.
 */
export function dailyRateFromSamples(samples: readonly BalanceSample[]): bigint {
  let start = 0;
  for (let i = 1; i < samples.length; i++) if (samples[i]!.lamports > samples[i - 1]!.lamports) start = i;
  const first = samples[start];
  const last = samples.at(-1);
  if (!first || !last || last.at - first.at < MIN_SAMPLE_SPAN_MS) return 0n;
  return ((first.lamports - last.lamports) * BigInt(DAY_MS)) / BigInt(last.at - first.at);
}

export interface FeePayerVerdict {
  ok: boolean;
  /** Whole days left at `perDay`; null when nothing was spent recently. */
  daysLeft: number | null;
  reason: string;
}

export function assessFeePayer(lamports: bigint, perDay: bigint): FeePayerVerdict {
  const daysLeft = perDay > 0n ? Number(lamports / perDay) : null;
  const sol = (Number(lamports) / 1e9).toFixed(4);
  if (lamports < MIN_FEE_PAYER_LAMPORTS) return { ok: false, daysLeft, reason: `${sol} SOL, below the minimum of ${Number(MIN_FEE_PAYER_LAMPORTS) / 1e9} SOL` };
  if (daysLeft !== null && daysLeft < RUNWAY_DAYS) return { ok: false, daysLeft, reason: `${sol} SOL lasts about ${daysLeft} day(s) at the recent rate, less than ${RUNWAY_DAYS}` };
  return { ok: true, daysLeft, reason: daysLeft === null ? `${sol} SOL; nothing spent recently` : `${sol} SOL, about ${daysLeft} day(s) at the recent rate` };
}
