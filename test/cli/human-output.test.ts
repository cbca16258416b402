/**
 * Readable output keeps the fields people act on: `merchant history` (when, who paid, a refund
 * due) and `owner recover status` (which sweep, when it may be signed, where the money goes).
 * The real entry in a child process, against a stub API answering what the daemon answers.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

const HISTORY = {
  items: [
    { transaction_id: 'tx_1', amount: 0.05, currency: 'USDC', reference: 'order-7', note: null, payer: 'alice', payer_address: 'AliceAddr1111', signature: 'sig1', payment_request_id: null, via: 'x402', paid_at: '2026-11-20T10:00:00.000Z', refund_due: 'upstream answered 500', sale_fee: 0.001 },
    { transaction_id: 'tx_2', amount: 5, currency: 'USDC', reference: null, note: 'lunch', payer: null, payer_address: 'BobAddr22222', signature: 'sig2', payment_request_id: null, via: 'pay', paid_at: '2026-11-19T09:00:00.000Z' },
  ],
  total: 2,
  limit: 20,
  offset: 0,
};
const SWEEPS = {
  items: [
    { sweep_id: 'rsw_1', wallet_id: 'wal_1', to_address: 'OwnerAddr3333', status: 'waiting', executes_at: '2026-11-30T00:00:00.000Z', signable: false, created_at: '2026-11-27T00:00:00.000Z', transaction: null },
    { sweep_id: 'rsw_0', wallet_id: 'wal_1', to_address: 'OwnerAddr3333', status: 'done', executes_at: '2026-11-01T00:00:00.000Z', signable: false, created_at: '2026-10-29T00:00:00.000Z', transaction: { transaction_id: 'tx_9', status: 'confirmed', amount: 12, signature: 'sig9' } },
  ],
};
const stub = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: async (req) => {
    const { action } = (await req.json()) as { action: string };
    const data = action === 'history' ? HISTORY : action === 'recovery_sweeps' ? SWEEPS : null;
    return Response.json(data ? { success: true, data } : { success: false, error: { code: 'NOT_FOUND', message: action, how_to_fix: '' } });
  },
});
afterAll(() => stub.stop(true));
const server = `http://127.0.0.1:${stub.port}/v1`;

describe('human-readable output', () => {
  test('merchant history: date, payer (name or address), reference and a refund due on each row', async () => {
    const home = tempDir('aw-cli-out-');
    mkdirSync(join(home, 'merchants'), { recursive: true });
    writeFileSync(join(home, 'merchants', 'default.json'), JSON.stringify({ version: 1, server_url: server, merchant_id: 'mer_1', username: 'cafe', name: 'Cafe', payout_address: 'x', api_key: 'wallet_merchant_x', created_at: '' }));
    const res = await runCli(['merchant', 'history', '--home', home]);
    expect(res.code).toBe(0);
    const [first, second] = res.stdout.split('\n');
    for (const part of ['2026-11-20T10:00:00.000Z', 'tx_1', '0.05', 'alice', 'order-7', 'x402', 'refund_due=upstream answered 500']) expect(first).toContain(part);
    for (const part of ['2026-11-19T09:00:00.000Z', 'tx_2', 'BobAddr22222']) expect(second).toContain(part);
  });

  test('owner recover status: sweep id, executes at, to address and the transaction of each sweep', async () => {
    const res = await runCli(['owner', 'recover', 'status', 'wal_1', '--server', server, '--owner-token', 'wallet_owner_x']);
    expect(res.code).toBe(0);
    const [first, second] = res.stdout.split('\n');
    for (const part of ['rsw_1', 'waiting', '2026-11-30T00:00:00.000Z', 'OwnerAddr3333']) expect(first).toContain(part);
    for (const part of ['rsw_0', 'tx_9', 'confirmed', 'sig9']) expect(second).toContain(part);
  });
});
