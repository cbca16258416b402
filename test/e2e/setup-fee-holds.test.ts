/**
 * An intent left unconfirmed does not stop other wallets from paying the same new address: each may
 * carry the account setup fee, and the signing transaction lets only one of them create the account
 * and charge it. Figures are read from the chain.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { commitmentList } from '../../src/frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../../src/frost/ids.ts';
import { commit, signShare } from '../../src/frost/party.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../../src/frost/wire.ts';
import { errorOf } from '../helpers/errors.ts';
import { agentKey } from '../helpers/signing.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

const USDC = 1_000_000n;
const PLATFORM_FEE = 10_000n;
const SETUP_FEE = 250_000n;

let world: World;
let alice: Agent;
let bob: Agent;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice', { claimBy: 'a@example.com' });
  bob = await world.agent('Bob', { claimBy: 'b@example.com' });
  await world.fund(alice.address, 20n * USDC);
  await world.fund(bob.address, 20n * USDC);
});
afterAll(() => world.stop());

const newAddress = async (): Promise<Address> => (await generateKeyPairSigner()).address;
const treasuryBalance = () => world.balance(world.services.feePayer.address);

test("another wallet's unconfirmed intent to a new address does not hold its setup fee: the payment goes through, and the intent later pays no setup fee", async () => {
  const to = await newAddress();
  type Intent = { transaction_id: string; fee_breakdown: { account_setup_fee: number } };
  const waiting = await alice.api.call<Intent>('bot', 'pay', { to, amount: 1 });
  expect(waiting.fee_breakdown.account_setup_fee).toBe(0.25);
  const t0 = await treasuryBalance();
  // Before: quoted without the fee (Alice held it) and refused at confirm until her intent ended.
  const paid = await bob.api.call<Intent>('bot', 'pay', { to, amount: 1 });
  expect(paid.fee_breakdown.account_setup_fee).toBe(0.25);
  expect((await confirmSignSubmit(bob.api, bob.profile, paid.transaction_id)).status).toBe('completed');
  // Alice's intent, confirmed now: the account exists, its setup fee is released.
  const a0 = await world.balance(alice.address);
  expect((await confirmSignSubmit(alice.api, alice.profile, waiting.transaction_id)).status).toBe('completed');
  expect(a0 - (await world.balance(alice.address))).toBe(USDC + PLATFORM_FEE);
  expect(await world.balance(to)).toBe(2n * USDC);
  expect((await treasuryBalance()) - t0).toBe(2n * PLATFORM_FEE + SETUP_FEE);
});

test('the client takes the refusal in its stride: one new round over the rebuilt message', async () => {
  const to = await newAddress();
  const t0 = await treasuryBalance();
  const a = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to, amount: 1 });
  await alice.api.call('bot', 'confirm_payment', { transaction_id: a.transaction_id });
  const b = await bob.api.call<{ transaction_id: string }>('bot', 'pay', { to, amount: 1 });
  expect((await confirmSignSubmit(bob.api, bob.profile, b.transaction_id)).status).toBe('completed');
  // Alice's client confirms (its stored message creates the account), is refused at signing, and signs the rebuilt one.
  const a0 = await world.balance(alice.address);
  expect((await confirmSignSubmit(alice.api, alice.profile, a.transaction_id)).status).toBe('completed');
  expect(a0 - (await world.balance(alice.address))).toBe(USDC + PLATFORM_FEE);
  expect((await treasuryBalance()) - t0).toBe(2n * PLATFORM_FEE + SETUP_FEE);
});

test('two messages that would each create the account: the one signed second is refused and rebuilt without the create and its fee', async () => {
  const to = await newAddress();
  const t0 = await treasuryBalance();
  const a = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to, amount: 1 });
  const b = await bob.api.call<{ transaction_id: string }>('bot', 'pay', { to, amount: 1 });
  // Both messages built with the account creation and the setup fee.
  const aConfirmed = await alice.api.call<{ message: string }>('bot', 'confirm_payment', { transaction_id: a.transaction_id });
  await bob.api.call('bot', 'confirm_payment', { transaction_id: b.transaction_id });
  expect((await confirmSignSubmit(bob.api, bob.profile, b.transaction_id)).status).toBe('completed');
  // Alice's share for her old message: the server refuses to sign it and drops that message.
  const key = agentKey(alice.profile);
  const { nonces, commitments } = commit(key);
  const init = await alice.api.call<{ sign_session_id: string; server_commitments: unknown; message: string }>('bot', 'frost_sign_init', { transaction_id: a.transaction_id, commitments: encodeCommitments(commitments) });
  expect(init.message).toBe(aConfirmed.message);
  const share = signShare(key, nonces, commitmentList(commitments, decodeCommitments(init.server_commitments, SERVER_ID)), new Uint8Array(Buffer.from(init.message, 'base64')));
  const refused = await errorOf(alice.api.call('bot', 'frost_sign_complete', { transaction_id: a.transaction_id, sign_session_id: init.sign_session_id, signature_share: encodeSignatureShare(AGENT_ID, share) }));
  expect(refused.errorCode).toBe('INVALID_STATUS');
  expect(refused.howToFix).toContain('Confirm this payment again');
  expect(refused.details).toMatchObject({ rebuild: true });
  // Confirmed again: built without the creation, its setup fee released; it pays the amount and the platform fee only.
  const a0 = await world.balance(alice.address);
  expect((await confirmSignSubmit(alice.api, alice.profile, a.transaction_id)).status).toBe('completed');
  expect(a0 - (await world.balance(alice.address))).toBe(USDC + PLATFORM_FEE);
  expect((await treasuryBalance()) - t0).toBe(2n * PLATFORM_FEE + SETUP_FEE);
});
