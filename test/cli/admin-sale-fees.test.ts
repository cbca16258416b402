/** `agent-wallet admin sale-fees`: the operator's receivables from merchants' x402 sales, read from the data directory. */
import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { insertMerchant } from '../../src/db/merchants.ts';
import { openDatabase } from '../../src/db/open.ts';
import { accrueSaleFee, insertInvoice } from '../../src/db/sale-fees.ts';
import { runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

test('lists what each merchant owes, most first, with its open invoice and whether its sales are refused', async () => {
  const dataDir = join(tempDir('aw-admin-fees-'), 'data');
  const db = openDatabase(join(dataDir, 'wallet.db'), { network: 'simnet' });
  const merchant = async (id: string, username: string) =>
    await insertMerchant(db, { merchant_id: id, username, name: username, payout_address: '11111111111111111111111111111112', api_key_hash: new Uint8Array(32).fill(id.length), created_at: 1 });
  await db.transaction(async () => {
    await merchant('mer_small', 'small-shop');
    await merchant('mer_big', 'big-shop');
    await accrueSaleFee(db, 'mer_small', 1_500n, 2);
    await accrueSaleFee(db, 'mer_big', 10_000_000n, 3);
    await insertInvoice(db, { invoice_id: 'inv_big', merchant_id: 'mer_big', amount: 10_000_000n, reference_key: '11111111111111111111111111111113', now: 4 });
  });
  db.close();

  const res = await runCli(['admin', 'sale-fees', '--json', '--data-dir', dataDir]);
  expect(res.code).toBe(0);
  expect(res.json).toEqual({
    items: [
      { merchant_id: 'mer_big', username: 'big-shop', accrued: '10', paid: '0', owed: '10', sales_refused: true, open_invoice: { invoice_id: 'inv_big', amount: '10' }, updated_at: new Date(3).toISOString() },
      { merchant_id: 'mer_small', username: 'small-shop', accrued: '0.0015', paid: '0', owed: '0.0015', sales_refused: false, open_invoice: null, updated_at: new Date(2).toISOString() },
    ],
    total_owed: '10.0015',
    credit_limit: '10',
  });
});
