/** An unreachable Solana RPC is SERVICE_UNAVAILABLE with Retry-After, never an internal error. */
import { expect, test } from 'bun:test';
import { ApiClient, ApiError } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { markClaimed } from '../../src/db/wallets.ts';
import { startTestServer, testServices } from '../helpers/services.ts';

test('balance and pay answer 503 SERVICE_UNAVAILABLE when the RPC is down, and create nothing', async () => {
  const services = testServices({ rpcUrl: 'http://127.0.0.1:9' });
  const server = await startTestServer(services);
  try {
    const { profile } = await registerWallet(new ApiClient(server.url), { name: 'Offline' });
    await services.db.run("INSERT INTO owners (owner_id, email, created_at) VALUES ('own_x', 'o@example.com', 1)");
    await services.db.transaction(async () => await markClaimed(services.db, profile.wallet_id, 'own_x', Date.now()));
    const res = await fetch(`${server.url}/bot`, { method: 'POST', headers: { authorization: `Bearer ${profile.api_key}` }, body: '{"action":"balance"}' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    const body = await res.json();
    expect(body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(body.error.how_to_fix).toContain('rpc_url');
    let err: unknown;
    try {
      await new ApiClient(server.url, profile.api_key).call('bot', 'pay', { to: '11111111111111111111111111111112', amount: 1 });
    } catch (e) {
      err = e;
    }
    expect((err as ApiError).errorCode).toBe('SERVICE_UNAVAILABLE');
    expect(((await services.db.get('SELECT count(*) AS n FROM transactions')) as { n: bigint }).n).toBe(0n);
  } finally {
    await server.stop();
  }
});
