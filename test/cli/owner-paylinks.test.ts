/**
 * `agent-wallet owner paylinks [WALLET] [--status S] [--json]` beside `owner fund-requests`: the
 * owner API's `paylinks` with the owner token, one readable row per paylink. The real entry in a
 * child process, against a stub owner API that records what it was asked.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { runCli } from '../helpers/daemon.ts';

const calls: { auth: string | null; body: Record<string, unknown> }[] = [];
const PAGE = {
  items: [{ request_id: 'req_1', wallet_id: 'wal_1', wallet_name: 'Research bot', description: 'Breakfast order 77', amount: 12, status: 'open', reference: 'order-77', url: 'http://x/pay/k7qm4tzp2x', expires_at: '2026-11-28T00:00:00.000Z', created_at: '2026-11-27T00:00:00.000Z' }],
  total: 1,
  limit: 20,
  offset: 0,
};
const stub = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: async (req) => {
    const body = (await req.json()) as Record<string, unknown>;
    calls.push({ auth: req.headers.get('authorization'), body });
    return Response.json(body.action === 'paylinks' ? { success: true, data: PAGE } : { success: false, error: { code: 'NOT_FOUND', message: String(body.action), how_to_fix: '' } });
  },
});
afterAll(() => stub.stop(true));
const owner = (...args: string[]) => runCli(['owner', ...args, '--server', `http://127.0.0.1:${stub.port}/v1`, '--owner-token', 'wallet_owner_T']);

describe('owner paylinks', () => {
  test('lists the paylinks of all wallets or of WALLET, with --status, one readable row each; --json prints the page', async () => {
    calls.length = 0;
    const all = await owner('paylinks');
    expect(all.code).toBe(0);
    for (const part of ['req_1', 'Research bot', '12', 'Breakfast order 77', 'open', 'http://x/pay/k7qm4tzp2x']) expect(all.stdout).toContain(part);
    const one = await owner('paylinks', 'wal_1', '--status', 'open', '--limit', '5', '--json');
    expect(one.code).toBe(0);
    expect(one.json.items[0].request_id).toBe('req_1');
    expect(calls).toEqual([
      { auth: 'Bearer wallet_owner_T', body: { action: 'paylinks' } },
      { auth: 'Bearer wallet_owner_T', body: { action: 'paylinks', wallet_id: 'wal_1', status: 'open', limit: 5 } },
    ]);
  });

  test('a --limit that is not a number is bad usage (exit 2) and asks nothing', async () => {
    calls.length = 0;
    const res = await owner('paylinks', '--limit', 'ten');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--limit must be a whole number');
    expect(calls).toEqual([]);
  });
});
