/**
 * The owner's assertion under attack (issue 44): approving a payment on the dashboard needs a fresh
 * assertion over exactly that approval. A replayed assertion, one made for another approval, from
 * another origin, for another RP ID, without user verification, past its prompt's time, with a stale
 * counter (a cloned authenticator), by another owner's key or by a key not enrolled: each refused,
 * and the ledger (approval, transaction, passkeys, log) is exactly as before. The honest answer
 * then approves, carrying its assertion into the approval and its decision-log row.
 */
import { expect, test } from 'bun:test';
import { decideAsOwner } from '../../src/actions/owner.ts';
import { getApproval } from '../../src/db/approvals.ts';
import { approvalDecision, decisionOptions, proveDecision } from '../../src/owner/passkeys.ts';
import { checkAssertion, evidenceOf } from '../../src/domain/passkey-assertion.ts';
import { addPendingPayment, addWallet, claimFor, ownerWorld } from '../actions/fixtures.ts';
import { enrol, ledgerState, newAuthenticator, refusedChangingNothing, sign } from './passkey-fixtures.ts';

async function world() {
  const w = ownerWorld();
  const wallet = await addWallet(w.services, { name: 'Alpha' });
  const ownerId = await claimFor(w.services, wallet.walletId, 'owner@example.com');
  const key = await newAuthenticator(w.services);
  await enrol(w.services, ownerId, key);
  const a = await addPendingPayment(w.services, wallet.walletId, { amount: 25_000_000n, recipient: 'bob-1234' });
  const b = await addPendingPayment(w.services, wallet.walletId, { amount: 90_000_000n, recipient: 'mallory-6666' });
  const decisionOf = async (approvalId: string) => approvalDecision(ownerId, (await getApproval(w.services.db, approvalId))!);
  const approve = (approvalId: string, assertion: unknown) => decideAsOwner(w.services, ownerId, approvalId, 'approved', 'dashboard', assertion);
  return { w, ownerId, wallet, key, a, b, decisionOf, approve };
}

test('the honest answer approves, once: the same assertion again (a replay) is refused and changes nothing', async () => {
  const { w, ownerId, key, a, b, decisionOf, approve } = await world();
  const answer = await sign(w.services, ownerId, await decisionOf(a.approvalId), key);
  const done = await approve(a.approvalId, answer);
  expect(done.status).toBe('approved');
  // The approval keeps the assertion, which checks against the enrolled key over exactly this approval.
  const row = (await getApproval(w.services.db, a.approvalId))!;
  const evidence = evidenceOf(JSON.parse(row.evidence!))!;
  expect(evidence.credential_id).toBe(key.id);
  const logged = await w.services.db.get<{ data: string }>("SELECT data FROM decision_log WHERE kind = 'approval.approved' AND data LIKE ?", `%${a.approvalId}%`);
  expect(JSON.parse(logged!.data).passkey).toEqual(JSON.parse(row.evidence!));
  const stored = await w.services.db.get<{ evidence: string }>('SELECT evidence FROM owner_passkeys WHERE credential_id = ?', key.id);
  expect((await checkAssertion(evidence, await decisionOf(a.approvalId), JSON.parse(stored!.evidence).key)).ok).toBe(true);
  // Replayed: on the same approval (already decided) and on the other one.
  await expect(approve(a.approvalId, answer)).rejects.toMatchObject({ errorCode: 'INVALID_STATUS' });
  await refusedChangingNothing(w.services, ownerId, () => approve(b.approvalId, answer));
});

test('an assertion made for another approval is refused there, and stays good for its own', async () => {
  const { w, ownerId, key, a, b, decisionOf, approve } = await world();
  // Signed for A (25 to bob), sent for B (90 to mallory): the prompt committed to A.
  const forA = await sign(w.services, ownerId, await decisionOf(a.approvalId), key);
  await refusedChangingNothing(w.services, ownerId, () => approve(b.approvalId, forA), /another decision/);
  // The same answer still approves A: refusing it elsewhere did not spend it.
  expect((await approve(a.approvalId, forA)).status).toBe('approved');
});

