import { describe, expect, test } from 'bun:test';
import { canonicalJson, decisionChallenge, decisionOfRow, railsLoosen, type OwnerDecision } from '../../src/domain/owner-decision.ts';
import { verifyOwnerSignatures } from '../../src/domain/owner-signatures.ts';
import { SoftAuthenticator } from '../helpers/soft-authenticator.ts';

const ORIGIN = 'http://localhost:8787';
const OWNER = 'own_1';
const WALLET = 'wal_1';
const actor = `owner:${OWNER} via dashboard`;

describe('owner decisions', () => {
  test('canonical JSON sorts keys at every level, so one decision has one text whoever builds it', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson({ a: 1, skip: undefined })).toBe('{"a":1}');
  });

  test('the challenge commits to every field of the decision and to the nonce', () => {
    const d: OwnerDecision = { kind: 'approval.approve', owner_id: OWNER, wallet_id: WALLET, approval_id: 'apr_1', subject_type: 'payment', amount: '25000000', recipient: 'shop' };
    const c = decisionChallenge(d, 'n1');
    expect(decisionChallenge({ ...d }, 'n1')).toBe(c);
    expect(decisionChallenge({ ...d, amount: '90000000' }, 'n1')).not.toBe(c);
    expect(decisionChallenge({ ...d, recipient: 'thief' }, 'n1')).not.toBe(c);
    expect(decisionChallenge(d, 'n2')).not.toBe(c);
  });

  test('a rails change needs the passkey only when it loosens; unfreezing loosens', () => {
    expect(railsLoosen({ approval_above: 10 }, { approval_above: 5 })).toBe(false);
    expect(railsLoosen({ approval_above: 10 }, { approval_above: 50 })).toBe(true);
    expect(railsLoosen({ frozen: true }, {})).toBe(true);
    expect(railsLoosen({}, { frozen: true })).toBe(false);
  });

  test("a log row is rebuilt into the decision the owner signed; the agent's and the daemon's rows are none", () => {
    expect(decisionOfRow(WALLET, 'approval.approved', { actor, approval_id: 'apr_1', subject_type: 'payment', amount: '5', recipient: 'shop' })).toEqual({ kind: 'approval.approve', owner_id: OWNER, wallet_id: WALLET, approval_id: 'apr_1', subject_type: 'payment', amount: '5', recipient: 'shop' });
    expect(decisionOfRow(WALLET, 'approval.approved', { actor: 'agent', approval_id: 'apr_1' })).toBeNull();
    expect(decisionOfRow(WALLET, 'guard_rails.set', { actor, previous: { approval_above: 10 }, requested: { approval_above: 5 } })).toBeNull();
    expect(decisionOfRow(WALLET, 'approval.rejected', { actor })).toBeNull();
  });
});

/** Rows of an export, numbered. */
function lines(rows: { kind: string; at?: number; data: Record<string, unknown> }[]): string[] {
  return rows.map((r, i) => JSON.stringify({ type: 'row', wallet_id: WALLET, seq: i + 1, at: r.at ?? 1_000 + i, kind: r.kind, data: r.data }));
}

async function signed(key: SoftAuthenticator, decision: OwnerDecision) {
  const nonce = `nonce-${Math.random()}`;
  const answer = await key.assert({ challenge: decisionChallenge(decision, nonce), rpId: 'localhost' });
  return { credential_id: answer.id, decision, nonce, response: answer.response };
}

