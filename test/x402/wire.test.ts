/** The x402 wire formats, read and written by hand, against what the official packages produce and expect. */
import { describe, expect, test } from 'bun:test';
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import { chooseOption, paymentHeader, paymentIdentifierExtension, parsePaymentRequired, parsePaymentResponse } from '../../src/x402/wire.ts';
import { DEVNET_CAIP2, USDC } from './sellers.ts';

const PAY_TO = '8seeb8A3SN9ufAoX3L1bjszE2qDPXBFxcZBMU44tbaBm';
const FEE_PAYER = '5jpPDE7FSA2pu3zs3CnHXMAqBy3KvGQierrnJZQyp8YN';
const TARGET = { caip2: DEVNET_CAIP2, v1Network: 'solana-devnet', mint: USDC };
const SIG = '4e74iaq69hsjgcKjtVanenFoy48TFTt1n4yeo8DwPcUrrptd1JbrLkgp7Kbn2DamBSrddruiKSccadYhZ6dguEbr';

const v2Option = (over: Record<string, unknown> = {}) => ({
  scheme: 'exact',
  network: DEVNET_CAIP2,
  amount: '10000',
  asset: USDC,
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { feePayer: FEE_PAYER, recentBlockhash: '3UY9LH9KcRXfXFSXZ3P6aoak2NeXtYrQQnuN79pGNiSw', lastValidBlockHeight: '152' },
  ...over,
});
const v2Challenge = (accepts: unknown[]) => ({ x402Version: 2, error: 'Payment required', resource: { url: 'https://api.example.com/joke', description: 'a joke' }, accepts });
const none = new Uint8Array();

