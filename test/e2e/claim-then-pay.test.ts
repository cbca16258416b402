/**
 * The first payment to a freshly claimed payee (issue 24.11): claimed through its real magic link
 * (which has the operator set the wallet up on chain in the background), then paid at once by
 * another agent through the real client — 50 times, never a 500, every payment completed; and a
 * payee at one of the addresses (one in 4,096) whose token account's creation costs more compute
 * than a flat budget allowed, paid at once and again.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ApiClient, ApiError } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { listMail } from '../../src/db/mail.ts';
import { followLink } from '../helpers/links.ts';
import { errorOf } from '../helpers/errors.ts';
import { drainFeePayer } from '../helpers/fee-payer.ts';
import { SolanaPayWallet } from '../earning/solana-pay-client.ts';
import { findAssociatedTokenPda, getCloseAccountInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { insertPayeeWallet } from '../helpers/bulk-wallets.ts';
import { DEEP_BUMP_OWNERS } from '../helpers/deep-bump.ts';

let world: World;
let payer: Agent;

beforeAll(async () => {
  world = await startWorld();
  payer = await world.agent('Eager Payer', { claimBy: 'eager@example.com' });
  await world.fund(payer.address, 200_000_000n);
});
afterAll(() => world.stop());

/** Claims the wallet as its owner does: the claim code on the public endpoint, then the mailed link's button. */
async function claimThroughLink(walletId: string, claimCode: string, email: string): Promise<void> {
  await new ApiClient(world.url).call('public', 'claim', { wallet_id: walletId, claim_code: claimCode, email });
  const mail = (await listMail(world.services.db, 500)).find((m) => m.kind === 'claim' && m.to_addr === email)!;
  const landing = await followLink(fetch, new URL(new URL(JSON.parse(mail.links)[0].url).pathname, world.url).href);
  expect(landing.status).toBe(303);
}

async function claimFresh(i: number): Promise<string> {
  const { response } = await registerWallet(new ApiClient(world.url), { name: `Fresh ${i}` });
  await claimThroughLink(response.wallet_id as string, response.claim_code as string, `fresh-${i}@example.com`);
  return response.username as string;
}

/** One payment of 1 USDC to `to` through the real client: its final status, or the error the API answered. */
async function payOnce(to: string): Promise<string> {
  try {
    const intent = await payer.api.call<{ transaction_id: string }>('bot', 'pay', { to, amount: 1 });
    return String((await confirmSignSubmit(payer.api, payer.profile, intent.transaction_id)).status);
  } catch (err) {
    return err instanceof ApiError ? `${err.errorCode} (${err.status}) ${err.message}` : String(err);
  }
}

test('50 times: claim a fresh wallet through its link, pay it at once — no 500, every payment completes', async () => {
  const failures: string[] = [];
  for (let i = 0; i < 50; i++) {
    const outcome = await payOnce(await claimFresh(i));
    if (outcome !== 'completed') failures.push(`${i}: ${outcome}`);
  }
  expect(failures).toEqual([]);
}, 120_000);

