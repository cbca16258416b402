import { describe, expect, test } from 'bun:test';
import { itemsTable, paylinkText, usdcText } from '../../src/cli/paylink-text.ts';

describe('a paylink in the terminal', () => {
  test('amounts show at least two decimals and never an exponent', () => {
    expect([usdcText(6), usdcText(2.5), usdcText(0.000001), usdcText(1234.56789), usdcText(null)]).toEqual(['6.00', '2.50', '0.000001', '1234.56789', '-']);
  });

  test('items print as aligned columns with description, quantity, price and line total, and the total under them', () => {
    const lines = itemsTable(
      [
        { description: 'Tea: green', price: 2.5, quantity: 2, total: 5 },
        { description: 'Biscuits', price: 1, quantity: 10, total: 10 },
      ],
      15,
    );
    expect(lines).toEqual([
      '  Item        Qty  Price  Total',
      '  Tea: green    2   2.50   5.00',
      '  Biscuits     10   1.00  10.00',
      '  Total                   15.00 USDC',
    ]);
  });

  test('a paid paylink says who paid how much, how and when, with the signature; an open-amount one says the payer chooses', () => {
    const paid = paylinkText(
      { request_id: 'req_1', description: 'Cake', amount: 30, items: [], status: 'paid', paid_amount: 30, payer: 'buyer-bot', paid_via: 'agent', paid_at: '2026-11-24T20:00:00.000Z', url: 'http://x/pay/abc', signature: 'SIG', rejected_payments: [] },
      'Payment request req_1',
    );
    expect(paid).toContain('Status:     paid 30.00 USDC by buyer-bot via agent at 2026-11-24T20:00:00.000Z');
    expect(paid).toContain('Signature:  SIG');
    expect(paid).toContain('  Amount: 30.00 USDC');
    const open = paylinkText({ request_id: 'req_2', description: 'Tips', amount: null, items: [], status: 'open', expires_at: 'T', rejected_payments: [] }, 'h');
    expect(open).toContain('  Amount: any (the payer chooses)');
    expect(open.every((l) => l.length < 200)).toBe(true);
  });
});
