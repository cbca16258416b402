/**
 * Paylinks between agents end to end on simnet: creation (payee made payable on chain), paying with
 * pay {payment_request_id} through the real client's FROST round (confirmSignSubmit), the paylink
 * marked paid once with payer and signature, invitations to a wallet and by e-mail, and the CLI.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { listMail } from '../../src/db/mail.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { scanPaylink } from '../../src/earning/scan.ts';
import { runCli } from '../helpers/daemon.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { errorOf } from '../helpers/errors.ts';

let world: World;
let seller: Agent;
let buyer: Agent;

beforeAll(async () => {
  world = await startWorld();
  [seller, buyer] = await Promise.all([world.agent('Corner Cafe', { claimBy: 'cafe-owner@example.com' }), world.agent('Buyer Bot', { claimBy: 'buyer-owner@example.com' })]);
  await world.fund(buyer.address, 200_000_000n);
});
afterAll(async () => {
  await world.stop();
});


describe('paying a paylink as an agent', () => {
  test('an itemised paylink paid with pay {payment_request_id}: a FROST-signed transfer carrying the reference key; the paylink is paid once with payer and signature', async () => {
    const link = await seller.api.call<any>('bot', 'create_payment_request', {
      description: 'Breakfast order 77',
      items: [
        { description: 'Flat white', price: '4.5', quantity: 2 },
        { description: 'Croissant', price: 3 },
      ],
      reference: 'order-77',
    });
    expect(link).toMatchObject({ status: 'open', amount: 12, reference: 'order-77', currency: 'USDC', pay_to: seller.address });
    expect(link.request_id).toMatch(/^req_[0-9a-z]{26}$/);
    expect(link.short_code).toMatch(/^[0-9a-hjkmnp-tv-z]{10}$/);
    expect(link.url).toEndWith(`/pay/${link.short_code}`);
    expect(link.items).toEqual([
      { description: 'Flat white', price: 4.5, quantity: 2, total: 9 },
      { description: 'Croissant', price: 3, quantity: 1, total: 3 },
    ]);
    expect(link.solana_pay_url).toBe(
      `solana:${seller.address}?amount=12&spl-token=${world.simnet.mint}&reference=${link.reference_key}&label=Corner%20Cafe&message=Breakfast%20order%2077`,
    );
    // Creating it made the payee payable by any Solana Pay wallet: its account and USDC account exist.
    expect(await world.services.chain.accountExists(seller.address)).toBe(true);
    expect(await world.services.chain.tokenAccountExists(seller.address, world.simnet.mint)).toBe(true);

    const intent = await buyer.api.call<any>('bot', 'pay', { payment_request_id: link.request_id });
    expect(intent).toMatchObject({ status: 'pre_approved', amount: 12, to: seller.username, reference: 'order-77', payment_request_id: link.request_id });
    expect(intent.fee_breakdown.account_setup_fee).toBe(0);
    const done = await confirmSignSubmit(buyer.api, buyer.profile, intent.transaction_id);
    expect(done.status).toBe('completed');

    const paid = await seller.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id });
    expect(paid).toMatchObject({ status: 'paid', payer: buyer.username, signature: done.signature, paid_via: 'wallet', paid_amount: 12, rejected_payments: [] });
    expect(paid.paid_at).toBeTruthy();
    // The reference key is on chain, as a Solana Pay validator would look for it.
    const onChain = await world.services.chain.getSignaturesForAddress(link.reference_key as Address);
    expect(onChain.map((s) => s.signature)).toEqual([done.signature as string]);

    const events = await seller.api.call<any>('bot', 'events', { types: ['payment_request.paid', 'payment.received'], limit: 10 });
    expect(events.items.map((e: any) => e.type).sort()).toEqual(['payment.received', 'payment_request.paid']);
    expect(events.items.find((e: any) => e.type === 'payment_request.paid').data).toMatchObject({ request_id: link.request_id, payer: buyer.username, signature: done.signature, via: 'wallet', amount: 12 });

    // A scan of the reference key and the deposit watch see the same transaction: nothing is counted twice.
    await scanPaylink(world.services, link.request_id);
    await scanDeposits(world.services);
    const received = await seller.api.call<any>('bot', 'transactions', { type: 'in' });
    expect(received.items.filter((t: any) => t.signature === done.signature)).toHaveLength(1);
    expect(received.items[0]).toMatchObject({ type: 'payment', amount: 12, from: buyer.username, payment_request_id: link.request_id });
    expect((await seller.api.call<any>('bot', 'get_payment_request', { reference: 'order-77' })).rejected_payments).toEqual([]);

    const again = await errorOf(buyer.api.call('bot', 'pay', { payment_request_id: link.request_id }));
    expect(again.errorCode).toBe('INVALID_STATUS');
    expect(again.status).toBe(409);
  });

  test('an open-amount paylink needs an amount; a fixed one refuses a different amount; cancelled is INVALID_STATUS; unknown NOT_FOUND; own INVALID_RECIPIENT', async () => {
    const open = await seller.api.call<any>('bot', 'create_payment_request', { description: 'Tip jar' });
    expect(open.amount).toBeNull();
    expect(open.solana_pay_url).not.toContain('amount=');
    expect((await errorOf(buyer.api.call('bot', 'pay', { payment_request_id: open.request_id }))).errorCode).toBe('VALIDATION_ERROR');
    const tip = await buyer.api.call<any>('bot', 'pay', { payment_request_id: open.request_id, amount: '0.75' });
    expect(tip).toMatchObject({ status: 'pre_approved', amount: 0.75 });
    await buyer.api.call('bot', 'cancel_payment', { transaction_id: tip.transaction_id });

    const fixed = await seller.api.call<any>('bot', 'create_payment_request', { description: 'Lunch', amount: '8' });
    const wrong = await errorOf(buyer.api.call('bot', 'pay', { payment_request_id: fixed.request_id, amount: '7.99' }));
    expect(wrong.errorCode).toBe('VALIDATION_ERROR');
    expect(wrong.message).toContain('/amount');
    expect((await buyer.api.call<any>('bot', 'pay', { payment_request_id: fixed.request_id, amount: 8, to: seller.username })).amount).toBe(8);
    expect((await errorOf(buyer.api.call('bot', 'pay', { payment_request_id: fixed.request_id, to: buyer.username }))).errorCode).toBe('VALIDATION_ERROR');
    expect((await errorOf(seller.api.call('bot', 'pay', { payment_request_id: fixed.request_id }))).errorCode).toBe('INVALID_RECIPIENT');

    const cancelled = await seller.api.call<any>('bot', 'cancel_payment_request', { request_id: fixed.request_id });
    expect(cancelled.status).toBe('cancelled');
    expect((await errorOf(buyer.api.call('bot', 'pay', { payment_request_id: fixed.request_id }))).errorCode).toBe('INVALID_STATUS');
    expect((await errorOf(seller.api.call('bot', 'cancel_payment_request', { request_id: fixed.request_id }))).errorCode).toBe('INVALID_STATUS');
    expect((await errorOf(buyer.api.call('bot', 'pay', { payment_request_id: 'req_00000000000000000000000000' }))).errorCode).toBe('NOT_FOUND');
    // Another wallet's paylink is invisible to get/cancel.
    expect((await errorOf(buyer.api.call('bot', 'get_payment_request', { request_id: open.request_id }))).errorCode).toBe('NOT_FOUND');
    expect((await errorOf(buyer.api.call('bot', 'cancel_payment_request', { request_id: open.request_id }))).errorCode).toBe('NOT_FOUND');
  });

  test('items and amount must agree; expires_in takes seconds or "24h"; list filters by status and pages', async () => {
    const mismatch = await errorOf(seller.api.call('bot', 'create_payment_request', { description: 'x', amount: 5, items: [{ description: 'a', price: 2, quantity: 2 }] }));
    expect(mismatch.errorCode).toBe('VALIDATION_ERROR');
    expect(mismatch.message).toContain('add up to 4');
    expect((await errorOf(seller.api.call('bot', 'create_payment_request', { description: 'x', expires_in: '3 weeks' }))).errorCode).toBe('VALIDATION_ERROR');
    expect((await errorOf(seller.api.call('bot', 'create_payment_request', { description: 'x', items: [{ description: 'a', price: '1.0000001' }] }))).message).toContain('/items/0/price');
    const agreed = await seller.api.call<any>('bot', 'create_payment_request', { description: 'Agreed', amount: '4', items: [{ description: 'a', price: 2, quantity: 2 }], expires_in: '24h' });
    expect(Date.parse(agreed.expires_at) - Date.parse(agreed.created_at)).toBe(24 * 3600 * 1000);
    const secs = await seller.api.call<any>('bot', 'create_payment_request', { description: 'Seconds', amount: 1, expires_in: 90 });
    expect(Date.parse(secs.expires_at) - Date.parse(secs.created_at)).toBe(90_000);

    const all = await seller.api.call<any>('bot', 'list_payment_requests', { limit: 2 });
    expect(all).toMatchObject({ limit: 2, offset: 0 });
    expect(all.items).toHaveLength(2);
    expect(all.items[0].request_id).toBe(secs.request_id);
    const paid = await seller.api.call<any>('bot', 'list_payment_requests', { status: 'paid' });
    expect(paid.total).toBe(1);
    expect(paid.items[0].status).toBe('paid');
    const cancelled = await seller.api.call<any>('bot', 'list_payment_requests', { status: 'cancelled', offset: 0 });
    expect(cancelled.items.every((i: any) => i.status === 'cancelled')).toBe(true);
  });
});

describe('invitations', () => {
  test('an invitation to a wallet shows in its events and is payable from there; an e-mail invitation reaches the outbox; the 21st in an hour is RATE_LIMITED', async () => {
    const link = await seller.api.call<any>('bot', 'create_payment_request', { description: 'Catering deposit', amount: '2.5' });
    const sent = await seller.api.call<any>('bot', 'send_paylink_invitation', { request_id: link.request_id, to_wallet: buyer.username, message: 'for Friday' });
    expect(sent).toMatchObject({ channel: 'wallet', to: buyer.username, url: link.url });

    const inbox = await buyer.api.call<any>('bot', 'events', { types: ['paylink.invitation'] });
    expect(inbox.items).toHaveLength(1);
    const invitation = inbox.items[0].data;
    expect(invitation).toMatchObject({ request_id: link.request_id, from: seller.username, amount: 2.5, message: 'for Friday', url: link.url });
    const intent = await buyer.api.call<any>('bot', 'pay', { payment_request_id: invitation.request_id });
    expect((await confirmSignSubmit(buyer.api, buyer.profile, intent.transaction_id)).status).toBe('completed');
    expect((await seller.api.call<any>('bot', 'get_payment_request', { request_id: link.request_id })).status).toBe('paid');
    // A paid paylink is not sent any more.
    expect((await errorOf(seller.api.call('bot', 'send_paylink_invitation', { request_id: link.request_id, to_email: 'late@example.com' }))).errorCode).toBe('INVALID_STATUS');

    const other = await seller.api.call<any>('bot', 'create_payment_request', { description: 'Cake for 12', amount: '30' });
    const mailed = await seller.api.call<any>('bot', 'send_paylink_invitation', { request_id: other.request_id, to_email: 'Guest@Example.com', message: 'see you soon' });
    expect(mailed).toMatchObject({ channel: 'email', to: 'guest@example.com' });
    const mail = (await listMail(world.services.db, 20)).find((m) => m.kind === 'paylink' && m.to_addr === 'guest@example.com');
    expect(mail).toBeDefined();
    expect(mail!.subject).toContain('30 USDC');
    expect(mail!.body).toContain(other.url);
    expect(mail!.body).toContain('see you soon');
    expect(JSON.parse(mail!.links)).toEqual([{ label: 'pay', url: other.url }]);

    expect((await errorOf(seller.api.call('bot', 'send_paylink_invitation', { request_id: other.request_id }))).errorCode).toBe('VALIDATION_ERROR');
    expect((await errorOf(seller.api.call('bot', 'send_paylink_invitation', { request_id: other.request_id, to_wallet: 'nobody-here-xyz' }))).errorCode).toBe('INVALID_RECIPIENT');
    for (let i = 1; i < 20; i++) await seller.api.call('bot', 'send_paylink_invitation', { request_id: other.request_id, to_email: `guest${i}@example.com` });
    const limited = await errorOf(seller.api.call('bot', 'send_paylink_invitation', { request_id: other.request_id, to_email: 'one-too-many@example.com' }));
    expect(limited.errorCode).toBe('RATE_LIMITED');
    expect(limited.status).toBe(429);
  });
});

describe('command line', () => {
  test('request create with --item, request list, and pay --request from another agent', async () => {
    const created = await runCli(['request', 'create', '--description', 'Tea and biscuits', '--item', 'Tea: green:2.5:2', '--item', 'Biscuits:1', '--reference', 'cli-1', '--expires-in', '2h', '--server', world.url, '--home', seller.home, '--json']);
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ amount: 6, reference: 'cli-1', status: 'open' });
    expect(created.json.items[0]).toEqual({ description: 'Tea: green', price: 2.5, quantity: 2, total: 5 });

    const listed = await runCli(['request', 'list', '--status', 'open', '--limit', '1', '--server', world.url, '--home', seller.home, '--json']);
    expect(listed.code).toBe(0);
    expect(listed.json.items[0].request_id).toBe(created.json.request_id);

    const paid = await runCli(['pay', '--request', created.json.request_id, '--server', world.url, '--home', buyer.home, '--json']);
    expect(paid.stderr).toContain('signing');
    expect(paid.code).toBe(0);
    expect(paid.json).toMatchObject({ status: 'completed', amount: 6, payment_request_id: created.json.request_id });

    const got = await runCli(['request', 'get', '--reference', 'cli-1', '--server', world.url, '--home', seller.home, '--json']);
    expect(got.json).toMatchObject({ status: 'paid', payer: buyer.username });
    const read = await runCli(['request', 'get', created.json.request_id, '--server', world.url, '--home', seller.home]);
    expect(read.code).toBe(0);
    expect(read.stdout).toContain('  Tea: green    2   2.50   5.00\n  Biscuits      1   1.00   1.00\n  Total                    6.00 USDC\n');
    expect(read.stdout).not.toContain('Solana Pay:');
    expect(read.stdout).toContain(`Status:     paid 6.00 USDC by ${buyer.username}`);
    const bad = await runCli(['request', 'create', '--description', 'x', '--item', 'no price here', '--server', world.url, '--home', seller.home]);
    expect(bad.code).toBe(2);
  });
});

describe('a paylink cancelled after the payer created its payment', () => {
  test('confirm_payment refuses to sign (INVALID_STATUS naming the paylink status); nothing moves', async () => {
    const link = await seller.api.call<any>('bot', 'create_payment_request', { description: 'Cancelled later', amount: 1.5 });
    const intent = await buyer.api.call<any>('bot', 'pay', { payment_request_id: link.request_id });
    expect(intent.status).toBe('pre_approved');
    await seller.api.call('bot', 'cancel_payment_request', { request_id: link.request_id });
    const before = await world.balance(seller.address);
    const refused = await errorOf(buyer.api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id }));
    expect(refused.errorCode).toBe('INVALID_STATUS');
    expect(refused.details).toMatchObject({ payment_request_id: link.request_id, paylink_status: 'cancelled' });
    expect(await world.balance(seller.address)).toBe(before);
    await buyer.api.call('bot', 'cancel_payment', { transaction_id: intent.transaction_id });
  });
});
