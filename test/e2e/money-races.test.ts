/**
 * Money under concurrency, end to end on simnet with the real client (FROST over HTTP): racing
 * payments to a recipient with no USDC token account charge at most one setup fee (none for our
 * claimed wallets, whose account the operator creates), and racing payers of one paylink pay it
 * once. Every figure is read from the chain and compared with the ledger.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { ApiClient, ApiError } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { listMail } from '../../src/db/mail.ts';
import { scanPaylink } from '../../src/earning/scan.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { commitmentList } from '../../src/frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../../src/frost/ids.ts';
import { commit, signShare } from '../../src/frost/party.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../../src/frost/wire.ts';
import { SolanaPayWallet } from '../earning/solana-pay-client.ts';
import { errorOf } from '../helpers/errors.ts';
import { followLink } from '../helpers/links.ts';
import { agentKey, signWithoutSubmit } from '../helpers/signing.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

const USDC = 1_000_000n;
const PLATFORM_FEE = 10_000n; // 0.01: the minimum, above 0.5 % of 1 USDC
const SETUP_FEE = 250_000n;

let world: World;
let treasury: Address;

beforeAll(async () => {
  world = await startWorld();
  treasury = world.services.feePayer.address;
});
afterAll(async () => {
  await world.stop();
});

/** What the ledger says a wallet holds (deposits recorded first): completed incoming minus completed outgoing with fees. */
async function ledgerBalance(walletId: string): Promise<bigint> {
  await scanDeposits(world.services);
  const row = (await world.services.db
    .get(`SELECT coalesce(sum(CASE WHEN direction = 'in' THEN amount ELSE -(amount + fee + setup_fee) END), 0) AS b FROM transactions WHERE wallet_id = ? AND status = 'completed'`, walletId)) as { b: bigint };
  return row.b;
}

/** Setup fees in the ledger of completed outgoing payments to `address`. */
async function setupFeesCharged(address: string): Promise<bigint> {
  const row = (await world.services.db.get("SELECT coalesce(sum(setup_fee), 0) AS s FROM transactions WHERE to_address = ? AND direction = 'out' AND status = 'completed'", address)) as { s: bigint };
  return row.s;
}

type Outcome = { done: Record<string, any> } | { refused: ApiError };

/** `n` payments at once, each paid through (pay → confirm → FROST → submit) by the payer's own client. */
function race(payer: Agent, params: Record<string, unknown>, n: number): Promise<Outcome[]> {
  return Promise.all(
    Array.from({ length: n }, async (): Promise<Outcome> => {
      try {
        const intent = await payer.api.call<any>('bot', 'pay', params);
        return { done: await confirmSignSubmit(payer.api, payer.profile, intent.transaction_id) };
      } catch (err) {
        if (err instanceof ApiError) return { refused: err };
        throw err;
      }
    }),
  );
}

const completed = (outcomes: Outcome[]) => outcomes.flatMap((o) => ('done' in o && o.done.status === 'completed' ? [o.done] : []));
const refusals = (outcomes: Outcome[]) => outcomes.flatMap((o) => ('refused' in o ? [o.refused.errorCode] : []));