describe('reading a 402', () => {
  test('v2: the PAYMENT-REQUIRED header as the package encodes it', () => {
    const headers = new Headers({ 'payment-required': encodePaymentRequiredHeader(v2Challenge([v2Option()]) as never) });
    const req = parsePaymentRequired(headers, none)!;
    expect(req).toMatchObject({ version: 2, resource: { url: 'https://api.example.com/joke' }, error: 'Payment required' });
    const chosen = chooseOption(req, TARGET);
    expect(chosen.ok && chosen.option).toMatchObject({ amountAtomic: 10000n, payTo: PAY_TO, feePayer: FEE_PAYER, memo: null });
  });

  test('v1: the JSON body with maxAmountRequired and network names', () => {
    const body = { x402Version: 1, error: 'X-PAYMENT header is required', accepts: [{ scheme: 'exact', network: 'solana-devnet', maxAmountRequired: '20000', resource: 'https://x/y', payTo: PAY_TO, asset: USDC, extra: { feePayer: FEE_PAYER } }] };
    const req = parsePaymentRequired(new Headers(), new TextEncoder().encode(JSON.stringify(body)))!;
    expect(req).toMatchObject({ version: 1, resource: 'https://x/y' });
    const chosen = chooseOption(req, TARGET);
    expect(chosen.ok && chosen.option.amountAtomic).toBe(20000n);
  });

  test('no requirements: a plain 402, an unreadable header, an HTML body', () => {
    expect(parsePaymentRequired(new Headers(), new TextEncoder().encode('Payment Required'))).toBeNull();
    expect(parsePaymentRequired(new Headers({ 'payment-required': '%%%' }), new TextEncoder().encode('<html>'))).toBeNull();
  });

  test('the option for our network and USDC is chosen among others', () => {
    const req = parsePaymentRequired(new Headers({ 'payment-required': encodePaymentRequiredHeader(v2Challenge([v2Option({ network: 'eip155:8453', asset: '0xabc' }), v2Option({ amount: '777' })]) as never) }), none)!;
    const chosen = chooseOption(req, TARGET);
    expect(chosen.ok && chosen.option.amount).toBe('777');
  });

  test('nothing payable: the reason names every option offered', () => {
    const req = parsePaymentRequired(new Headers({ 'payment-required': encodePaymentRequiredHeader(v2Challenge([v2Option({ network: 'eip155:8453', asset: '0xabc' }), v2Option({ asset: 'So11111111111111111111111111111111111111112' })]) as never) }), none)!;
    const chosen = chooseOption(req, TARGET);
    expect(chosen.ok).toBe(false);
    if (!chosen.ok) {
      expect(chosen.reason).toContain('eip155:8453 in 0xabc');
      expect(chosen.reason).toContain('So11111111111111111111111111111111111111112');
    }
    expect(chooseOption(req, { ...TARGET, caip2: null }).ok).toBe(false);
  });

  test.each([
    ['a fractional amount', { amount: '0.01' }, 'atomic integer'],
    ['a zero amount', { amount: '0' }, 'out of range'],
    ['a u64 overflow', { amount: '18446744073709551616' }, 'out of range'],
    ['a bad payTo', { payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' }, 'payTo'],
    ['no fee payer', { extra: {} }, 'extra.feePayer'],
    ['a huge memo', { extra: { feePayer: FEE_PAYER, memo: 'x'.repeat(300) } }, 'memo'],
  ])('an unusable USDC option is refused: %s', (_name, over, reason) => {
    const req = parsePaymentRequired(new Headers({ 'payment-required': encodePaymentRequiredHeader(v2Challenge([v2Option(over)]) as never) }), none)!;
    const chosen = chooseOption(req, TARGET);
    expect(chosen.ok).toBe(false);
    if (!chosen.ok) expect(chosen.reason).toContain(reason);
  });
});

describe('writing the payment and reading the receipt', () => {
  test('v2 PAYMENT-SIGNATURE decodes with the package to {x402Version 2, resource, accepted, payload.transaction}', () => {
    const accepted = v2Option();
    const h = paymentHeader(2, { url: 'https://api.example.com/joke' }, accepted, 'AQID');
    expect(h.name).toBe('PAYMENT-SIGNATURE');
    expect(decodePaymentSignatureHeader(h.value)).toEqual({ x402Version: 2, resource: { url: 'https://api.example.com/joke' }, accepted, payload: { transaction: 'AQID' } } as never);
  });

  test('v1 X-PAYMENT carries scheme and network at the top', () => {
    const h = paymentHeader(1, 'https://x/y', { scheme: 'exact', network: 'solana-devnet', maxAmountRequired: '1' }, 'AQID');
    expect(h.name).toBe('X-PAYMENT');
    expect(JSON.parse(Buffer.from(h.value, 'base64').toString())).toEqual({ x402Version: 1, scheme: 'exact', network: 'solana-devnet', payload: { transaction: 'AQID' } });
  });

  test('PAYMENT-RESPONSE and X-PAYMENT-RESPONSE as the package encodes them; a non-signature transaction is dropped', () => {
    const v2 = parsePaymentResponse(new Headers({ 'PAYMENT-RESPONSE': encodePaymentResponseHeader({ success: true, transaction: SIG, network: DEVNET_CAIP2, payer: PAY_TO } as never) }));
    expect(v2).toEqual({ success: true, transaction: SIG, network: DEVNET_CAIP2, payer: PAY_TO, errorReason: null });
    const v1 = parsePaymentResponse(new Headers({ 'X-PAYMENT-RESPONSE': Buffer.from(JSON.stringify({ success: false, transaction: '', errorReason: 'invalid_exact_svm_payload_amount_mismatch' })).toString('base64') }));
    expect(v1).toMatchObject({ success: false, transaction: null, errorReason: 'invalid_exact_svm_payload_amount_mismatch' });
    expect(parsePaymentResponse(new Headers({ 'payment-response': 'not json!' }))).toBeNull();
    expect(parsePaymentResponse(new Headers())).toBeNull();
  });

  test('our header round-trips through the package decoder of PAYMENT-REQUIRED too', () => {
    const challenge = v2Challenge([v2Option()]);
    expect(decodePaymentRequiredHeader(encodePaymentRequiredHeader(challenge as never))).toEqual(challenge as never);
  });
});

describe('payment-identifier', () => {
  const declaration = { info: { required: true }, schema: { type: 'object' } };
  test("the seller's declaration is echoed with the purchase's id added; absent or malformed, nothing is sent", () => {
    expect(paymentIdentifierExtension({ extensions: { 'payment-identifier': declaration } }, 'x402_abcdefghijklmnopqrstuvwxyz')).toEqual({
      'payment-identifier': { info: { required: true, id: 'x402_abcdefghijklmnopqrstuvwxyz' }, schema: { type: 'object' } },
    });
    expect(paymentIdentifierExtension({}, 'x402_abcdefghijklmnopqrstuvwxyz')).toBeNull();
    expect(paymentIdentifierExtension({ extensions: { 'payment-identifier': { info: 'yes' } } }, 'x402_abcdefghijklmnopqrstuvwxyz')).toBeNull();
    expect(() => paymentIdentifierExtension({ extensions: { 'payment-identifier': declaration } }, 'short')).toThrow('16–128');
  });
  test('the v2 payment header carries the extensions; v1 has none', () => {
    const ext = { 'payment-identifier': { info: { required: false, id: 'x402_abcdefghijklmnopqrstuvwxyz' } } };
    const v2 = JSON.parse(Buffer.from(paymentHeader(2, { url: 'u' }, { scheme: 'exact' }, 'AA==', ext).value, 'base64').toString());
    expect(v2.extensions).toEqual(ext);
    const v1 = JSON.parse(Buffer.from(paymentHeader(1, undefined, { scheme: 'exact', network: 'solana-devnet' }, 'AA==', ext).value, 'base64').toString());
    expect(v1.extensions).toBeUndefined();
  });
});
