/**
 * Sign in instead of paying again (issue 28, item 3): a seller on the official packages
 * (`@x402/hono` + `@x402/extensions` sign-in-with-x) offers a Solana sign-in; a wallet that bought
 * the URL proves it with a FROST-made SIWS signature and is served without paying. The daemon
 * gives no share to a sign-in for another host or past its time; the client gives none to a text
 * the daemon changed; the owner can switch it off.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { CustodyCheckError } from '../../src/client/errors.ts';
import { x402Fetch } from '../../src/client/x402.ts';
import { AGENT_ID } from '../../src/frost/ids.ts';
import { commit } from '../../src/frost/party.ts';
import { encodeCommitments } from '../../src/frost/wire.ts';
import { errorOf } from '../helpers/errors.ts';
import { startLyingProxy } from '../helpers/lying-proxy.ts';
import { agentKey } from '../helpers/signing.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { sellerAddress, startFacilitator, startSiwxSeller, type Facilitator } from '../x402/sellers.ts';

let world: World;
let facilitator: Facilitator;
let payTo: Address;
let seller: Awaited<ReturnType<typeof startSiwxSeller>>;

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  facilitator = await startFacilitator(world);
  payTo = await sellerAddress(world);
  seller = await startSiwxSeller(world, facilitator, { payTo });
});
afterAll(async () => {
  await seller?.stop();
  await world?.stop();
});

async function buyer(name: string): Promise<{ agent: Agent; owner: ApiClient }> {
  const agent = await world.agent(name);
  const owner = await world.claim(agent.walletId, `${name.toLowerCase()}-owner@example.com`);
  await world.fund(agent.address, 5_000_000n);
  return { agent, owner };
}

test('bought once, then signed in: the second fetch returns 200 and costs nothing on chain; the sign-in is in the events and the audit log', async () => {
  const { agent, owner } = await buyer('Sia');
  const url = `${seller.url}/article`;
  expect((await x402Fetch(agent.api, agent.profile, { url })).outcome).toBe('completed');
  const [wallet0, seller0, settled0] = [await world.balance(agent.address), await world.balance(payTo), facilitator.settled.length];
  const again = await x402Fetch(agent.api, agent.profile, { url });
  expect(again.outcome).toBe('signed_in');
  expect(again.response).toMatchObject({ status: 200 });
  expect(JSON.parse(again.response!.body)).toEqual({ article: 'the full text' });
  expect(again.settled).toMatchObject({ status: 'completed', host: '127.0.0.1' });
  expect(again.settled!.message).toContain(`${new URL(seller.url).host} wants you to sign in with your Solana account:\n${agent.address}`);
  expect(seller.state.signedIn).toBe(1);
  expect([await world.balance(agent.address), await world.balance(payTo), facilitator.settled.length]).toEqual([wallet0, seller0, settled0]);
  expect((await agent.api.call<any>('bot', 'transactions', { type: 'x402' })).total).toBe(1);
  const events = await agent.api.call<any>('bot', 'events', { types: ['x402.signed_in'] });
  expect(events.items[0].data).toMatchObject({ sign_in_id: again.settled!.sign_in_id, url, http_status: 200, signed_in: true });
  const audit = await owner.call<any>('owner', 'audit_log', { wallet_id: agent.walletId });
  expect(audit.items.find((a: any) => a.kind === 'x402.sign_in')).toMatchObject({ actor: 'agent', data: { url } });
  // The nonces of the round were used once, for the signature the seller verified.
  const row = (await world.services.db.get('SELECT status, nonces, signature FROM x402_sign_ins WHERE sign_in_id = ?', again.settled!.sign_in_id)) as any;
  expect(row).toMatchObject({ status: 'completed', nonces: null, signature: again.settled!.signature });
});

test('the owner switches sign-in off (x402_sign_in_disabled): the second fetch pays, saying why it did not sign in', async () => {
  const { agent, owner } = await buyer('Sib');
  const url = `${seller.url}/article`;
  await x402Fetch(agent.api, agent.profile, { url });
  await owner.call('owner', 'set_guard_rails', { wallet_id: agent.walletId, rails: { x402_sign_in_disabled: true } });
  const before = await world.balance(agent.address);
  const again = await x402Fetch(agent.api, agent.profile, { url });
  expect(again.outcome).toBe('completed');
  expect(again.prepared.sign_in_declined).toContain('x402_sign_in_disabled');
  expect(before - (await world.balance(agent.address))).toBe(10_000n);
});

test('a seller whose sign-in names another host gets no share: no sign-in is opened, the purchase goes on', async () => {
  const evil = await startSiwxSeller(world, facilitator, { payTo, origin: 'http://evil.example:8080' });
  try {
    const { agent } = await buyer('Sic');
    const url = `${evil.url}/article`;
    await x402Fetch(agent.api, agent.profile, { url });
    const again = await x402Fetch(agent.api, agent.profile, { url });
    expect(again.outcome).toBe('completed');
    expect(again.prepared.sign_in_declined).toContain('evil.example:8080');
    expect(await world.services.db.get('SELECT count(*) AS n FROM x402_sign_ins WHERE wallet_id = ?', agent.walletId)).toEqual({ n: 0n });
  } finally {
    await evil.stop();
  }
});

test('a sign-in past its time gets no share: the round and the completion are refused', async () => {
  const { agent } = await buyer('Sid');
  const url = `${seller.url}/article`;
  await x402Fetch(agent.api, agent.profile, { url });
  const prepared = await agent.api.call<any>('bot', 'x402_prepare', { url });
  const id = prepared.sign_in.sign_in_id;
  const commitments = encodeCommitments(commit(agentKey(agent.profile)).commitments);
  world.clock.offsetMs = 6 * 60_000;
  try {
    const late = await errorOf(agent.api.call('bot', 'x402_sign_in', { sign_in_id: id, commitments }));
    expect(late.errorCode).toBe('INVALID_STATUS');
    expect(late.message).toContain('not signed: the sign-in was issued at');
  } finally {
    world.clock.offsetMs = 0;
  }
  // Opened in time, completed too late: still no signature.
  await agent.api.call('bot', 'x402_sign_in', { sign_in_id: id, commitments });
  world.clock.offsetMs = 6 * 60_000;
  try {
    const share = { identifier: AGENT_ID, share: '02'.padEnd(64, '0') };
    const late = await errorOf(agent.api.call('bot', 'x402_sign_in_complete', { sign_in_id: id, signature_share: share }));
    expect(late.errorCode).toBe('INVALID_STATUS');
  } finally {
    world.clock.offsetMs = 0;
  }
  expect(await world.services.db.get('SELECT signature FROM x402_sign_ins WHERE sign_in_id = ?', id)).toEqual({ signature: null });
});

test('a daemon that changes the sign-in text (another host) gets no share from the client', async () => {
  const { agent } = await buyer('Sie');
  const url = `${seller.url}/article`;
  await x402Fetch(agent.api, agent.profile, { url });
  const proxy = startLyingProxy(world.url);
  proxy.lie = (action, _params, data) =>
    action === 'x402_prepare' && data.sign_in ? { ...data, sign_in: { ...data.sign_in, message: data.sign_in.message.replace(new URL(seller.url).host, 'evil.example') } } : data;
  try {
    const lied = new ApiClient(proxy.url, agent.profile.api_key);
    const err = await x402Fetch(lied, agent.profile, { url }).then(() => null, (e: Error) => e);
    expect(err).toBeInstanceOf(CustodyCheckError);
    expect(err!.message).toContain('the sign-in is for evil.example');
    expect(proxy.count('x402_sign_in')).toBe(0);
    expect(proxy.count('x402_sign_in_complete')).toBe(0);
  } finally {
    await proxy.stop();
  }
});