describe('verifyOwnerSignatures (verify-log)', () => {
  const keyRow = (key: SoftAuthenticator) => ({ credential_id: key.id, public_key: key.publicKey, rp_id: 'localhost', origin: ORIGIN });

  test("from the first passkey on, an approval counts only with the owner's assertion over exactly it", async () => {
    const key = await SoftAuthenticator.create(ORIGIN);
    const approve: OwnerDecision = { kind: 'approval.approve', owner_id: OWNER, wallet_id: WALLET, approval_id: 'apr_1', subject_type: 'payment', amount: '25000000', recipient: 'shop' };
    const approvedRow = { actor, transaction_id: 'tx_1', approval_id: 'apr_1', subject_type: 'payment', amount: '25000000', recipient: 'shop', passkey: await signed(key, approve) };
    const rows = [
      { kind: 'approval.approved', data: { actor: `owner:${OWNER} via email`, transaction_id: 'tx_0', approval_id: 'apr_0', subject_type: 'payment', amount: '1', recipient: 'x' } },
      { kind: 'owner.passkey_added', data: { actor, ...keyRow(key), name: 'laptop' } },
      { kind: 'approval.requested', data: { transaction_id: 'tx_1', approval_id: 'apr_1' } },
      { kind: 'approval.approved', data: approvedRow },
      { kind: 'signing.signed', data: { transaction_id: 'tx_1' } },
    ];
    const ok = await verifyOwnerSignatures(WALLET, lines(rows));
    expect(ok).toMatchObject({ ok: true, signed_decisions: 1, unsigned_decisions: 1, keys_added: 1 });

    const raised = rows.map((r) => (r.kind === 'approval.approved' && r.data === approvedRow ? { ...r, data: { ...approvedRow, amount: '90000000' } } : r));
    const bad = await verifyOwnerSignatures(WALLET, lines(raised));
    expect(bad.ok).toBe(false);
    expect(bad.first_bad).toEqual({ seq: 4, reason: expect.stringContaining('over another decision') });

    const unsigned = rows.map((r) => (r.data === approvedRow ? { ...r, data: { ...approvedRow, passkey: undefined } } : r));
    expect((await verifyOwnerSignatures(WALLET, lines(unsigned))).first_bad).toEqual({ seq: 4, reason: expect.stringContaining('carries no passkey assertion') });

    const slipped = rows.filter((r) => r.kind !== 'approval.approved' || r.data !== approvedRow);
    expect((await verifyOwnerSignatures(WALLET, lines(slipped))).first_bad).toEqual({ seq: 4, reason: expect.stringContaining('signed without an approval.approved row') });
  });

  test("an owner's passkeys enter a wallet claimed later only with the claim signed by one of them", async () => {
    const key = await SoftAuthenticator.create(ORIGIN);
    const stranger = await SoftAuthenticator.create(ORIGIN);
    const claim: OwnerDecision = { kind: 'sign_in', owner_id: OWNER, wallet_id: WALLET };
    const carried = (passkey: unknown) => [{ kind: 'owner.passkeys_carried', data: { actor: `owner:${OWNER} via email`, keys: [keyRow(key)], passkey } }];
    expect(await verifyOwnerSignatures(WALLET, lines(carried(await signed(key, claim))))).toMatchObject({ ok: true, keys_added: 1 });
    expect((await verifyOwnerSignatures(WALLET, lines(carried(undefined)))).first_bad?.reason).toContain("without the owner's signed claim");
    expect((await verifyOwnerSignatures(WALLET, lines(carried(await signed(stranger, claim))))).first_bad?.reason).toContain("without the owner's signed claim");
    expect((await verifyOwnerSignatures(WALLET, lines(carried(await signed(key, { ...claim, wallet_id: 'wal_other' }))))).ok).toBe(false);
  });

  test('a later passkey enters only under an earlier one; a reset counts only after its delay', async () => {
    const first = await SoftAuthenticator.create(ORIGIN);
    const second = await SoftAuthenticator.create(ORIGIN);
    const addSecond: OwnerDecision = { kind: 'passkey.add', owner_id: OWNER, credential_id: second.id, public_key: second.publicKey };
    const base = [{ kind: 'owner.passkey_added', data: { actor, ...keyRow(first) } }];
    const underFirst = [...base, { kind: 'owner.passkey_added', data: { actor, ...keyRow(second), passkey: await signed(first, addSecond) } }];
    expect((await verifyOwnerSignatures(WALLET, lines(underFirst))).ok).toBe(true);
    const byItself = [...base, { kind: 'owner.passkey_added', data: { actor, ...keyRow(second), passkey: await signed(second, addSecond) } }];
    expect((await verifyOwnerSignatures(WALLET, lines(byItself))).first_bad?.reason).toContain('without the assertion of an earlier one');

    const hour = 3_600_000;
    const reset = (appliedAt: number) => [
      ...base,
      { kind: 'owner.passkey_reset_started', at: 10_000, data: { actor: `owner:${OWNER} via email`, reset_id: 'pkr_1', effective_at: new Date(10_000 + 72 * hour).toISOString() } },
      { kind: 'owner.passkeys_reset', at: appliedAt, data: { actor: `owner:${OWNER} via email`, reset_id: 'pkr_1' } },
    ];
    expect((await verifyOwnerSignatures(WALLET, lines(reset(10_000 + 72 * hour)))).ok).toBe(true);
    expect((await verifyOwnerSignatures(WALLET, lines(reset(10_000 + 71 * hour)))).first_bad?.reason).toContain("before the reset's delay had passed");
  });
});
