/**
 * The owner's transaction page reads out the payment's signed receipt (issue 43, the payer's
 * receipt): amount, parties, the Solana transaction, time, the JWS itself, its .jws download and
 * how to check it — the same rendering as the checkout's payer receipt, the same claims the
 * agent's get_receipt signs. A transaction that did not complete says plainly that it has none.
 * Real app over a real in-memory ledger, through app.handle like a browser without JavaScript.
 */
import { describe, expect, test } from 'bun:test';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { newId } from '../../src/contract/ids.ts';
import { insertTx } from '../../src/db/transactions.ts';
import { addPendingPayment, type OwnerWorld, ownerWorld } from '../actions/fixtures.ts';
import { claimedInBrowser } from './browser.ts';

const SIGNATURE = '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';

/** A completed transaction as the payment code or the deposit watch records one. */
async function completed(w: OwnerWorld, walletId: string, o: { direction: 'in' | 'out'; amount: bigint; fee?: bigint; counterparty: string; to_address?: string; note?: string; reference?: string }) {
  const id = newId('transaction');
  const now = w.services.now().getTime();
  await w.services.db.transaction(async () => {
    await insertTx(w.services.db, {
      transaction_id: id,
      wallet_id: walletId,
      type: o.direction === 'in' ? 'deposit' : 'payment',
      direction: o.direction,
      category: o.direction === 'in' ? undefined : 'wallet',
      status: 'completed',
      amount: o.amount,
      fee: o.fee ?? 0n,
      counterparty: o.counterparty,
      to_address: o.to_address,
      note: o.note,
      reference: o.reference,
      signature: SIGNATURE,
      completed_at: now,
      now,
    });
  });
  return id;
}

const factOf = (page: string, label: string) => new RegExp(`<dt>${label}</dt><dd[^>]*>([\\s\\S]*?)</dd>`).exec(page.slice(page.indexOf('id="receipt-facts"')))?.[1];

describe("the owner's transaction page shows the receipt", () => {
  test('a completed payment: amount + fee, the wallet as payer and the payee, the Solana transaction, the time, the JWS (which verifies against the published key and says the same) and its .jws download', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'receipts@example.com', 'Shopping Agent');
    const id = await completed(w, wallet.walletId, { direction: 'out', amount: 18_090_000n, fee: 10_000n, counterparty: 'data-vendor', to_address: 'Vendor1111111111111111111111111111111111111', note: 'Dataset licence', reference: 'inv-42' });
    const page = await b.request(`/dashboard/transactions/${id}`);
    expect(page.status).toBe(200);
    const t = page.text;
    expect(t).toContain('<h2 id="receipt-h">Receipt <span class="amount" id="receipt-amount">18.09 USDC</span></h2>');
    expect(factOf(t, 'Amount')).toBe('18.09 USDC + fee 0.01 USDC');
    expect(factOf(t, 'Paid to')).toBe('@data-vendor<br><code class="mono">Vendor1111111111111111111111111111111111111</code>');
    expect(factOf(t, 'Paid by')).toBe(`<strong>Shopping Agent</strong> @${wallet.username}<br><code class="mono">${wallet.address}</code>`);
    expect(factOf(t, 'For')).toBe('Dataset licence <span class="muted">(reference inv-42)</span>');
    expect(t).toContain(`<code class="mono" id="receipt-signature">${SIGNATURE}</code>`);
    expect(t).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[^"]+" id="receipt-time">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time>/);
    expect(t).toContain(`<a class="button" href="/dashboard/transactions/${id}/receipt.jws" download="receipt-${id}.jws" id="receipt-download">Download the signed receipt</a>`);
    expect(t).toContain(`agent-wallet receipt verify receipt-${id}.jws --key ${w.services.publicUrl()}/.well-known/agent-wallet/log-key`);
    expect(t).not.toContain('id="no-receipt"');

    // The JWS on the page is signed by the published key and attests what the page reads out.
    const shown = /<pre class="jws" id="receipt-jws"[^>]*>([^<]+)<\/pre>/.exec(t)![1]!;
    const jwks = JSON.parse((await b.request('/.well-known/agent-wallet/log-key')).text) as JSONWebKeySet;
    const { payload } = await compactVerify(shown, createLocalJWKSet(jwks));
    const claims = JSON.parse(new TextDecoder().decode(payload));
    expect(claims).toMatchObject({ sub: id, kind: 'payment', amount: '18.09', fee: '0.01', signature: SIGNATURE, from: { username: wallet.username, address: wallet.address }, to: { username: 'data-vendor' }, memo: 'Dataset licence' });
    expect(t).toContain(`datetime="${claims.completed_at}"`);
    // The download it links is the signed form of the same claims.
    const file = await b.request(`/dashboard/transactions/${id}/receipt.jws`);
    expect(file.status).toBe(200);
    const downloaded = JSON.parse(new TextDecoder().decode((await compactVerify(file.text.trim(), createLocalJWKSet(jwks))).payload));
    expect({ ...downloaded, iat: 0 }).toEqual({ ...claims, iat: 0 });
  });

  test('a deposit names the wallet as the one paid and the sender as far as the chain tells', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'deposits@example.com', 'Saving Agent');
    const id = await completed(w, wallet.walletId, { direction: 'in', amount: 5_000_000n, counterparty: 'Sender11111111111111111111111111111111111111' });
    const t = (await b.request(`/dashboard/transactions/${id}`)).text;
    expect(factOf(t, 'Amount')).toBe('5.00 USDC');
    expect(factOf(t, 'Paid to')).toBe(`<strong>Saving Agent</strong> @${wallet.username}<br><code class="mono">${wallet.address}</code>`);
    // The sender is known by its address only: shown as one, never as a @username.
    expect(factOf(t, 'Paid by')).toBe('<code class="mono">Sender11111111111111111111111111111111111111</code>');
  });

  test('a payment that has not completed says plainly that there is no receipt, and links none', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'pending@example.com', 'Waiting Agent');
    const p = await addPendingPayment(w.services, wallet.walletId);
    const t = (await b.request(`/dashboard/transactions/${p.transactionId}`)).text;
    expect(t).toContain('<p id="no-receipt">No receipt for this transaction. It waits for your approval: a signed receipt is given once it has completed.</p>');
    expect(t).not.toContain('receipt.jws');
    expect(t).not.toContain('id="receipt-facts"');
  });
});
