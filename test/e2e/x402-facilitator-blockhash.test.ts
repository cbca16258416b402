/**
 * Payments under a blockhash the chain does not know (issue 40, item 13): verify asks the chain
 * (a simulation) and refuses them, a send the node answers "blockhash not found" is a payment not
 * sent (refused, nothing owed), a sale's fee is owed once it completes, and what a settle waits
 * for is polled in the background of the RPC budget — so a burst of such payments neither uses
 * up a merchant's credit nor starves an agent's calls under `solana.rpc_max_rps` 8. The daemon's
 * RPC goes through a plain HTTP proxy in front of the simnet that can play a node answering every
 * send with BlockhashNotFound (as a load-balanced provider's lagging node does).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner, getAddressDecoder, type Address, type KeyPairSigner } from '@solana/kit';
import { exactPayment } from '../helpers/exact-payment.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

const PRICE = 100_000_000n;
const UNKNOWN_BLOCKHASH = 'invalid_exact_svm_payload_blockhash_not_found';

let world: World;
let rpcProxy: ReturnType<typeof Bun.serve>;
let failSends = false;
let attacker: KeyPairSigner;
let payout: Address;
let merchantKey: string;
let facilitatorUrl: string;
let agent: Agent;

beforeAll(async () => {
  world = await startWorld({
    rpcMaxRps: 8,
    rpcUrlOf: (simnetUrl) => {
      rpcProxy = Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        async fetch(request) {
          const body = await request.text();
          const call = JSON.parse(body) as { id: unknown; method: string };
          if (failSends && call.method === 'sendTransaction') {
            const data = { err: 'BlockhashNotFound', logs: [], accounts: null, unitsConsumed: 0, returnData: null, innerInstructions: null, replacementBlockhash: null, loadedAccountsDataSize: 0, fee: null };
            return Response.json({ jsonrpc: '2.0', id: call.id, error: { code: -32002, message: 'Transaction simulation failed: Blockhash not found', data } });
          }
          const answer = await fetch(simnetUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          return new Response(await answer.arrayBuffer(), { status: answer.status, headers: { 'content-type': 'application/json' } });
        },
      });
      return `http://127.0.0.1:${rpcProxy.port}`;
    },
  });
  facilitatorUrl = `${new URL(world.url).origin}/x402/facilitator`;
  attacker = await generateKeyPairSigner();
  await world.fund(attacker.address, PRICE);
  payout = (await generateKeyPairSigner()).address;
  await world.fund(payout, 0n);
  const reg = await fetch(`${world.url}/merchant`, { method: 'POST', body: JSON.stringify({ action: 'register', name: 'Big Sales', username: 'big-sales', payout_address: payout }) });
  merchantKey = ((await reg.json()) as any).data.api_key;
  agent = await world.agent('Agent', { claimBy: 'agent-owner@example.com' });
  await world.fund(agent.address, 1_000_000n);
});
afterAll(async () => {
  await world?.stop();
  await rpcProxy?.stop(true);
});

const facilitate = async (path: 'verify' | 'settle', body: unknown): Promise<any> =>
  (await fetch(`${facilitatorUrl}/${path}`, { method: 'POST', headers: { authorization: `Bearer ${merchantKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
const merchantCall = async (action: string): Promise<any> =>
  ((await (await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${merchantKey}` }, body: JSON.stringify({ action }) })).json()) as any).data;
const owed = async () => (await merchantCall('sale_fees')).owed as number;
const sales = async () => (await world.services.db.all('SELECT status, fee, error FROM x402_sales ORDER BY created_at')) as { status: string; fee: bigint; error: string | null }[];

/** The attacker's payment of PRICE to the merchant, under the chain's blockhash or `blockhash`. */
const payment = (memo: string, blockhash?: string) => exactPayment(world, { payer: attacker, payTo: payout, amount: PRICE, memo, blockhash });
const unknownBlockhash = () => getAddressDecoder().decode(crypto.getRandomValues(new Uint8Array(32)));

async function reconcileMs(): Promise<number> {
  const started = performance.now();
  await agent.api.call('bot', 'reconcile', {});
  return performance.now() - started;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

test("20 settles under unknown blockhashes at rpc_max_rps 8 are refused at once, owe nothing, leave the merchant's 100 USDC sale to settle; an agent's reconcile keeps answering", async () => {
  const idle: number[] = [];
  for (let i = 0; i < 5; i++) idle.push(await reconcileMs());

  const attackStarted = performance.now();
  const attack = await Promise.all(Array.from({ length: 20 }, (_, i) => payment(`attack ${i}`, unknownBlockhash())));
  const settles = attack.map((body) => facilitate('settle', body).then((r) => ({ r, ms: performance.now() - attackStarted })));
  const during: number[] = [];
  for (let i = 0; i < 5; i++) during.push(await reconcileMs());
  const answers = await Promise.all(settles);
  console.log(
    `[issue 40 item 13] reconcile at rpc_max_rps 8: idle median ${median(idle).toFixed(0)} ms (max ${Math.max(...idle).toFixed(0)}); during 20 unknown-blockhash settles median ${median(during).toFixed(0)} ms (max ${Math.max(...during).toFixed(0)}); the 20 settles answered within ${Math.max(...answers.map((a) => a.ms)).toFixed(0)} ms`,
  );
  expect(await facilitate('verify', await payment('verify', unknownBlockhash()))).toMatchObject({ isValid: false, invalidReason: UNKNOWN_BLOCKHASH });
  for (const { r } of answers) expect(r).toMatchObject({ success: false, errorReason: UNKNOWN_BLOCKHASH });
  expect(await sales()).toEqual([]);
  expect(await owed()).toBe(0);

  // The honest sale the attack used to block: 100 USDC, its fee owed once it completed.
  const honest = await facilitate('settle', await payment('honest'));
  expect(honest).toMatchObject({ success: true });
  expect(await world.balance(payout)).toBe(PRICE);
  expect(await owed()).toBe(0.5);
});

test('a send the node answers BlockhashNotFound is a payment not sent: refused as such, the sale failed, nothing owed, the fee payer pays nothing', async () => {
  await world.fund(attacker.address, PRICE);
  const owed0 = await owed();
  const feePayer0 = await world.services.chain.getSolBalance(world.services.feePayer.address);
  failSends = true;
  let answer: any;
  try {
    answer = await facilitate('settle', await payment('not sent'));
  } finally {
    failSends = false;
  }
  expect(answer).toMatchObject({ success: false, errorReason: UNKNOWN_BLOCKHASH });
  expect(answer.errorMessage).toContain('not sent');
  expect((await sales()).at(-1)).toMatchObject({ status: 'failed', fee: 500_000n });
  expect(await owed()).toBe(owed0);
  expect(await world.services.chain.getSolBalance(world.services.feePayer.address)).toBe(feePayer0);
  expect(await world.services.db.get('SELECT count(*) AS n FROM sale_network_costs s JOIN x402_sales x USING (sale_id) WHERE x.status = ?', 'failed')).toEqual({ n: 0n });
});
