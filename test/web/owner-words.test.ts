/**
 * Words that match the product on the owner's pages (issue 43): audit entries read as sentences
 * with names instead of ids, and a freshly claimed wallet says plainly what its rails allow, with
 * the loosening delay's default on the form. Real app over an in-memory ledger via app.handle.
 */
import { describe, expect, test } from 'bun:test';
import { DEFAULT_LOOSEN_DELAY_HOURS } from '../../src/contract/guard-rails.ts';
import { newId } from '../../src/contract/ids.ts';
import { appendAudit } from '../../src/db/events.ts';
import { findOwnerByEmail } from '../../src/db/owners.ts';
import { insertTx } from '../../src/db/transactions.ts';
import { ownerActor } from '../../src/domain/owner-actor.ts';
import { delayWords, railsInWords } from '../../src/domain/rails-words.ts';
import { START, ownerWorld } from '../actions/fixtures.ts';
import { Browser, claimedInBrowser } from './browser.ts';

const auditList = (page: string) => /<h2 id="audit">Audit log<\/h2>([\s\S]*?)<\/ul>/.exec(page)![1]!;
const railsWords = (page: string) => /<ul id="rails-words">([\s\S]*?)<\/ul>/.exec(page)![1]!.replaceAll('&#39;', "'");

describe('audit entries on the wallet page read as sentences', () => {
  test('claim, rails set from the dashboard, a decided payment and an approval: names, amounts and who decided, no owner ids', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'o@example.com', 'shopping-bot');
    const page = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    expect((await b.request(`/dashboard/wallets/${wallet.walletId}/rails-json`, { csrf: Browser.csrf(page.text), rails_json: JSON.stringify({ approval_above: '50' }) })).status).toBe(303);
    const owner = (await findOwnerByEmail(w.services.db, 'o@example.com'))!;
    const txId = newId('transaction');
    await w.services.db.transaction(async () => {
      await insertTx(w.services.db, { transaction_id: txId, wallet_id: wallet.walletId, type: 'payment', direction: 'out', category: 'wallet', status: 'completed', amount: 18_090_000n, fee: 10_000n, counterparty: 'data-vendor', now: START });
      await appendAudit(w.services.db, { walletId: wallet.walletId, actor: 'agent', kind: 'decision', data: { transaction_id: txId, amount: 18.09, fee: 0.01, to: 'data-vendor', status: 'pre_approved', rule: null, reason: 'Within every guard rail.' }, now: START });
      await appendAudit(w.services.db, { walletId: wallet.walletId, actor: ownerActor(owner.owner_id, 'email'), kind: 'approval.approved', data: { transaction_id: txId, approval_id: 'apr_x', amount: 18_100_000n, decided_by: ownerActor(owner.owner_id, 'email') }, now: START });
    });
    const audit = auditList((await b.request(`/dashboard/wallets/${wallet.walletId}`)).text);
    expect(audit).toContain('The owner (o@example.com) claimed the wallet by e-mail');
    expect(audit).toContain('The owner (o@example.com) set the guard rails from the dashboard');
    expect(audit).toContain('Paid 18.09 + 0.01 fee = 18.1 USDC to data-vendor (payment, decided by the guard rails: Within every guard rail.)');
    expect(audit).toContain('The owner (o@example.com) approved the payment of 18.09 + 0.01 fee = 18.1 USDC to data-vendor by e-mail');
    expect(audit).not.toContain(owner.owner_id);
    expect(audit).not.toContain('owner:');
  });
});

describe('safe defaults that match the words', () => {
  test('a freshly claimed wallet says plainly what its rails allow, from the rails in force', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'fresh@example.com');
    const fresh = railsWords((await b.request(`/dashboard/wallets/${wallet.walletId}`)).text);
    expect(fresh).toContain("No budget set: the agent may spend up to the wallet's balance (12.5 USDC).");
    expect(fresh).toContain('No approval threshold: no payment waits for your approval because of its size.');
    expect(fresh).toContain('Withdrawals to an external address always need your approval.');
    expect(fresh).toContain(delayWords(undefined, DEFAULT_LOOSEN_DELAY_HOURS));

    const page = await b.request(`/dashboard/wallets/${wallet.walletId}`);
    await b.request(`/dashboard/wallets/${wallet.walletId}/rails-json`, { csrf: Browser.csrf(page.text), rails_json: JSON.stringify({ approval_above: '5', budgets: { daily: '20' }, loosen_delay_hours: 24 }) });
    const set = railsWords((await b.request(`/dashboard/wallets/${wallet.walletId}`)).text);
    expect(set).toContain('Budgets: 20 USDC a day; a payment beyond them waits for your approval.');
    expect(set).toContain('Payments above 5 USDC (amount + fees) need your approval.');
    expect(set).toContain('Looser settings wait 24 hours before they apply.');
    expect(set).not.toContain('No budget set');
  });

  test('the guard-rails form shows the loosening delay default, and the hint no longer promises a delay nobody set', async () => {
    const w = ownerWorld();
    const { b, wallet } = await claimedInBrowser(w, 'form@example.com');
    const text = (await b.request(`/dashboard/wallets/${wallet.walletId}`)).text;
    expect(text).toContain(`placeholder="${DEFAULT_LOOSEN_DELAY_HOURS}" aria-describedby="delay_hint"`);
    expect(text).toMatch(/id="delay_hint">How long a looser setting waits before it applies\. Empty: the default, [^<]*hours/);
    expect(text).toContain(`keeps a stolen session from opening the wallet instantly. Now: ${delayWords(undefined, DEFAULT_LOOSEN_DELAY_HOURS)}`);
  });

  test('rails in words: frozen, reject beyond budgets, caps, recipients', () => {
    const words = railsInWords(
      { frozen: true, budgets: { weekly: 100, total: 1000 }, on_budget_exceeded: 'reject', max_payments_per_day: 3, max_per_payment: 50, allowed_recipients: ['a'], approve_new_recipients: true, loosen_delay_hours: 1 },
      null,
      0,
    );
    expect(words).toEqual([
      'The wallet is frozen: every payment and withdrawal is refused until you unfreeze it.',
      'Budgets: 100 USDC a week, 1000 USDC in all; a payment beyond them is refused.',
      'At most 3 payments a day; more are refused.',
      'A payment above 50 USDC (amount + fees) is refused.',
      'No approval threshold: no payment waits for your approval because of its size.',
      'Only 1 listed recipient can be paid.',
      'The first payment to a new recipient waits for your approval.',
      'Withdrawals to an external address always need your approval.',
      'Looser settings wait 1 hour before they apply.',
    ]);
    expect(railsInWords({}, null, 0)[0]).toBe("No budget set: the agent may spend up to the wallet's balance.");
    expect(delayWords(undefined, 0)).toBe('Looser settings apply at once: no loosening delay is set (the default).');
    expect(delayWords(undefined, 24)).toBe('Looser settings wait 24 hours before they apply (the default).');
  });
});
