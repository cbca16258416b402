/** MPP's wire formats (src/x402/mpp.ts): challenges, the charge as an x402 option, the credential, the receipt. */
import { describe, expect, test } from 'bun:test';
import { canonicalJson, mppChargeOf, mppCredential, parseMppCharge, parseMppReceipt, paymentChallenges } from '../../src/x402/mpp.ts';
import { DEVNET_CAIP2, USDC } from './sellers.ts';

const PAY_TO = '8seeb8A3SN9ufAoX3L1bjszE2qDPXBFxcZBMU44tbaBm';
const FEE_PAYER = '5jpPDE7FSA2pu3zs3CnHXMAqBy3KvGQierrnJZQyp8YN';
const NOW = new Date('2026-11-25T00:00:00Z');
const TARGET = { network: 'simnet' as const, caip2: DEVNET_CAIP2, mint: USDC };

const request = (over: Record<string, unknown> = {}, details: Record<string, unknown> = {}) => ({
  amount: '10000',
  currency: USDC,
  recipient: PAY_TO,
  externalId: 'order-1',
  methodDetails: { network: 'devnet', decimals: 6, feePayer: true, feePayerKey: FEE_PAYER, ...details },
  ...over,
});
const challenge = (req: unknown, extra = '') =>
  new Headers({ 'www-authenticate': `Payment id="c1", realm="api.example.com", method="solana", intent="charge", request="${Buffer.from(JSON.stringify(req)).toString('base64url')}"${extra}` });

describe('MPP', () => {
  test('challenges: each Payment scheme with its params, quoted or not; other schemes ignored', () => {
    expect(paymentChallenges('Basic realm="x", Payment id=a, method="solana", intent="charge"')).toEqual([{ id: 'a', method: 'solana', intent: 'charge' }]);
    expect(paymentChallenges('Bearer realm="x"')).toEqual([]);
  });

  test('a sponsored USDC charge reads as one exact option: recipient as payTo, the fee payer key, externalId as the memo', () => {
    const r = parseMppCharge(challenge(request()), TARGET, NOW);
    if (!r || 'refused' in r) throw new Error('expected a charge');
    expect(r.options[0]).toMatchObject({ scheme: 'exact', network: DEVNET_CAIP2, amount: '10000', asset: USDC, payTo: PAY_TO, extra: { feePayer: FEE_PAYER, memo: 'order-1' } });
    expect(mppChargeOf(r.raw)?.challenge.id).toBe('c1');
  });

  test.each([
    ['another network', request({}, { network: 'mainnet-beta' }), 'mainnet-beta'],
    ['another currency', request({ currency: 'So11111111111111111111111111111111111111112' }), 'this wallet pays USDC'],
    ['wrong decimals', request({}, { decimals: 9 }), '9 decimals'],
    ['Token-2022', request({}, { tokenProgram: 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' }), 'token program'],
    ['splits', request({}, { splits: [{ recipient: FEE_PAYER, amount: '1' }] }), 'splits'],
    ['no fee sponsorship', request({}, { feePayer: false, feePayerKey: undefined }), 'does not sponsor the fee'],
    ['a long externalId', request({ externalId: 'x'.repeat(300) }), 'externalId'],
  ])('%s is refused, naming why', (_name, req, reason) => {
    const r = parseMppCharge(challenge(req), TARGET, NOW);
    expect(r && 'refused' in r ? r.refused : '').toContain(reason);
  });

  test('an expired challenge, another method, and an unreadable request are refused; no Payment challenge is null', () => {
    expect(parseMppCharge(challenge(request(), ', expires="2026-11-24T00:00:00Z"'), TARGET, NOW)).toEqual({ refused: 'the MPP challenge expired at 2026-11-24T00:00:00Z' });
    expect(parseMppCharge(new Headers({ 'www-authenticate': 'Payment id="x", method="stripe", intent="charge", request="e30"' }), TARGET, NOW)).toMatchObject({ refused: expect.stringContaining('stripe/charge') });
    expect(parseMppCharge(new Headers({ 'www-authenticate': 'Payment id="x", method="solana", intent="charge", request="!!"' }), TARGET, NOW)).toMatchObject({ refused: expect.stringContaining('base64url') });
    expect(parseMppCharge(new Headers(), TARGET, NOW)).toBeNull();
  });

  test('the credential echoes the challenge and carries the transaction in pull mode, canonical JSON in base64url without padding', () => {
    const r = parseMppCharge(challenge(request()), TARGET, NOW);
    if (!r || 'refused' in r) throw new Error('expected a charge');
    const { name, value } = mppCredential(mppChargeOf(r.raw)!, 'AQID', PAY_TO);
    expect(name).toBe('Authorization');
    const token = value.slice('Payment '.length);
    expect(token).not.toContain('=');
    const decoded = Buffer.from(token, 'base64url').toString();
    expect(decoded).toBe(canonicalJson(JSON.parse(decoded)));
    expect(JSON.parse(decoded)).toEqual({ challenge: { id: 'c1', realm: 'api.example.com', method: 'solana', intent: 'charge', request: mppChargeOf(r.raw)!.challenge.request }, source: PAY_TO, payload: { type: 'transaction', transaction: 'AQID' } });
  });

  test('a receipt gives its reference as the transaction; an unreadable one is none', () => {
    const receipt = Buffer.from(JSON.stringify({ status: 'success', method: 'solana', timestamp: '2026-11-25T00:00:00Z', reference: 'sig1' })).toString('base64url');
    expect(parseMppReceipt(new Headers({ 'payment-receipt': receipt }))).toEqual({ success: true, transaction: 'sig1', network: null, payer: null, errorReason: null });
    expect(parseMppReceipt(new Headers({ 'payment-receipt': '***' }))).toBeNull();
    expect(canonicalJson({ b: [1, { d: true, c: null }], a: 'x' })).toBe('{"a":"x","b":[1,{"c":null,"d":true}]}');
  });
});
