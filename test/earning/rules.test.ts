/** The pure rules of earning: expiry, items, short codes, the Solana Pay URL, the payment verdict, fund coverage, CLI items. */
import { describe, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { parseItem } from '../../src/cli/earning-commands.ts';
import {
  fundRequestsCovered,
  judgePayment,
  newReferenceKey,
  newShortCode,
  normalizeShortCode,
  parseExpiresIn,
  priceItems,
  solanaPayUrl,
} from '../../src/earning/rules.ts';
import type { TokenTransfers } from '../../src/solana/port.ts';
import { UsageError } from '../../src/cli/usage.ts';
import { parseSolanaPayUrl } from './solana-pay-client.ts';

const USDC = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' as Address;
const OTHER_MINT = 'So11111111111111111111111111111111111111112' as Address;
const PAYEE = '5AjgqebUXZyig6D2pF7cgBzkLZYx9bNSc7xN7psYMmh' as Address;
const PAYEE_ATA = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' as Address;
const PAYEE_OTHER_ATA = '7UX2i7SucgLMQcfZ75s3VXmZZY4YRUyJN9X1RgfMoDUi' as Address;
const PAYER = 'HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH' as Address;
const PAYER_ATA = '2wmVCSfPxGPjrnMMn7rchp4uGFzRRvPZTRDc4tvmSGzd' as Address;

const EXPIRES = Date.parse('2030-01-15T12:00:00Z');
const IN_TIME = BigInt(Math.floor(Date.parse('2030-01-15T11:00:00Z') / 1000));
const ctx = { usdcMint: USDC, payee: PAYEE, payeeTokenAccount: PAYEE_ATA, nowMs: Date.parse('2030-01-15T11:00:05Z') };

/** A transfer as ChainPort.getTokenTransfersOf returns it: non-zero pre/post token balance changes and the account keys. */
function transfer(amount: bigint, o: { mint?: Address; to?: Address; blockTime?: bigint | null } = {}): TokenTransfers {
  const mint = o.mint ?? USDC;
  return {
    slot: 1234n,
    blockTime: o.blockTime === undefined ? IN_TIME : o.blockTime,
    err: null,
    deltas: [
      { owner: PAYER, mint, account: PAYER_ATA, delta: -amount },
      { owner: PAYEE, mint, account: o.to ?? PAYEE_ATA, delta: amount },
    ],
    accountKeys: [PAYER, PAYER_ATA, o.to ?? PAYEE_ATA, mint, 'Ref1111111111111111111111111111111111111111' as Address],
    signatures: ['sig1111'],
  };
}

describe('judgePayment', () => {
  const open = { status: 'open' as const, amount: 10_000_000n, expiresAt: EXPIRES };

  test('the full amount of USDC to the payee token account in time pays an open paylink, naming the payer', () => {
    expect(judgePayment(open, transfer(10_000_000n), ctx)).toEqual({ kind: 'paid', amount: 10_000_000n, payer: PAYER, from: 'open' });
  });
  test('more than asked pays it too (the amount received is kept)', () => {
    expect(judgePayment(open, transfer(12_000_000n), ctx)).toMatchObject({ kind: 'paid', amount: 12_000_000n });
  });
  test('too little is underpaid', () => {
    expect(judgePayment(open, transfer(9_999_999n), ctx)).toEqual({ kind: 'rejected', reason: 'underpaid', amount: 9_999_999n, mint: USDC, payer: PAYER });
  });
  test('another mint into the payee account of that mint is wrong_mint', () => {
    expect(judgePayment(open, transfer(10_000_000n, { mint: OTHER_MINT, to: PAYEE_OTHER_ATA }), ctx)).toEqual({ kind: 'rejected', reason: 'wrong_mint', amount: 10_000_000n, mint: OTHER_MINT, payer: PAYER });
  });
  test('a transaction that credits someone else is not_to_payee', () => {
    const t = transfer(10_000_000n);
    t.deltas[1] = { owner: PAYER, mint: USDC, account: 'Other111111111111111111111111111111111111111' as Address, delta: 10_000_000n };
    expect(judgePayment(open, t, ctx)).toMatchObject({ kind: 'rejected', reason: 'not_to_payee', amount: null });
  });
  test('landing after the expiry is expired, even while the paylink is still marked open', () => {
    const late = BigInt(Math.floor(EXPIRES / 1000) + 1);
    expect(judgePayment(open, transfer(10_000_000n, { blockTime: late }), ctx)).toMatchObject({ kind: 'rejected', reason: 'expired' });
  });
  test('an expired paylink paid in time (judged after the expiry job ran) is paid from expired', () => {
    expect(judgePayment({ ...open, status: 'expired' }, transfer(10_000_000n), ctx)).toMatchObject({ kind: 'paid', from: 'expired' });
  });
  test('without a block time the judging time decides', () => {
    expect(judgePayment(open, transfer(10_000_000n, { blockTime: null }), { ...ctx, nowMs: EXPIRES + 1 })).toMatchObject({ kind: 'rejected', reason: 'expired' });
  });
  test('cancelled and already paid paylinks are not paid again', () => {
    expect(judgePayment({ ...open, status: 'cancelled' }, transfer(10_000_000n), ctx)).toMatchObject({ kind: 'rejected', reason: 'cancelled' });
    expect(judgePayment({ ...open, status: 'paid' }, transfer(10_000_000n), ctx)).toMatchObject({ kind: 'rejected', reason: 'already_paid' });
  });
  test('an open-amount paylink takes any positive amount', () => {
    expect(judgePayment({ ...open, amount: null }, transfer(1n), ctx)).toMatchObject({ kind: 'paid', amount: 1n });
  });
});

describe('expires_in', () => {
  test.each([
    [60, 60],
    ['90', 90],
    ['30m', 1800],
    ['24h', 86_400],
    ['7d', 604_800],
    ['2W', 1_209_600],
  ] as const)('%p is %p seconds', (input, seconds) => {
    expect(parseExpiresIn(input)).toEqual({ ok: true, value: seconds });
  });
  test.each([0, 1.5, '', '3 weeks', '-1h', '91d', 'P1D'])('%p is refused with a reason', (input) => {
    const r = parseExpiresIn(input as never);
    expect(r.ok).toBe(false);
  });
});

describe('items', () => {
  test('the total is the sum of price × quantity in micro-USDC, with no float error', () => {
    const r = priceItems([
      { description: 'a', price: '0.1', quantity: 3 },
      { description: 'b', price: 0.2 },
    ]);
    expect(r).toMatchObject({ ok: true, total: 500_000n });
  });
  test('a bad price names the item', () => {
    expect(priceItems([{ description: 'a', price: 1 }, { description: 'b', price: '0' }])).toEqual({ ok: false, field: '/items/1/price', reason: 'must be greater than 0' });
    expect(priceItems([{ description: '  ', price: 1 }])).toMatchObject({ ok: false, field: '/items/0/description' });
  });
  test('--item "desc:price[:qty]" is read from the right', () => {
    expect(parseItem('Tea:2.5:2')).toEqual({ description: 'Tea', price: '2.5', quantity: 2 });
    expect(parseItem('Room 4: cleaning:25')).toEqual({ description: 'Room 4: cleaning', price: '25' });
    expect(parseItem('Room 4: cleaning:25:3')).toEqual({ description: 'Room 4: cleaning', price: '25', quantity: 3 });
    expect(() => parseItem('no price')).toThrow(UsageError);
    expect(() => parseItem(':5')).toThrow(UsageError);
  });
});

describe('short codes and reference keys', () => {
  test('a short code is 10 unambiguous base32 characters, and typing forgives case, dashes and look-alikes', () => {
    const code = newShortCode();
    expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{10}$/);
    expect(normalizeShortCode(code.toUpperCase())).toBe(code);
    expect(normalizeShortCode('k7qm-4tzp-2x')).toBe('k7qm4tzp2x');
    expect(normalizeShortCode('KIQM4TZPOX')).toBe('k1qm4tzp0x');
    expect(normalizeShortCode('short')).toBeNull();
    expect(normalizeShortCode('k7qm4tzp2u')).toBeNull();
  });
  test('reference keys are fresh 32-byte base58 keys', () => {
    const a = newReferenceKey();
    expect(a).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(newReferenceKey()).not.toBe(a);
  });
});

