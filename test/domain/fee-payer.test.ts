/** The fee payer runway rules: the rate from readings or from the ledger, and when it is too low. */
import { expect, test } from 'bun:test';
import { assessFeePayer, dailyFeeLamports, dailyRateFromSamples, LAMPORTS_PER_ACCOUNT_SETUP, LAMPORTS_PER_TRANSFER } from '../../src/domain/fee-payer.ts';

const SOL = 1_000_000_000n;
const HOUR = 60 * 60 * 1000;

test('the rate from readings: the drop scaled to a day, since the last top-up, nothing before ten minutes of readings', () => {
  expect(dailyRateFromSamples([])).toBe(0n);
  expect(dailyRateFromSamples([{ at: 0, lamports: SOL }, { at: 5 * 60 * 1000, lamports: SOL / 2n }])).toBe(0n);
  expect(dailyRateFromSamples([{ at: 0, lamports: SOL }, { at: HOUR, lamports: SOL - SOL / 100n }])).toBe((SOL / 100n) * 24n);
  // A top-up in between: only the readings after it count.
  expect(dailyRateFromSamples([{ at: 0, lamports: SOL }, { at: HOUR, lamports: SOL / 2n }, { at: 2 * HOUR, lamports: 3n * SOL }, { at: 4 * HOUR, lamports: 3n * SOL - SOL / 10n }])).toBe(
    (SOL / 10n) * 12n,
  );
});

test("the rate from the ledger: signature fees per transfer and rent per token account created", () => {
  expect(dailyFeeLamports({ transfers: 100, accountSetups: 10 })).toBe(100n * LAMPORTS_PER_TRANSFER + 10n * LAMPORTS_PER_ACCOUNT_SETUP);
});

test('low below 0.05 SOL whatever the rate, or under 7 days at the rate; fine otherwise', () => {
  expect(assessFeePayer(0n, 0n)).toMatchObject({ ok: false, daysLeft: null });
  expect(assessFeePayer(SOL / 100n, 0n).reason).toContain('below the minimum');
  expect(assessFeePayer(SOL, SOL / 4n)).toMatchObject({ ok: false, daysLeft: 4 });
  expect(assessFeePayer(SOL, SOL / 10n)).toMatchObject({ ok: true, daysLeft: 10 });
  expect(assessFeePayer(SOL, 0n)).toMatchObject({ ok: true, daysLeft: null });
});
