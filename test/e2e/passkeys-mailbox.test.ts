/**
 * The stolen mailbox (issue 44, "Must show"): once the owner has a passkey, whoever holds only the
 * owner's mail — the approval mail's links, a sign-in link — and an owner API token decides nothing
 * that moves or loosens money. Approving, loosening the rails, unfreezing, minting a token,
 * announcing a recovery sweep, starting a recovery enrolment and signing in by the magic link are
 * each refused, and the ledger is read back unchanged (the approval still pending, the rails as they
 * were, no token, no sweep row, no session, no log row). The owner API — real HTTP on port 0 —
 * answers 403 passkey_required for approve / loosening / unfreeze / recovery_enroll_start /
 * recovery_sweep_start, while reading, rejecting and tightening still work; a grant the owner
 * signs on the dashboard (grantForApi) lets the API do exactly that one thing, once, for ten minutes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { getBase58Decoder } from '@solana/kit';
import { followMagicLink, requestLogin } from '../../src/actions/claim.ts';
import { mintOwnerToken, railsChangeDecision, setGuardRails } from '../../src/actions/owner.ts';
import { startEnrollment } from '../../src/actions/recovery-enroll.ts';
import { startSweep } from '../../src/actions/recovery-sweep.ts';
import { getApproval } from '../../src/db/approvals.ts';
import { loadRailsState } from '../../src/db/guard-rails.ts';
import { listMail } from '../../src/db/mail.ts';
import { decideByLink, queueApprovalMail } from '../../src/mail/approval-mail.ts';
import { approvalDecision, grantForApi, GRANT_MINUTES, type GrantableDecision } from '../../src/owner/passkeys.ts';
import type { OwnerDecision } from '../../src/domain/owner-decision.ts';
import { addPendingPayment, addWallet, claimFor, ownerWorld, tokenFor, type OwnerWorld } from '../actions/fixtures.ts';
import { startTestServer } from '../helpers/services.ts';
import type { SoftAuthenticator } from '../helpers/soft-authenticator.ts';
import { enrol, enrolledKit, ledgerState, newAuthenticator, refusedChangingNothing, sign } from '../owner/passkey-fixtures.ts';

const EMAIL = 'owner@example.com';
const HOUR = 3_600_000;

let w: OwnerWorld;
let server: { url: string; stop: () => Promise<void> };
let ownerId: string;
let walletId: string;
let token: string;
let key: SoftAuthenticator;

beforeAll(async () => {
  w = ownerWorld();
  server = await startTestServer(w.services);
  const wallet = await addWallet(w.services, { name: 'Alpha' });
  walletId = wallet.walletId;
  ownerId = await claimFor(w.services, walletId, EMAIL);
  token = await tokenFor(w.services, EMAIL);
  // Rails the owner set before the passkey: an approval threshold and a budget.
  await setGuardRails(w.services, ownerId, walletId, { approval_above: '20', budgets: { daily: '100' } }, 'dashboard');
  await enrolledKit(w.services, ownerId, walletId);
  key = await newAuthenticator(w.services);
  await enrol(w.services, ownerId, key);
});
afterAll(async () => {
  await server?.stop();
});

/** The owner API over real HTTP with the owner's token. */
async function api(action: string, params: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/owner`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ action, ...params }) });
  return { status: res.status, body: await res.json() };
}

/** The API's refusal for want of the passkey, with the ledger unchanged. */
async function apiRefused(action: string, params: Record<string, unknown>): Promise<void> {
  const before = await ledgerState(w.services, ownerId);
  const res = await api(action, params);
  expect({ action, status: res.status, code: res.body.error?.code, reason: res.body.error?.reason }).toEqual({ action, status: 403, code: 'UNAUTHORIZED', reason: 'passkey_required' });
  expect(res.body.error.how_to_fix).toContain('dashboard');
  expect(await ledgerState(w.services, ownerId)).toBe(before);
}

/** The approval mail's approve and reject links for a new pending payment. */
async function mailedApproval(amount = 25_000_000n) {
  const p = await addPendingPayment(w.services, walletId, { amount });
  await queueApprovalMail(w.services, (await getApproval(w.services.db, p.approvalId))!);
  // The newest approval mail not read yet: the one just queued.
  const mail = (await listMail(w.services.db, 50)).find((m) => m.kind === 'approval' && !seen.has(m.mail_id));
  seen.add(mail!.mail_id);
  const links = JSON.parse(mail!.links) as { label: string; url: string }[];
  const tokenOf = (label: string) => links.find((l) => l.label === label)!.url.split('/approval/')[1]!;
  return { ...p, approve: tokenOf('approve'), reject: tokenOf('reject') };
}
const seen = new Set<string>();

const rails = async () => JSON.stringify(await loadRailsState(w.services.db, walletId), (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
const randomAddress = () => getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)));

describe('with only the mailbox', () => {
  test('the approval mail’s approve link alone (no passkey answer, or a garbage one) approves nothing; its reject link still rejects', async () => {
    const m = await mailedApproval();
    for (const assertion of [undefined, '', 'garbage', '{"id":"AAAA","response":{}}']) {
      await refusedChangingNothing(w.services, ownerId, () => decideByLink(w.services, m.approve, assertion));
    }
    expect((await getApproval(w.services.db, m.approvalId))!.status).toBe('pending');
    // Rejecting tightens: the mailbox may still do it.
    const rejected = await decideByLink(w.services, m.reject);
    expect(rejected.ok).toBe(true);
    expect((await getApproval(w.services.db, m.approvalId))!.status).toBe('rejected');
  });

  test('the approve link with the owner’s passkey answer over this approval approves (the control)', async () => {
    const m = await mailedApproval();
    const answer = await sign(w.services, ownerId, approvalDecision(ownerId, (await getApproval(w.services.db, m.approvalId))!), key);
    const done = await decideByLink(w.services, m.approve, answer);
    expect(done.ok).toBe(true);
    const row = (await getApproval(w.services.db, m.approvalId))!;
    expect(row.status).toBe('approved');
    expect(JSON.parse(row.evidence!).credential_id).toBe(key.id);
  });

  test('loosening the rails and unfreezing by a mail-opened page, without a passkey answer: refused, rails unchanged', async () => {
    const before = await rails();
    for (const via of ['email', 'dashboard'] as const) {
      await refusedChangingNothing(w.services, ownerId, () => setGuardRails(w.services, ownerId, walletId, { approval_above: '500', budgets: { daily: '100' } }, via));
      await refusedChangingNothing(w.services, ownerId, () => setGuardRails(w.services, ownerId, walletId, {}, via, 'garbage'));
    }
    expect(await rails()).toBe(before);
    // Freezing tightens (no passkey); unfreezing loosens (refused).
    await setGuardRails(w.services, ownerId, walletId, { approval_above: '20', budgets: { daily: '100' }, frozen: true }, 'email');
    const frozen = await rails();
    await refusedChangingNothing(w.services, ownerId, () => setGuardRails(w.services, ownerId, walletId, { approval_above: '20', budgets: { daily: '100' } }, 'email'), /loosen/);
    expect(await rails()).toBe(frozen);
    // The owner's passkey unfreezes.
    const unfreeze = { approval_above: '20', budgets: { daily: '100' } };
    const decision = (await railsChangeDecision(w.services, ownerId, walletId, unfreeze))!;
    await setGuardRails(w.services, ownerId, walletId, unfreeze, 'dashboard', await sign(w.services, ownerId, decision, key));
    expect((await loadRailsState(w.services.db, walletId)).current.frozen).toBeUndefined();
  });

  test('minting an owner API token without a passkey answer: refused, no token', async () => {
    await refusedChangingNothing(w.services, ownerId, () => mintOwnerToken(w.services, ownerId, 'thief'));
    await refusedChangingNothing(w.services, ownerId, () => mintOwnerToken(w.services, ownerId, 'thief', '{"id":"x"}'));
    // An answer for another label does not mint this one.
    const forOther = await sign(w.services, ownerId, { kind: 'token.mint', owner_id: ownerId, label: 'ci' }, key);
    await refusedChangingNothing(w.services, ownerId, () => mintOwnerToken(w.services, ownerId, 'thief', forOther), /another decision/);
  });

  test('announcing a recovery sweep and starting a recovery enrolment without a grant: refused, no sweep or enrolment row', async () => {
    await refusedChangingNothing(w.services, ownerId, () => startSweep(w.services, ownerId, walletId, randomAddress()));
    await refusedChangingNothing(w.services, ownerId, () => startEnrollment(w.services, ownerId, walletId));
  });

  test('a sign-in link alone signs nobody in (no session), a garbage answer neither; the owner’s passkey does', async () => {
    await requestLogin(w.services, EMAIL);
    const link = /\/login\/([A-Za-z0-9_-]{43})/.exec((await listMail(w.services.db, 50)).find((m) => m.kind === 'login')!.body)![1]!;
    const sessions = async () => Number((await w.services.db.get<{ n: bigint }>('SELECT count(*) AS n FROM owner_sessions WHERE owner_id = ?', ownerId))!.n);
    const before = await sessions();
    const session = () => ({ hash: crypto.getRandomValues(new Uint8Array(32)), expiresAt: Date.now() + HOUR });
    expect(await followMagicLink(w.services, link, session())).toMatchObject({ ok: false, reason: 'passkey' });
    await expect(followMagicLink(w.services, link, session(), 'garbage')).rejects.toMatchObject({ details: { reason: 'passkey_required' } });
    // An answer the owner made for something else (an approval) is not a sign-in.
    const p = await addPendingPayment(w.services, walletId);
    const approvalAnswer = await sign(w.services, ownerId, approvalDecision(ownerId, (await getApproval(w.services.db, p.approvalId))!), key);
    const mid = await ledgerState(w.services, ownerId);
    await expect(followMagicLink(w.services, link, session(), approvalAnswer)).rejects.toMatchObject({ details: { reason: 'passkey_required' } });
    expect(await ledgerState(w.services, ownerId)).toBe(mid);
    expect(await sessions()).toBe(before);
    // The link was not spent by the refusals: with the passkey it signs in.
    const signIn: OwnerDecision = { kind: 'sign_in', owner_id: ownerId, wallet_id: null };
    const ok = await followMagicLink(w.services, link, session(), await sign(w.services, ownerId, signIn, key));
    expect(ok).toMatchObject({ ok: true, ownerId });
    expect(await sessions()).toBe(before + 1);
  });
});

describe('the owner API token', () => {
  test('approve, loosening, unfreeze, recovery_enroll_start and recovery_sweep_start: 403 passkey_required, nothing changes', async () => {
    const p = await addPendingPayment(w.services, walletId);
    await apiRefused('approve', { approval_id: p.approvalId });
    expect((await getApproval(w.services.db, p.approvalId))!.status).toBe('pending');
    await apiRefused('set_guard_rails', { wallet_id: walletId, rails: { approval_above: '20', budgets: { daily: '1000' } } });
    await apiRefused('set_guard_rails', { wallet_id: walletId, rails: {} });
    await apiRefused('recovery_enroll_start', { wallet_id: walletId });
    await apiRefused('recovery_sweep_start', { wallet_id: walletId, to_address: randomAddress() });
    // Frozen, then unfreezing by the API.
    const freeze = await api('set_guard_rails', { wallet_id: walletId, rails: { approval_above: '20', budgets: { daily: '100' }, frozen: true } });
    expect(freeze.status).toBe(200);
    await apiRefused('set_guard_rails', { wallet_id: walletId, rails: { approval_above: '20', budgets: { daily: '100' } } });
    const unfreeze = { approval_above: '20', budgets: { daily: '100' } };
    await setGuardRails(w.services, ownerId, walletId, unfreeze, 'dashboard', await sign(w.services, ownerId, (await railsChangeDecision(w.services, ownerId, walletId, unfreeze))!, key));
  });

  test('reading, rejecting and tightening still work without a passkey', async () => {
    for (const [action, params] of [
      ['wallets', {}],
      ['get_guard_rails', { wallet_id: walletId }],
      ['approvals', { wallet_id: walletId }],
      ['audit_log', { wallet_id: walletId }],
      ['tokens', {}],
      ['recovery_status', { wallet_id: walletId }],
    ] as const) {
      expect((await api(action, params)).status, action).toBe(200);
    }
    const p = await addPendingPayment(w.services, walletId);
    expect((await api('reject', { approval_id: p.approvalId })).status).toBe(200);
    expect((await getApproval(w.services.db, p.approvalId))!.status).toBe('rejected');
    const lower = await api('set_guard_rails', { wallet_id: walletId, rails: { approval_above: '10', budgets: { daily: '50' } } });
    expect(lower.status).toBe(200);
    expect(lower.body.data.rails).toMatchObject({ approval_above: 10, budgets: { daily: 50 } });
  });

  test('a dashboard grant lets the API carry out one recovery step, once; approving and loosening are never granted', async () => {
    const grant = async (decision: GrantableDecision) => await grantForApi(w.services, ownerId, decision, await sign(w.services, ownerId, decision, key));
    // Approving and loosening stay on the dashboard: no grant is made for them, and the API still refuses.
    const a = await addPendingPayment(w.services, walletId);
    const approve = approvalDecision(ownerId, (await getApproval(w.services.db, a.approvalId))!);
    await expect(grantForApi(w.services, ownerId, approve as unknown as GrantableDecision, await sign(w.services, ownerId, approve, key))).rejects.toThrow(/Only a recovery enrolment or a sweep/);
    await apiRefused('approve', { approval_id: a.approvalId });
    const looser = { approval_above: '40', budgets: { daily: '100' } };
    const loosen = (await railsChangeDecision(w.services, ownerId, walletId, looser))!;
    await expect(grantForApi(w.services, ownerId, loosen as unknown as GrantableDecision, await sign(w.services, ownerId, loosen, key))).rejects.toThrow(/Only a recovery enrolment or a sweep/);
    await apiRefused('set_guard_rails', { wallet_id: walletId, rails: looser });
    // Recovery enrolment: once.
    await grant({ kind: 'recovery.enroll', owner_id: ownerId, wallet_id: walletId });
    expect((await api('recovery_enroll_start', { wallet_id: walletId })).status).toBe(200);
    await apiRefused('recovery_enroll_start', { wallet_id: walletId });
    // A sweep: to the signed address only.
    const to = randomAddress();
    await grant({ kind: 'recovery.sweep', owner_id: ownerId, wallet_id: walletId, to_address: to });
    await apiRefused('recovery_sweep_start', { wallet_id: walletId, to_address: randomAddress() });
    const swept = await api('recovery_sweep_start', { wallet_id: walletId, to_address: to });
    expect(swept.status).toBe(200);
    // The owner's row of the announcement (the agent's event has a row of its own) carries the grant's assertion.
    const row = await w.services.db.get<{ data: string }>("SELECT data FROM decision_log WHERE wallet_id = ? AND kind = 'recovery.sweep_announced' AND data LIKE '%\"actor\"%' ORDER BY seq DESC", walletId);
    expect(JSON.parse(row!.data).passkey.credential_id).toBe(key.id);
    await w.services.db.run("UPDATE recovery_sweeps SET status = 'cancelled' WHERE wallet_id = ?", walletId);
  });

  test('a grant lapses after ten minutes unused', async () => {
    const decision: GrantableDecision = { kind: 'recovery.enroll', owner_id: ownerId, wallet_id: walletId };
    await grantForApi(w.services, ownerId, decision, await sign(w.services, ownerId, decision, key));
    w.advance(GRANT_MINUTES * 60_000);
    await apiRefused('recovery_enroll_start', { wallet_id: walletId });
  });
});
