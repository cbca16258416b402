/**
 * Issue 19: an x402 seller's payTo is pinned per host on the first purchase. One host (a real
 * HTTP front on a fixed port) serves first a real seller paying A, then a real seller paying B:
 * the purchase at B is refused before any share leaves the client, unless the agent accepts the
 * new address (--accept-new-address), which moves the pin. A price above the agent's ceiling is
 * refused client-side too. A purchase resumed after approval is held to the payTo and price prepare
 * described when the agent fetched it, and one this profile never fetched is not signed on resume.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { buildX402Transfer } from '../../src/solana/transfer.ts';
import { runCli } from '../helpers/daemon.ts';
import { startLyingProxy, type LyingProxy } from '../helpers/lying-proxy.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { sellerAddress, startFacilitator, startV2Seller, type Facilitator, type Server } from '../x402/sellers.ts';

let world: World;
let proxy: LyingProxy;
let alice: Agent;
let facilitator: Facilitator;
let payA: Address;
let payB: Address;
let sellerA: Server;
let sellerB: Server;
let pricey: Server;
/** Where the front forwards: the seller currently behind the host. */
let behind: string;
let front: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost' } });
  alice = await world.agent('Alice');
  await world.claim(alice.walletId, 'alice-owner@example.com');
  await world.fund(alice.address, 20_000_000n);
  facilitator = await startFacilitator(world);
  [payA, payB] = await Promise.all([sellerAddress(world), sellerAddress(world)]);
  sellerA = await startV2Seller(world, facilitator, { payTo: payA });
  sellerB = await startV2Seller(world, facilitator, { payTo: payB });
  pricey = await startV2Seller(world, facilitator, { payTo: payA, price: '$2' });
  behind = sellerA.url;
  front = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (req) => {
      const url = new URL(req.url);
      const res = await fetch(`${behind}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body: req.method === 'GET' ? undefined : await req.text() });
      const headers = new Headers(res.headers);
      headers.delete('content-encoding');
      headers.delete('content-length');
      return new Response(await res.arrayBuffer(), { status: res.status, headers });
    },
  });
  proxy = startLyingProxy(world.url);
});
afterAll(async () => {
  await proxy?.stop();
  await front?.stop(true);
  await Promise.all([sellerA?.stop(), sellerB?.stop(), pricey?.stop()]);
  await world?.stop();
});

const cli = (...args: string[]) => runCli([...args, '--server', proxy.url, '--home', alice.home, '--json']);
const host = () => `127.0.0.1:${front.port}`;

describe('x402 payTo pinned per host', () => {
  test('the first purchase pins the host to its payTo', async () => {
    const r = await cli('x402', 'fetch', `http://${host()}/paid`);
    expect(r.json.outcome).toBe('completed');
    const pin = (await cli('payees')).json.items.find((p: any) => p.host === host());
    expect(pin).toMatchObject({ kind: 'host', address: payA, count: 1 });
  });

  test('the same host answering another payTo is refused before any share; accepted, it pays and moves the pin', async () => {
    behind = sellerB.url;
    const [b0, completes] = [await world.balance(payB), proxy.count('x402_sign_complete')];
    const refused = await cli('x402', 'fetch', `http://${host()}/paid`);
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ code: 'CLIENT_CUSTODY_CHECK', host: host(), pinned_address: payA, offered_address: payB });
    expect(refused.json.error.how_to_fix).toContain('--accept-new-address');
    expect(proxy.count('x402_sign_complete')).toBe(completes);
    expect(await world.balance(payB)).toBe(b0);
    const accepted = await cli('x402', 'fetch', `http://${host()}/paid`, '--accept-new-address');
    expect(accepted.json.outcome).toBe('completed');
    expect((await world.balance(payB)) - b0).toBe(10_000n);
    expect((await cli('payees')).json.items.find((p: any) => p.host === host())).toMatchObject({ address: payB, count: 2 });
  });

  test('a purchase resumed after approval is held to the host and ceiling recorded at fetch: a payTo rewritten at confirm gets no share', async () => {
    const appie = await world.agent('Appie');
    const owner = await world.claim(appie.walletId, 'appie-owner@example.com');
    await world.fund(appie.address, 1_000_000n);
    const run = (...args: string[]) => runCli([...args, '--server', proxy.url, '--home', appie.home, '--json']);
    behind = sellerA.url;
    expect((await run('x402', 'fetch', `http://${host()}/paid`)).json.outcome).toBe('completed');
    await owner.call('owner', 'set_guard_rails', { wallet_id: appie.walletId, rails: { approval_above: '0.005' } });
    const waiting = await run('x402', 'fetch', `http://${host()}/paid`);
    expect(waiting.code).toBe(5);
    await owner.call('owner', 'approve', { approval_id: waiting.json.approval_id });
    // The server rewrites the purchase it describes at confirm, summary and message alike.
    proxy.lie = async (action, _p, data) => {
      if (action !== 'x402_confirm' || data.signed) return data;
      const { messageBytes } = await buildX402Transfer({ wallet: appie.address, mint: world.simnet.mint, payTo: payB, amount: 10_000n, feePayer: facilitator.feePayer, blockhash: await world.services.chain.getLatestBlockhash() });
      return { ...data, message: Buffer.from(messageBytes).toString('base64'), summary: { ...data.summary, pay_to: payB } };
    };
    const completes = proxy.count('x402_sign_complete');
    const refused = await run('x402', 'resume', waiting.json.fetch_id).finally(() => {
      proxy.lie = null;
    });
    expect(refused.json.error).toMatchObject({ code: 'CLIENT_CUSTODY_CHECK', host: host(), pinned_address: payA, offered_address: payB });
    expect(proxy.count('x402_sign_complete')).toBe(completes);
    const resumed = await run('x402', 'resume', waiting.json.fetch_id);
    expect(resumed.json.outcome).toBe('completed');
  });

  test('a first purchase from a host, resumed after approval, is held to the payTo and price prepare described (no pin yet to hold it); a purchase this profile never fetched gets no share on resume', async () => {
    const newbie = await world.agent('Newbie');
    const owner = await world.claim(newbie.walletId, 'newbie-owner@example.com');
    await world.fund(newbie.address, 1_000_000n);
    await owner.call('owner', 'set_guard_rails', { wallet_id: newbie.walletId, rails: { approval_above: '0.005' } });
    const run = (...args: string[]) => runCli([...args, '--server', proxy.url, '--home', newbie.home, '--json']);
    behind = sellerA.url;
    const waiting = await run('x402', 'fetch', `http://${host()}/paid`);
    expect(waiting.code).toBe(5);
    await owner.call('owner', 'approve', { approval_id: waiting.json.approval_id });
    // The server describes another seller at confirm, summary and message alike; this profile never paid the host.
    proxy.lie = async (action, _p, data) => {
      if (action !== 'x402_confirm' || data.signed) return data;
      const { messageBytes } = await buildX402Transfer({ wallet: newbie.address, mint: world.simnet.mint, payTo: payB, amount: 10_000n, feePayer: facilitator.feePayer, blockhash: await world.services.chain.getLatestBlockhash() });
      return { ...data, message: Buffer.from(messageBytes).toString('base64'), summary: { ...data.summary, pay_to: payB } };
    };
    const completes = proxy.count('x402_sign_complete');
    const refused = await run('x402', 'resume', waiting.json.fetch_id).finally(() => {
      proxy.lie = null;
    });
    expect(refused.json.error).toMatchObject({ code: 'CLIENT_CUSTODY_CHECK', recorded_pay_to: payA, offered_pay_to: payB });
    expect(proxy.count('x402_sign_complete')).toBe(completes);
    expect((await run('x402', 'resume', waiting.json.fetch_id)).json.outcome).toBe('completed');

    // Prepared with the API key alone: no record in this profile, so resume signs nothing.
    const unasked = await newbie.api.call<any>('bot', 'x402_prepare', { url: `${sellerB.url}/paid` });
    await owner.call('owner', 'approve', { approval_id: unasked.approval_id });
    const b0 = await world.balance(payB);
    const unrecorded = await run('x402', 'resume', unasked.fetch_id);
    expect(unrecorded.json.error).toMatchObject({ code: 'CLIENT_CUSTODY_CHECK', fetch_id: unasked.fetch_id });
    expect(proxy.count('x402_sign_complete')).toBe(completes + 1);
    expect(await world.balance(payB)).toBe(b0);
  });

  test('a price above the profile ceiling is refused client-side', async () => {
    expect((await cli('ceiling', '1')).code).toBe(0);
    const completes = proxy.count('x402_sign_complete');
    const refused = await cli('x402', 'fetch', `${pricey.url}/paid`);
    expect(refused.json.error).toMatchObject({ code: 'CLIENT_CUSTODY_CHECK', amount: '2', max_amount: '1' });
    expect(proxy.count('x402_sign_complete')).toBe(completes);
  });
});
