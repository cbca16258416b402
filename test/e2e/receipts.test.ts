/**
 * Signed receipts (issue 30, item 3): a completed payment's receipt from the real CLI verifies
 * with a standard JOSE library (`jose`) against the JWKS the daemon publishes, names the amounts,
 * parties, signature and the chain's slot; a receipt whose amount was changed fails; a merchant's
 * payment.received event (what its webhook carries) holds a receipt that verifies too.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { runCli } from '../helpers/daemon.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;
let jwks: ReturnType<typeof createLocalJWKSet>;

beforeAll(async () => {
  world = await startWorld();
  ({ alice, bob } = await world.payerAndPayee(1_000_000n));
  jwks = createLocalJWKSet((await (await fetch(`${new URL(world.url).origin}/.well-known/agent-wallet/log-key`)).json()) as JSONWebKeySet);
});
afterAll(async () => {
  await world?.stop();
});

async function pay(to: string, amount: number, extra: Record<string, unknown> = {}): Promise<string> {
  const intent = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to, amount, ...extra });
  expect((await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id)).status).toBe('completed');
  return intent.transaction_id;
}

const claimsOf = async (jws: string) => JSON.parse(new TextDecoder().decode((await compactVerify(jws, jwks)).payload));

test("a payment's receipt from the CLI verifies with jose against the published key and states what was paid, to whom, where on chain", async () => {
  const txId = await pay(bob.username, 0.25, { reference: 'inv-7' });
  const r = await runCli(['receipt', txId, '--server', world.url, '--home', alice.home]);
  expect(r.code).toBe(0);
  const jws = r.stdout.trim();
  expect(decodeProtectedHeader(jws)).toMatchObject({ alg: 'EdDSA', typ: 'agent-wallet-receipt+jwt' });
  const claims = await claimsOf(jws);
  const [status] = await world.services.chain.getSignatureStatuses([claims.signature]);
  expect(claims).toMatchObject({
    sub: txId,
    kind: 'payment',
    status: 'completed',
    amount: '0.25',
    amount_micro: '250000',
    currency: 'USDC',
    reference: 'inv-7',
    from: { wallet_id: alice.profile.wallet_id, address: alice.address },
    to: { wallet_id: bob.profile.wallet_id, username: bob.username },
    slot: Number(status!.slot),
  });
  expect(claims.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,90}$/);
});

test('a receipt whose amount was changed does not verify', async () => {
  const txId = await pay(bob.username, 0.01);
  const { receipt } = await alice.api.call<{ receipt: string }>('bot', 'get_receipt', { transaction_id: txId });
  const [header, payload, signature] = receipt.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
  const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, amount: '100', amount_micro: '100000000' })).toString('base64url')}.${signature}`;
  const refused = await compactVerify(forged, jwks).then(
    () => null,
    (e: Error) => e,
  );
  expect(refused?.name).toBe('JWSSignatureVerificationFailed');
  expect((await claimsOf(receipt)).amount).toBe('0.01');
});

test("a transaction not completed gets no receipt, and another wallet's is not found", async () => {
  const intent = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount: 0.01 });
  const pending = await alice.api.call('bot', 'get_receipt', { transaction_id: intent.transaction_id }).then(() => null, (e) => e);
  expect(pending?.errorCode).toBe('INVALID_STATUS');
  const foreign = await bob.api.call('bot', 'get_receipt', { transaction_id: intent.transaction_id }).then(() => null, (e) => e);
  expect(foreign?.errorCode).toBe('NOT_FOUND');
  await alice.api.call('bot', 'cancel_payment', { transaction_id: intent.transaction_id });
});

test("a merchant's payment.received (its webhook's message) carries the payment's receipt, which verifies", async () => {
  const payout = bob.address;
  const reg = (await (await fetch(`${world.url}/merchant`, { method: 'POST', body: JSON.stringify({ action: 'register', name: 'Shop', username: 'receipt-shop', payout_address: payout }) })).json()) as any;
  const txId = await pay('receipt-shop', 0.05, { reference: 'order-9' });
  const events = (await (await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${reg.data.api_key}` }, body: JSON.stringify({ action: 'events', types: ['payment.received'] }) })).json()) as any;
  const data = events.data.items.find((e: any) => e.data.transaction_id === txId).data;
  const claims = await claimsOf(data.receipt);
  expect(claims).toMatchObject({ sub: txId, amount: '0.05', reference: 'order-9', to: { username: 'receipt-shop' }, signature: data.signature });
});