describe('Solana Pay URL', () => {
  test('recipient, decimal amount, spl-token, reference and URL-encoded label and message, as the spec lays them out', () => {
    const url = solanaPayUrl({ recipient: PAYEE, amount: 12_500_000n, mint: USDC, reference: PAYER, label: 'Café & Co', message: 'Order #7: 2× tea' });
    expect(url).toBe(`solana:${PAYEE}?amount=12.5&spl-token=${USDC}&reference=${PAYER}&label=Caf%C3%A9%20%26%20Co&message=Order%20%237%3A%202%C3%97%20tea`);
    expect(parseSolanaPayUrl(url)).toEqual({ recipient: PAYEE, amount: '12.5', splToken: USDC, references: [PAYER], label: 'Café & Co', message: 'Order #7: 2× tea' });
  });
  test('an open amount leaves amount out; no reference leaves reference out', () => {
    const url = solanaPayUrl({ recipient: PAYEE, amount: null, mint: USDC, reference: null, label: 'x', message: 'y' });
    expect(url).toBe(`solana:${PAYEE}?spl-token=${USDC}&label=x&message=y`);
  });
});

describe('fund requests covered by a deposit', () => {
  test('oldest first, each that still fits', () => {
    const reqs = [{ id: 'a', amount: 5n }, { id: 'b', amount: 10n }, { id: 'c', amount: 3n }];
    expect(fundRequestsCovered(reqs, 9n).map((r) => r.id)).toEqual(['a', 'c']);
    expect(fundRequestsCovered(reqs, 18n).map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(fundRequestsCovered(reqs, 2n)).toEqual([]);
  });
});