describe('racing payments to a recipient without a USDC token account', () => {
  test('20 × 1 USDC from a 10-USDC wallet to a freshly claimed wallet: 9 complete, 11 INSUFFICIENT_FUNDS, no setup fee; chain = ledger', async () => {
    const [payer, payee] = await Promise.all([world.agent('Racing Payer', { claimBy: 'racer@example.com' }), world.agent('Fresh Payee', { claimBy: 'fresh@example.com' })]);
    await world.fund(payer.address, 10n * USDC);
    expect(await world.services.chain.tokenAccountExists(payee.address, world.simnet.mint)).toBe(false);
    const t0 = await world.balance(treasury);

    const outcomes = await race(payer, { to: payee.username, amount: '1' }, 20);

    expect(completed(outcomes)).toHaveLength(9);
    expect(refusals(outcomes)).toEqual(Array(11).fill('INSUFFICIENT_FUNDS'));
    for (const done of completed(outcomes)) expect(done.fee_breakdown).toEqual({ platform_fee: 0.01, account_setup_fee: 0 });
    const [payerChain, payeeChain, t1] = await Promise.all([world.balance(payer.address), world.balance(payee.address), world.balance(treasury)]);
    expect(payeeChain).toBe(9n * USDC);
    expect(t1 - t0).toBe(9n * PLATFORM_FEE);
    expect(payerChain).toBe(10n * USDC - 9n * (USDC + PLATFORM_FEE));
    expect(await ledgerBalance(payer.walletId)).toBe(payerChain);
    expect(await ledgerBalance(payee.walletId)).toBe(payeeChain);
    expect(await setupFeesCharged(payee.address)).toBe(0n);
  }, 90_000);

  test('the same race to a raw address with no token account: 9 complete, exactly one setup fee, charged once on chain', async () => {
    const payer = await world.agent('Address Payer', { claimBy: 'address-payer@example.com' });
    const outside = (await generateKeyPairSigner()).address;
    await world.fund(payer.address, 10n * USDC);
    const t0 = await world.balance(treasury);

    const outcomes = await race(payer, { to: outside, amount: '1' }, 20);

    const done = completed(outcomes);
    expect(done).toHaveLength(9); // 1.26 + 8 × 1.01 = 9.34 ≤ 10 < 10.35
    expect(refusals(outcomes)).toEqual(Array(11).fill('INSUFFICIENT_FUNDS'));
    expect(done.filter((d) => d.fee_breakdown.account_setup_fee > 0)).toHaveLength(1);
    const [payerChain, outsideChain, t1] = await Promise.all([world.balance(payer.address), world.balance(outside), world.balance(treasury)]);
    expect(outsideChain).toBe(9n * USDC);
    expect(t1 - t0).toBe(9n * PLATFORM_FEE + SETUP_FEE);
    expect(payerChain).toBe(10n * USDC - 9n * (USDC + PLATFORM_FEE) - SETUP_FEE);
    expect(await ledgerBalance(payer.walletId)).toBe(payerChain);
    expect(await setupFeesCharged(outside)).toBe(SETUP_FEE);
  }, 90_000);

  test('a setup fee reserved for an account that exists by confirm is released, never charged', async () => {
    const payer = await world.agent('Early Payer', { claimBy: 'early@example.com' });
    const outside = (await generateKeyPairSigner()).address;
    await world.fund(payer.address, 5n * USDC);
    const intent = await payer.api.call<any>('bot', 'pay', { to: outside, amount: '1' });
    expect(intent.fee_breakdown.account_setup_fee).toBe(0.25);
    await world.fund(outside, 0n); // someone else creates the account before the payment is confirmed
    const done = await confirmSignSubmit(payer.api, payer.profile, intent.transaction_id);
    expect(done).toMatchObject({ status: 'completed', fee_breakdown: { platform_fee: 0.01, account_setup_fee: 0 } });
    expect(await world.balance(payer.address)).toBe(5n * USDC - USDC - PLATFORM_FEE);
  }, 60_000);

  test('claiming a wallet through its magic link has the operator create its USDC token account', async () => {
    const { response } = await registerWallet(new ApiClient(world.url), { name: 'Claimed By Link' });
    const address = response.address as Address;
    await new ApiClient(world.url).call('public', 'claim', { wallet_id: response.wallet_id, claim_code: response.claim_code, email: 'linked@example.com' });
    const mail = (await listMail(world.services.db, 50)).find((m) => m.kind === 'claim' && m.to_addr === 'linked@example.com');
    const link = new URL(JSON.parse(mail!.links)[0].url);
    const landing = await followLink(fetch, new URL(link.pathname, world.url).href);
    expect(landing.status).toBe(303);
    const deadline = Date.now() + 15_000;
    while (!(await world.services.chain.tokenAccountExists(address, world.simnet.mint))) {
      if (Date.now() > deadline) throw new Error('the claimed wallet has no USDC token account 15 s after its claim');
      await Bun.sleep(100);
    }
    const payer = await world.agent('Link Payer', { claimBy: 'link-payer@example.com' });
    await world.fund(payer.address, 2n * USDC);
    const q = await payer.api.call<any>('bot', 'can_i_afford', { to: address, amount: '1' });
    expect(q.fee_breakdown).toEqual({ platform_fee: 0.01, account_setup_fee: 0 });
  }, 60_000);
});