test("a payee whose token account has a low bump seed (the program searches it on chain, 1,500 CU a candidate), claimed through its link, is paid at once and every time after", async () => {
  const { owner, bump } = DEEP_BUMP_OWNERS[1];
  const [, ataBump] = await findAssociatedTokenPda({ owner, mint: world.simnet.mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  expect(ataBump as number).toBe(bump);
  const payee = await insertPayeeWallet(world.services.db, owner, 'DEEP-BUMP');
  await claimThroughLink(payee.walletId, 'DEEP-BUMP', 'deep-bump@example.com');
  const outcomes = [await payOnce(payee.username), await payOnce(payee.username), await payOnce(payee.username)];
  expect(outcomes).toEqual(['completed', 'completed', 'completed']);
  expect(await world.balance(owner)).toBe(3_000_000n);
}, 60_000);

test('a payee setup Solana refuses (the fee payer out of SOL) answers SERVICE_UNAVAILABLE with how_to_fix, not a 500; topped up, the same payment completes', async () => {
  const payee = await world.agent('Unready Payee', { claimBy: 'unready@example.com' });
  await drainFeePayer(world, 0n);
  let intentId = '';
  try {
    const intent = await payer.api.call<{ transaction_id: string }>('bot', 'pay', { to: payee.username, amount: 1 });
    intentId = intent.transaction_id;
    const err = await errorOf(confirmSignSubmit(payer.api, payer.profile, intentId));
    expect({ code: err.errorCode, status: err.status }).toEqual({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    expect(err.howToFix).toContain('fee payer');
  } finally {
    await world.simnet.airdrop(world.services.feePayer.address, 100_000_000_000n);
  }
  expect((await confirmSignSubmit(payer.api, payer.profile, intentId)).status).toBe('completed');
  expect(await world.balance(payee.address)).toBe(1_000_000n);
}, 60_000);

test("a payee setup whose re-send is refused (the first send dropped by a congested node, then the fee payer briefly out of SOL) keeps waiting: topped up, it lands and the payment completes in the same call", async () => {
  const payee = await world.agent('Congested Payee', { claimBy: 'congested@example.com' });
  const floor = 10_000_000_000n;
  const sends = () => world.simnet.stats().calls.sendTransaction ?? 0;
  const dropped = world.simnet.stats().dropped;
  const intent = await payer.api.call<{ transaction_id: string }>('bot', 'pay', { to: payee.username, amount: 1 });
  world.simnet.setCongestion(floor);
  let outcome: Promise<string> = Promise.resolve('not started');
  try {
    outcome = confirmSignSubmit(payer.api, payer.profile, intent.transaction_id).then(
      (done) => String(done.status),
      (err: unknown) => (err instanceof ApiError ? `${err.errorCode} (${err.status}) ${err.message}` : String(err)),
    );
    // The setup's first send is accepted and dropped (priced at the cap, below the floor).
    const deadline = Date.now() + 10_000;
    while (world.simnet.stats().dropped === dropped) {
      if (Date.now() > deadline) throw new Error('the setup was not sent');
      await Bun.sleep(20);
    }
    await drainFeePayer(world, 0n, floor);
    // Its re-send (every 2 s) now fails its preflight: the fee payer cannot pay.
    const drained = sends();
    while (sends() === drained) {
      if (Date.now() > deadline) throw new Error('the setup was not re-sent');
      await Bun.sleep(20);
    }
  } finally {
    await world.simnet.airdrop(world.services.feePayer.address, 100_000_000_000n);
    world.simnet.setCongestion(null);
  }
  expect(await outcome).toBe('completed');
  expect(await world.balance(payee.address)).toBe(1_000_000n);
}, 60_000);

test('a payee that closed its USDC token account is paid again: the next payment recreates it (with its setup fee) and completes', async () => {
  const payee = await SolanaPayWallet.create(world.simnet.url);
  await world.simnet.faucet(payee.address, 0n, 1_000_000_000n);
  const pay = async () => {
    const intent = await payer.api.call<{ transaction_id: string }>('bot', 'pay', { to: payee.address, amount: 1 });
    return confirmSignSubmit(payer.api, payer.profile, intent.transaction_id, { expect: { amount: 1_000_000n, recipientAddress: payee.address } });
  };
  expect((await pay()).status).toBe('completed');
  // The payee empties its account and closes it (its own keys, a plain Solana client).
  const account = (await findAssociatedTokenPda({ owner: payee.address, mint: world.simnet.mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
  const cold = (await SolanaPayWallet.create(world.simnet.url)).address;
  await world.simnet.faucet(cold, 0n);
  await payee.pay({ recipient: cold, mint: world.simnet.mint, amount: 1_000_000n, references: [] });
  await payee.send([getCloseAccountInstruction({ account, destination: payee.address, owner: payee.signer })]);
  expect(await world.services.chain.tokenAccountExists(payee.address, world.simnet.mint)).toBe(false);
  const again = await pay();
  expect(again).toMatchObject({ status: 'completed', fee_breakdown: { account_setup_fee: 0.25 } });
  expect(await world.balance(payee.address)).toBe(1_000_000n);
}, 60_000);