test('another origin, another RP ID, no user verification, no user presence, a forged challenge, the wrong ceremony type: each refused, nothing changes', async () => {
  const { w, ownerId, key, a, decisionOf, approve } = await world();
  const decision = await decisionOf(a.approvalId);
  const cases: [string, Parameters<typeof sign>[4]][] = [
    ['another origin', { origin: 'https://wallet.evil.example' }],
    ['another origin (same host, another port)', { origin: 'http://localhost:9999' }],
    ['another RP ID', { rpId: 'evil.example' }],
    ['without user verification', { userVerified: false }],
    ['without user presence', { userVerified: false, userPresent: false }],
    ['a registration ceremony', { type: 'webauthn.create' }],
  ];
  for (const [what, switches] of cases) {
    const answer = await sign(w.services, ownerId, decision, key, switches);
    const before = await ledgerState(w.services, ownerId);
    await expect(approve(a.approvalId, answer), what).rejects.toMatchObject({ details: { reason: 'passkey_required' } });
    expect(await ledgerState(w.services, ownerId), what).toBe(before);
  }
  // A challenge the daemon never issued (the attacker's own), and no or garbage answers.
  await refusedChangingNothing(w.services, ownerId, async () => approve(a.approvalId, await key.assert({ challenge: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url') })), /not one this daemon asked for/);
  for (const junk of [undefined, null, '', 'garbage', '{}', { id: key.id, response: {} }, JSON.stringify({ id: key.id, response: { clientDataJSON: 'x' } })]) {
    await refusedChangingNothing(w.services, ownerId, () => approve(a.approvalId, junk));
  }
  // Still pending; the honest answer approves it.
  expect((await approve(a.approvalId, await sign(w.services, ownerId, decision, key))).status).toBe('approved');
});

test('an answer past its prompt’s five minutes is refused, nothing changes', async () => {
  const { w, ownerId, key, a, decisionOf, approve } = await world();
  const options = await decisionOptions(w.services, ownerId, await decisionOf(a.approvalId));
  w.advance(5 * 60_000);
  await refusedChangingNothing(w.services, ownerId, async () => approve(a.approvalId, await key.assert(options)), /expired/);
});

test('a stale counter (a cloned authenticator) is refused, nothing changes', async () => {
  const { w, ownerId, key, a, b, decisionOf, approve } = await world();
  await approve(a.approvalId, await sign(w.services, ownerId, await decisionOf(a.approvalId), key, { counter: 7 }));
  expect(Number((await w.services.db.get<{ counter: bigint }>('SELECT counter FROM owner_passkeys WHERE credential_id = ?', key.id))!.counter)).toBe(7);
  for (const counter of [7, 3]) {
    const answer = await sign(w.services, ownerId, await decisionOf(b.approvalId), key, { counter });
    await refusedChangingNothing(w.services, ownerId, () => approve(b.approvalId, answer));
  }
  expect((await approve(b.approvalId, await sign(w.services, ownerId, await decisionOf(b.approvalId), key, { counter: 8 }))).status).toBe('approved');
});

test("another owner's passkey, and a key never enrolled, cannot approve this owner's payment", async () => {
  const { w, ownerId, key, a, decisionOf, approve } = await world();
  void key;
  const other = await addWallet(w.services, { name: 'Beta' });
  const otherOwner = await claimFor(w.services, other.walletId, 'other@example.com');
  const otherKey = await newAuthenticator(w.services);
  await enrol(w.services, otherOwner, otherKey);
  const decision = await decisionOf(a.approvalId);
  // The other owner's key answers this owner's prompt.
  await refusedChangingNothing(w.services, ownerId, async () => approve(a.approvalId, await sign(w.services, ownerId, decision, otherKey)), /not one of yours/);
  // The other owner asks for a prompt over this owner's approval (as themselves) and signs it.
  await expect(decisionOptions(w.services, otherOwner, decision).then((o) => otherKey.assert(o)).then((ans) => approve(a.approvalId, ans))).rejects.toMatchObject({ details: { reason: 'passkey_required' } });
  // A fresh key nobody enrolled.
  const stranger = await newAuthenticator(w.services);
  await refusedChangingNothing(w.services, ownerId, async () => approve(a.approvalId, await sign(w.services, ownerId, decision, stranger)), /not one of yours/);
  expect((await getApproval(w.services.db, a.approvalId))!.status).toBe('pending');
});

test('a removed key no longer approves', async () => {
  const { w, ownerId, key, a, decisionOf, approve } = await world();
  const second = await newAuthenticator(w.services);
  await enrol(w.services, ownerId, second, { name: 'phone', under: key });
  const { removeOwnerPasskey } = await import('../../src/owner/passkeys.ts');
  await removeOwnerPasskey(w.services, ownerId, second.id, await sign(w.services, ownerId, { kind: 'passkey.remove', owner_id: ownerId, credential_id: second.id }, key));
  await refusedChangingNothing(w.services, ownerId, async () => approve(a.approvalId, await sign(w.services, ownerId, await decisionOf(a.approvalId), second)), /not one of yours/);
});

test('the same answer sent twice at once decides once: the challenge is spent by the database, not by who reads first', async () => {
  const { w, ownerId, key, a, decisionOf } = await world();
  const decision = await decisionOf(a.approvalId);
  // Counter 0 (an authenticator without one): the spent challenge is the only guard left.
  const answer = await sign(w.services, ownerId, decision, key, { counter: 0 });
  const both = await Promise.allSettled([proveDecision(w.services, ownerId, decision, answer, 'dashboard'), proveDecision(w.services, ownerId, decision, answer, 'dashboard')]);
  expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  expect((both.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ details: { reason: 'passkey_required' } });
});
