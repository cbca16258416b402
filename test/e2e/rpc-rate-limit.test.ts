/**
 * One provider's 429 cannot stop everyone (issue 24.7): a real daemon process on network "custom"
 * with two endpoints — a provider (a loopback proxy in front of simnet) that turns to answering
 * every call with 429 Retry-After: 3600, and simnet itself as the second of solana.rpc_urls. With
 * the first provider limiting, an agent's payment still completes, at once, through the second.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import { ApiClient } from '../../src/client/api.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { claimInLedger, customChainEnv, fundOperator, runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

let simnet: Simnet;
let daemon: DaemonProcess;
let provider: ReturnType<typeof Bun.serve>;
let limiting = false;
let refused = 0;
const dataDir = join(tempDir('aw-429-'), 'data');

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 200 });
  provider = Bun.serve({
    port: 0,
    async fetch(req) {
      if (limiting) {
        refused++;
        return new Response('Too Many Requests', { status: 429, headers: { 'retry-after': '3600' } });
      }
      return fetch(simnet.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: await req.text() });
    },
  });
  daemon = await startDaemonProcess({ dataDir, env: customChainEnv(`http://127.0.0.1:${provider.port}`, { AGENT_WALLET_SOLANA_RPC_URLS: simnet.url }) });
  await fundOperator(simnet, daemon);
});
afterAll(async () => {
  await daemon?.stop();
  provider?.stop(true);
  await simnet?.stop();
});

async function agent(name: string) {
  const home = join(tempDir('aw-429-agent-'), 'home');
  const reg = await runCli(['register', '--name', name, '--server', daemon.url, '--home', home, '--json']);
  expect(reg.code).toBe(0);
  await claimInLedger(dataDir, [reg.json.wallet_id]);
  return { home, address: reg.json.address, username: reg.json.username as string, walletId: reg.json.wallet_id as string };
}

test("with the first provider answering 429 Retry-After: 3600, another agent's payment completes through the next endpoint", async () => {
  const alice = await agent('Limited Alice');
  const bob = await agent('Limited Bob');
  await simnet.faucet(alice.address, 20_000_000n);
  await simnet.faucet(bob.address, 0n);
  limiting = true;
  // Someone's call meets the limit first.
  const carol = await agent('Limited Carol');
  expect((await new ApiClient(daemon.url).call<{ status: string }>('bot', 'ping')).status).toBe('ok');
  await runCli(['balance', '--server', daemon.url, '--home', carol.home, '--json']);
  const started = Date.now();
  const paid = await runCli(['pay', bob.username, '3', '--server', daemon.url, '--home', alice.home, '--json']);
  expect({ code: paid.code, status: paid.json?.status }).toEqual({ code: 0, status: 'completed' });
  expect(Date.now() - started).toBeLessThan(20_000);
  expect(refused).toBeGreaterThan(0);
  expect(await createRpcChainPort(simnet.url).getTokenBalance(bob.address, simnet.mint)).toBe(3_000_000n);
}, 60_000);
