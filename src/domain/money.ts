/**
 * Money is integer micro-USDC (`bigint`, 6 decimals) everywhere inside the process.
 * Decimals exist only at the JSON edge: `parseUsdc` on input, `formatUsdc`/`toUsdcNumber` on output.
 * NEVER do arithmetic on `number` amounts.
 */

export const USDC_DECIMALS = 6;
export const MICRO_PER_USDC = 1_000_000n;

const DECIMAL = /^(0|[1-9][0-9]{0,14})(?:\.([0-9]{1,6}))?$/;

export type ParseResult = { ok: true; micro: bigint } | { ok: false; reason: string };

/**
 * Parses a decimal USDC amount given as a JSON number or string ("12.5", 12.5) into micro-USDC.
 * Refuses signs, exponents, separators, whitespace, non-ASCII digits, more than 6 decimals and
 * numbers that are not exactly representable as typed (a JSON number beyond 2^53 is refused).
 */
export function parseUsdc(value: unknown): ParseResult {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { ok: false, reason: 'must be a finite number' };
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER) return { ok: false, reason: 'is too large' };
    // Shortest round-trip form: 12.5 → "12.5"; 1e-7 → "1e-7" (refused below as over-precise).
    text = String(value);
    if (/e/i.test(text)) {
      return { ok: false, reason: value !== 0 && Math.abs(value) < 1 ? 'has more than 6 decimal places' : 'is too large' };
    }
  } else if (typeof value === 'string') {
    text = value;
  } else {
    return { ok: false, reason: 'must be a decimal number or string, e.g. 12.5' };
  }
  if (text.startsWith('-')) return { ok: false, reason: 'must be greater than 0' };
  const m = DECIMAL.exec(text);
  if (!m) {
    if (/^[0-9]+\.[0-9]{7,}$/.test(text)) return { ok: false, reason: 'has more than 6 decimal places' };
    return { ok: false, reason: 'must be a plain decimal like 12.5 (digits, at most 6 decimals, no sign or separators)' };
  }
  const whole = BigInt(m[1]!);
  const frac = BigInt((m[2] ?? '').padEnd(USDC_DECIMALS, '0'));
  return { ok: true, micro: whole * MICRO_PER_USDC + frac };
}

/** Formats micro-USDC as the shortest exact decimal string: 12500000n → "12.5". */
export function formatUsdc(micro: bigint): string {
  const neg = micro < 0n;
  const abs = neg ? -micro : micro;
  const whole = abs / MICRO_PER_USDC;
  const frac = (abs % MICRO_PER_USDC).toString().padStart(USDC_DECIMALS, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** Micro-amounts whose conversion to a double is exact. */
const EXACT_MICRO = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Micro-USDC as a JSON number for responses. Exact: every amount below the configured
 * maximum has at most 6 decimals and ≤ 15 significant digits, which a double holds exactly
 * in its shortest decimal form. Below 2^53 micro the division is that double, without the
 * string: IEEE division rounds micro / 10^6 to the nearest double, as parsing its decimal does.
 */
export function toUsdcNumber(micro: bigint): number {
  if (micro <= EXACT_MICRO && micro >= -EXACT_MICRO) return Number(micro) / 1e6;
  return Number(formatUsdc(micro));
}

/** Fee in basis points of `amount`, rounded up to the micro-unit, never below `min`. */
export function feeFor(amount: bigint, bps: bigint, min: bigint): bigint {
  const proportional = (amount * bps + 9_999n) / 10_000n;
  return proportional > min ? proportional : min;
}
