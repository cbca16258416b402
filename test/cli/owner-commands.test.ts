/**
 * The owner's commands for what the owner API has: `owner rotate-key WALLET` (and how the agent
 * gets the new key), `owner fund-requests [WALLET]` and `owner fund-requests decline FR --reason`;
 * a sweep's words name rotate-key. The real
 * entry in a child process, against a stub owner API that records what it was asked.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

const calls: { auth: string | null; body: Record<string, unknown> }[] = [];
const SWEEP = { sweep_id: 'rsw_1', wallet_id: 'wal_1', to_address: 'OwnerAddr3333', status: 'cancelled', executes_at: '2026-11-30T00:00:00.000Z', signable: false, created_at: '2026-11-27T00:00:00.000Z', transaction: null };
const ANSWERS: Record<string, unknown> = {
  rotate_api_key: { wallet_id: 'wal_1', api_key: 'wallet_bot_NEWKEY', rotated_at: '2026-11-27T00:00:00.000Z', revoked_exports: ['exp_1'], next_step: 'Store the api_key now.' },
  fund_requests: {
    items: [{ fund_request_id: 'fr_1', wallet_id: 'wal_1', wallet_name: 'Research bot', amount: 50, currency: 'USDC', reason: 'API credits', status: 'open', fund_url: 'http://x/fund/fr_1', created_at: '2026-11-26T00:00:00.000Z' }],
    total: 1,
    limit: 20,
    offset: 0,
  },
  recovery_sweep_cancel: SWEEP,
  recovery_sweeps: { items: [] },
  recovery_sweep_start: { ...SWEEP, status: 'waiting', next_step: '' },
};
const stub = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: async (req) => {
    const body = (await req.json()) as Record<string, unknown>;
    calls.push({ auth: req.headers.get('authorization'), body });
    // resolve_fund_request answers with what it was asked (the decline's reason, when given).
    const data = body.action === 'resolve_fund_request' ? { fund_request_id: body.fund_request_id, wallet_id: 'wal_1', amount: 50, status: body.decision, ...(body.reason ? { decline_reason: body.reason } : {}) } : ANSWERS[String(body.action)];
    return Response.json(data ? { success: true, data } : { success: false, error: { code: 'NOT_FOUND', message: String(body.action), how_to_fix: '' } });
  },
});
afterAll(() => stub.stop(true));
const owner = (...args: string[]) => runCli(['owner', ...args, '--server', `http://127.0.0.1:${stub.port}/v1`, '--owner-token', 'wallet_owner_T']);

describe('owner rotate-key', () => {
  test("rotates the wallet's bot key with the owner token and says how the agent stores the new key", async () => {
    calls.length = 0;
    const res = await owner('rotate-key', 'wal_1');
    expect(res.code).toBe(0);
    expect(calls).toEqual([{ auth: 'Bearer wallet_owner_T', body: { action: 'rotate_api_key', wallet_id: 'wal_1' } }]);
    expect(res.stdout).toContain('wallet_bot_NEWKEY');
    expect(res.stdout).toContain('agent-wallet set-api-key');
    expect(res.stdout).toContain('exp_1');
    const json = await owner('rotate-key', 'wal_1', '--json');
    expect(json.json).toMatchObject({ wallet_id: 'wal_1', api_key: 'wallet_bot_NEWKEY' });
  });

  test('an announced sweep says how to give the agent a key again: owner rotate-key WALLET', async () => {
    const kit = join(tempDir('aw-cli-kit-'), 'kit.json');
    writeFileSync(kit, JSON.stringify({ wallet_id: 'wal_1' }));
    const res = await owner('recover', 'sweep', '--kit', kit, '--to', 'OwnerAddr3333');
    expect(res.code).toBe(5);
    expect(res.stdout).toContain('agent-wallet owner rotate-key wal_1');
  });

  test('a cancelled sweep names owner rotate-key for the wallet to let the agent work again', async () => {
    const res = await owner('recover', 'cancel', 'rsw_1');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('agent-wallet owner rotate-key wal_1');
  });
});

describe('owner fund-requests', () => {
  test('lists the fund requests of all wallets or of WALLET, with --status, one readable row each', async () => {
    calls.length = 0;
    const all = await owner('fund-requests');
    expect(all.code).toBe(0);
    for (const part of ['fr_1', 'Research bot', '50', 'API credits', 'open', 'http://x/fund/fr_1']) expect(all.stdout).toContain(part);
    const one = await owner('fund-requests', 'wal_1', '--status', 'open', '--limit', '5', '--json');
    expect(one.json.items[0].fund_request_id).toBe('fr_1');
    expect(calls.map((c) => c.body)).toEqual([{ action: 'fund_requests' }, { action: 'fund_requests', wallet_id: 'wal_1', status: 'open', limit: 5 }]);
  });

  test('decline FR_ID --reason TEXT declines with the reason (resolve_fund_request); without --reason it declines without one; the list still works beside it', async () => {
    calls.length = 0;
    const res = await owner('fund-requests', 'decline', 'fr_1', '--reason', 'Use the credits you have first');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Declined fund request fr_1 of 50 USDC (wallet wal_1) with your reason: Use the credits you have first.');
    const bare = await owner('fund-requests', 'decline', 'fr_1', '--json');
    expect(bare.code).toBe(0);
    expect(bare.json).toMatchObject({ fund_request_id: 'fr_1', status: 'declined' });
    expect((await owner('fund-requests', 'wal_1')).code).toBe(0);
    expect(calls.map((c) => c.body)).toEqual([
      { action: 'resolve_fund_request', fund_request_id: 'fr_1', decision: 'declined', reason: 'Use the credits you have first' },
      { action: 'resolve_fund_request', fund_request_id: 'fr_1', decision: 'declined' },
      { action: 'fund_requests', wallet_id: 'wal_1' },
    ]);
  }, 30_000); // three CLI processes in a row: more than 5 s on a loaded 2-core machine

  test('decline without the request id is bad usage (exit 2) and asks nothing', async () => {
    calls.length = 0;
    const res = await owner('fund-requests', 'decline', '--reason', 'no');
    expect(res.code).toBe(2);
    expect(calls).toEqual([]);
  });
});
