/** The pure custody rules of the client (src/client/custody.ts): what each pin lets through. */
import { describe, expect, test } from 'bun:test';
import { checkCeiling, checkChain, checkPin, maxFee, pinsFromPing, recordIntent, recordPaid, usernameOf, type PingAnswer, type Pin } from '../../src/client/custody.ts';
import { CustodyCheckError } from '../../src/client/errors.ts';
import { DEVNET_USDC } from '../../src/solana/networks.ts';

const ping: PingAnswer = {
  network: 'custom',
  usdc_mint: 'Mint111111111111111111111111111111111111111',
  treasury: 'Treasury11111111111111111111111111111111111',
  fee_payer: 'FeePayer11111111111111111111111111111111111',
  fees: { payment_bps: 50, payment_min: 0.01, account_setup_fee: 0.25, withdrawal_fee: 0.1 },
};
const now = new Date('2026-01-01T00:00:00Z');

function refusal(fn: () => void): CustodyCheckError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CustodyCheckError) return err;
    throw err;
  }
  throw new Error('expected a CustodyCheckError');
}

describe('pins from ping', () => {
  test("a known network's mint wins over the server's word; a custom network pins the server's", () => {
    expect(pinsFromPing('devnet', ping, now, 'registration').mint).toBe(DEVNET_USDC);
    expect(pinsFromPing('simnet', ping, now, 'registration').mint).toBe(DEVNET_USDC);
    const custom = pinsFromPing('custom', ping, now, 'registration');
    expect(custom).toMatchObject({ mint: ping.usdc_mint, treasury: ping.treasury, fee_payer: ping.fee_payer, max_amount: '100', source: 'registration' });
    expect(custom.fees).toEqual({ payment_bps: 50, payment_min: '0.01', account_setup_fee: '0.25', withdrawal_fee: '0.1' });
  });

  test('a server that publishes no fee schedule or treasury pins nothing', () => {
    expect(refusal(() => pinsFromPing('custom', { ...ping, fees: undefined as never }, now, 'registration')).howToFix).toContain('Upgrade the daemon');
    refusal(() => pinsFromPing('custom', { ...ping, treasury: '' }, now, 'registration'));
  });
});

describe('fees', () => {
  const { fees } = pinsFromPing('custom', ping, now, 'registration');
  test('the platform fee rounds up to the micro-unit like the server, never below the minimum', () => {
    expect(maxFee(fees, 'payment', 1_000_000n, false)).toBe(10_000n); // 0.5 % of 1 is 0.005 < min 0.01
    expect(maxFee(fees, 'payment', 12_500_000n, false)).toBe(62_500n);
    expect(maxFee(fees, 'payment', 3_000_001n, false)).toBe(15_001n); // 15000.005 rounds up
  });
  test('the setup fee only where the message creates an account; withdrawals pay the withdrawal fee', () => {
    expect(maxFee(fees, 'payment', 12_500_000n, true)).toBe(312_500n);
    expect(maxFee(fees, 'withdrawal', 20_000_000n, false)).toBe(100_000n);
    expect(maxFee(fees, 'withdrawal', 20_000_000n, true)).toBe(350_000n);
  });
});

describe('chain, ceiling and payee pins', () => {
  const pins = pinsFromPing('custom', ping, now, 'registration');
  test('another mint, treasury or fee payer is refused naming both', () => {
    expect(() => checkChain(pins, { mint: ping.usdc_mint, treasury: ping.treasury, fee_payer: ping.fee_payer })).not.toThrow();
    for (const key of ['mint', 'treasury', 'fee_payer'] as const) {
      expect(refusal(() => checkChain(pins, { [key]: 'Other111111111111111111111111111111111111111' })).details).toEqual({ pinned: pins[key], offered: 'Other111111111111111111111111111111111111111' });
    }
  });

  test('the ceiling: the profile default, or the call’s own', () => {
    expect(() => checkCeiling(pins, 100_000_000n, undefined, 'x')).not.toThrow();
    expect(refusal(() => checkCeiling(pins, 100_000_001n, undefined, 'x')).details).toEqual({ amount: '100.000001', max_amount: '100' });
    expect(() => checkCeiling(pins, 150_000_000n, 150_000_000n, 'x')).not.toThrow();
  });

  test("a wallet's address change is always refused; a merchant's or a host's only without the accept", () => {
    const pin = (kind: Pin['kind']): Pin => ({ address: 'A', kind, first_paid: '', last_paid: '', count: 1 });
    expect(() => checkPin(undefined, 'bob', 'B', false)).not.toThrow();
    expect(() => checkPin(pin('wallet'), 'bob', 'A', false)).not.toThrow();
    expect(refusal(() => checkPin(pin('wallet'), 'bob', 'B', true)).details).toEqual({ username: 'bob', pinned_address: 'A', offered_address: 'B' });
    expect(refusal(() => checkPin(pin('merchant'), 'shop', 'B', false)).howToFix).toContain('--accept-new-address');
    expect(() => checkPin(pin('merchant'), 'shop', 'B', true)).not.toThrow();
    expect(refusal(() => checkPin(pin('host'), 'api.example', 'B', false)).details).toMatchObject({ host: 'api.example' });
  });

  test('recordPaid pins on first use, then counts and moves an accepted change', () => {
    const book: Record<string, Pin> = {};
    recordPaid(book, 'shop', 'A', 'merchant', now);
    recordPaid(book, 'shop', 'B', 'merchant', new Date('2026-01-02T00:00:00Z'));
    expect(book.shop).toEqual({ address: 'B', kind: 'merchant', first_paid: now.toISOString(), last_paid: '2026-01-02T00:00:00.000Z', count: 2 });
  });

  test('recordIntent stamps the local time, keeps a given one, and drops intents older than a week', () => {
    const p = pinsFromPing('custom', ping, now, 'registration');
    recordIntent(p, 'tx_old', { amount: '1' }, now);
    recordIntent(p, 'tx_given', { amount: '2', created_at: '2026-01-07T00:00:00.000Z' }, new Date('2026-01-07T12:00:00Z'));
    expect(p.intents.tx_old).toEqual({ amount: '1', created_at: now.toISOString() });
    recordIntent(p, 'tx_new', { amount: '3' }, new Date('2026-01-09T00:00:00Z'));
    expect(Object.keys(p.intents).sort()).toEqual(['tx_given', 'tx_new']);
    expect(p.intents.tx_given?.created_at).toBe('2026-01-07T00:00:00.000Z');
  });

  test('usernameOf: @ and case folded; an address is not a username', () => {
    expect(usernameOf(' @Bob-12 ')).toBe('bob-12');
    expect(usernameOf('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU')).toBeNull();
  });
});