describe('racing payers of one paylink', () => {
  let payee: Agent;
  let payers: Agent[];
  beforeAll(async () => {
    payee = await world.agent('Paylink Payee', { claimBy: 'payee@example.com' });
    payers = await Promise.all([0, 1, 2, 3].map((i) => world.agent(`Paylink Payer ${i}`, { claimBy: `paylink-payer-${i}@example.com` })));
    await Promise.all(payers.map((p) => world.fund(p.address, 5n * USDC)));
  });

  test('4 agents pay one fixed 2-USDC paylink at once: one completes, 3 INVALID_STATUS; the payee receives 2 USDC once, no other payer pays', async () => {
    const link = await payee.api.call<any>('bot', 'create_payment_request', { description: 'One order', amount: '2' });
    const before = await Promise.all([payee, ...payers].map((a) => world.balance(a.address)));

    const outcomes = (await Promise.all(payers.map((p) => race(p, { payment_request_id: link.request_id }, 1)))).map((o) => o[0]!);

    const winners = outcomes.flatMap((o, i) => ('done' in o ? [i] : []));
    expect(winners).toHaveLength(1);
    expect(completed(outcomes)).toHaveLength(1);
    expect(refusals(outcomes)).toEqual(['INVALID_STATUS', 'INVALID_STATUS', 'INVALID_STATUS']);
    const after = await Promise.all([payee, ...payers].map((a) => world.balance(a.address)));
    expect(after[0]! - before[0]!).toBe(2n * USDC);
    for (const [i, p] of payers.entries()) {
      const paid = i === winners[0] ? 2n * USDC + PLATFORM_FEE : 0n;
      expect({ payer: i, spent: before[i + 1]! - after[i + 1]! }).toEqual({ payer: i, spent: paid });
      expect(await ledgerBalance(p.walletId)).toBe(after[i + 1]!);
    }
    expect(await payee.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id })).toMatchObject({ status: 'paid', paid_amount: 2, rejected_payments: [] });
  }, 60_000);

  test("an unconfirmed intent holds the paylink against its own payer only: another agent's payment completes, and the idle intent is then rejected (issue 24.8)", async () => {
    const link = await payee.api.call<any>('bot', 'create_payment_request', { description: 'Held order', amount: '1' });
    const [a, b] = payers as [Agent, Agent];
    await Promise.all([a, b].map((p) => world.fund(p.address, 5n * USDC)));
    // A: an intent it never confirms (the request_id is public; an intent costs nothing).
    const squat = await a.api.call<any>('bot', 'pay', { payment_request_id: link.request_id });
    const again = await errorOf(a.api.call('bot', 'pay', { payment_request_id: link.request_id }));
    expect(again.errorCode).toBe('INVALID_STATUS');
    expect(again.message).toContain(squat.transaction_id);
    expect(again.details).toMatchObject({ payment_request_id: link.request_id, in_flight: { transaction_id: squat.transaction_id, status: 'pre_approved' } });
    // B pays it all the same, at once.
    const paid = await b.api.call<any>('bot', 'pay', { payment_request_id: link.request_id });
    expect((await confirmSignSubmit(b.api, b.profile, paid.transaction_id)).status).toBe('completed');
    expect(await payee.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id })).toMatchObject({ status: 'paid', paid_amount: 1 });
    // The paylink is paid once: A's idle intent lost it and holds nothing of A's any more.
    const [row] = (await a.api.call<any>('bot', 'list_payments', { limit: 1 })).items;
    expect(row).toMatchObject({ transaction_id: squat.transaction_id, status: 'rejected' });
    expect((await errorOf(a.api.call('bot', 'confirm_payment', { transaction_id: squat.transaction_id }))).errorCode).toBe('INVALID_STATUS');
  }, 60_000);

  test('two payers who both confirmed: the first to sign pays, the other is refused at signing and nothing of it is signed', async () => {
    const link = await payee.api.call<any>('bot', 'create_payment_request', { description: 'Signed race', amount: '1' });
    const [, , c, d] = payers as [Agent, Agent, Agent, Agent];
    await Promise.all([c, d].map((p) => world.fund(p.address, 5n * USDC)));
    // Both intents exist before either is signed; once C's is signed, a third payer is refused at pay.
    const second = await d.api.call<any>('bot', 'pay', { payment_request_id: link.request_id });
    const first = await signWithoutSubmit(c.api, c.profile, { payment_request_id: link.request_id });
    const [a] = payers as [Agent];
    expect((await errorOf(a.api.call('bot', 'pay', { payment_request_id: link.request_id }))).errorCode).toBe('INVALID_STATUS');
    const refused = await errorOf(confirmSignSubmit(d.api, d.profile, second.transaction_id));
    expect(refused.errorCode).toBe('INVALID_STATUS');
    expect(refused.details).toMatchObject({ payment_request_id: link.request_id });
    expect(await world.services.db.get('SELECT signed_tx FROM transactions WHERE transaction_id = ?', second.transaction_id)).toEqual({ signed_tx: null });
    expect((await c.api.call<any>('bot', 'submit_signed_tx', { transaction_id: first, wait: true })).status).toBe('completed');
  }, 60_000);

  test('a Solana Pay payment landing first: the agent payment with a built message is rejected when the paylink is judged paid, refused at signing and at confirm, never signed', async () => {
    const human = await SolanaPayWallet.create(world.simnet.url);
    await world.simnet.faucet(human.address, 10n * USDC, 1_000_000_000n);
    const link = await payee.api.call<any>('bot', 'create_payment_request', { description: 'Contested order', amount: '3' });
    const agent = payers[2]!;
    await world.fund(agent.address, 5n * USDC);
    const balance0 = await world.balance(agent.address);
    const intent = await agent.api.call<any>('bot', 'pay', { payment_request_id: link.request_id });
    await agent.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
    const key = agentKey(agent.profile);
    const { nonces, commitments } = commit(key);
    const init = await agent.api.call<any>('bot', 'frost_sign_init', { transaction_id: intent.transaction_id, commitments: encodeCommitments(commitments) });

    const signature = await human.payUrl(link.solana_pay_url);
    await scanPaylink(world.services, link.request_id);
    expect(await payee.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id })).toMatchObject({ status: 'paid', paid_via: 'solana_pay', signature });

    const share = signShare(key, nonces, commitmentList(commitments, decodeCommitments(init.server_commitments, SERVER_ID)), new Uint8Array(Buffer.from(init.message, 'base64')));
    const atSigning = await errorOf(agent.api.call('bot', 'frost_sign_complete', { transaction_id: intent.transaction_id, sign_session_id: init.sign_session_id, signature_share: encodeSignatureShare(AGENT_ID, share) }));
    // The Solana Pay payment's judgement already rejected the unsigned agent payment: nothing to sign.
    expect(atSigning.errorCode).toBe('INVALID_STATUS');
    const atConfirm = await errorOf(agent.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id }));
    expect(atConfirm.errorCode).toBe('INVALID_STATUS');
    const [row] = (await agent.api.call<any>('bot', 'list_payments', { limit: 1 })).items;
    expect(row).toMatchObject({ transaction_id: intent.transaction_id, status: 'rejected', signature: null });
    expect(await world.balance(agent.address)).toBe(balance0);
  }, 60_000);
  test('an agent payment already signed when a Solana Pay payment lands: the chain decides, and the later one is recorded as a rejected payment (already_paid)', async () => {
    const human = await SolanaPayWallet.create(world.simnet.url);
    await world.simnet.faucet(human.address, 10n * USDC, 1_000_000_000n);
    const link = await payee.api.call<any>('bot', 'create_payment_request', { description: 'Raced order', amount: '2' });
    const agent = payers[3]!;
    await world.fund(agent.address, 5n * USDC);
    const txId = await signWithoutSubmit(agent.api, agent.profile, { payment_request_id: link.request_id });
    const humanSignature = await human.payUrl(link.solana_pay_url);
    await scanPaylink(world.services, link.request_id);
    // Signed bytes are never withheld: they land, and the paylink records them as the loser.
    const done = await agent.api.call<any>('bot', 'submit_signed_tx', { transaction_id: txId, wait: true });
    expect(done.status).toBe('completed');
    const after = await payee.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id });
    expect(after).toMatchObject({ status: 'paid', paid_via: 'solana_pay', signature: humanSignature });
    expect(after.rejected_payments).toEqual([expect.objectContaining({ signature: done.signature, reason: 'already_paid', payer: agent.username })]);
  }, 60_000);
});
