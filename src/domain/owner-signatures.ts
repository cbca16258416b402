/**
 * The owner's own signatures in a decision-log export (DESIGN §7.1), checked offline by
 * `agent-wallet owner verify-log` after the chain and the daemon's heads check. The log key proves
 * the daemon wrote the rows; this proves the owner made the decisions: from the row where the
 * owner's first passkey entered the log, every decision that moves or loosens money carries the
 * owner's assertion over exactly what the row records, by a key the log added before it.
 *
 * Keys enter as `owner.passkey_added` (the first on the daemon's word, as the owner enrolled it
 * under a mail session; each later one under an earlier key's assertion) or `owner.passkeys_carried`
 * (the daemon's word, when the owner claims a wallet while having keys). They leave with
 * `owner.passkey_removed` (under an assertion) or `owner.passkeys_reset`, which counts only at
 * least its delay after the `owner.passkey_reset_started` it finishes, and only if no key cancelled it.
 *
 * And a transaction that waited for the owner (`approval.requested`) is signed (`signing.signed`)
 * only after the owner's `approval.approved` row for it: an approval slipped into the ledger
 * without a row of its own shows as a signature nobody decided.
 */
import { decisionOfRow, ownerOfActor } from './owner-decision.ts';
import { checkAssertion, evidenceOf, type PasskeyKey } from './passkey-assertion.ts';

export interface OwnerSignatureReport {
  ok: boolean;
  /** Owner decisions whose assertion checked. */
  signed_decisions: number;
  /** Owner decisions before the owner had a key in this log: the mailbox decided them. */
  unsigned_decisions: number;
  /** Keys the log added (carried ones included). */
  keys_added: number;
  first_bad: { seq: number; reason: string } | null;
}

interface Row {
  seq: number;
  at: number;
  kind: string;
  data: Record<string, any>;
}

const keyOfData = (d: Record<string, any>): PasskeyKey | null =>
  typeof d.credential_id === 'string' && typeof d.public_key === 'string' && typeof d.rp_id === 'string' && typeof d.origin === 'string'
    ? { credential_id: d.credential_id, public_key: d.public_key, rp_id: d.rp_id, origin: d.origin }
    : null;

/** Checks the owner's signatures of an export's `row` lines (the lines verifyLogLines accepted). */
export async function verifyOwnerSignatures(walletId: string, lines: readonly string[]): Promise<OwnerSignatureReport> {
  const rows: Row[] = [];
  for (const line of lines) {
    const text = line.trim();
    if (!text) continue;
    try {
      const v = JSON.parse(text) as Record<string, any>;
      if (v.type === 'row' && typeof v.data === 'object' && v.data !== null) rows.push({ seq: Number(v.seq), at: Number(v.at), kind: String(v.kind), data: v.data });
    } catch {
      // verifyLogLines has already refused a file with a line that is not JSON.
    }
  }
  const report: OwnerSignatureReport = { ok: false, signed_decisions: 0, unsigned_decisions: 0, keys_added: 0, first_bad: null };
  const bad = (seq: number, reason: string): OwnerSignatureReport => ({ ...report, first_bad: { seq, reason } });
  const keys = new Map<string, PasskeyKey>();
  const resets = new Map<string, { at: number; effective_at: number; cancelled: boolean }>();
  const waiting = new Set<string>();
  const approved = new Set<string>();
  let owner: string | null = null;

  /** Checks the row's `passkey` evidence over its decision against a key in force; a reason when it does not check. */
  const signedBy = async (r: Row): Promise<string | null> => {
    const decision = decisionOfRow(walletId, r.kind, r.data)!;
    const evidence = evidenceOf(r.data.passkey);
    if (!evidence) return 'it carries no passkey assertion, though the owner had a passkey then';
    const key = keys.get(evidence.credential_id);
    if (!key) return `its assertion is by credential ${evidence.credential_id.slice(0, 12)}…, which the log had not added (or had removed) by then`;
    const checked = await checkAssertion(evidence, decision, key);
    return checked.ok ? null : `its passkey assertion does not check: ${checked.reason}`;
  };

  for (const r of rows) {
    const actorOwner = ownerOfActor(r.data.actor);
    if (actorOwner) {
      // One wallet, one owner: a decision by anyone else is not the owner's.
      if (owner === null) owner = actorOwner;
      else if (owner !== actorOwner) return bad(r.seq, `it is decided by owner ${actorOwner}, but this wallet's owner is ${owner}`);
    }
    switch (r.kind) {
      case 'approval.requested':
        waiting.add(String(r.data.transaction_id));
        continue;
      case 'signing.signed': {
        const txId = String(r.data.transaction_id);
        if (waiting.has(txId) && !approved.has(txId)) return bad(r.seq, `transaction ${txId} waited for the owner's approval and was signed without an approval.approved row for it`);
        continue;
      }
      case 'owner.passkey_added': {
        const key = keyOfData(r.data);
        if (!key) return bad(r.seq, 'a passkey added without its public key, RP ID and origin');
        if (keys.size > 0) {
          const why = await signedBy(r);
          if (why) return bad(r.seq, `a passkey added without the assertion of an earlier one: ${why}`);
        }
        keys.set(key.credential_id, key);
        report.keys_added++;
        continue;
      }
      case 'owner.passkeys_carried': {
        const carried: PasskeyKey[] = [];
        for (const k of Array.isArray(r.data.keys) ? r.data.keys : []) {
          const key = keyOfData(k as Record<string, any>);
          if (!key) return bad(r.seq, 'a carried passkey without its public key, RP ID and origin');
          carried.push(key);
        }
        // The owner claimed this wallet with one of the keys it brings: that key signed the claim.
        const claim = evidenceOf(r.data.passkey);
        const by = claim ? carried.find((k) => k.credential_id === claim.credential_id) : undefined;
        const checked = claim && by && actorOwner ? await checkAssertion(claim, { kind: 'sign_in', owner_id: actorOwner, wallet_id: walletId }, by) : null;
        if (!checked?.ok) return bad(r.seq, `the owner's passkeys entered this wallet's log without the owner's signed claim of it by one of them${checked && !checked.ok ? `: ${checked.reason}` : ''}`);
        for (const key of carried) {
          keys.set(key.credential_id, key);
          report.keys_added++;
        }
        continue;
      }
      case 'owner.passkey_removed': {
        const why = await signedBy(r);
        if (why) return bad(r.seq, `a passkey removed without the owner's assertion: ${why}`);
        keys.delete(String(r.data.credential_id));
        report.signed_decisions++;
        continue;
      }
      case 'owner.passkey_reset_started':
        resets.set(String(r.data.reset_id), { at: r.at, effective_at: Date.parse(String(r.data.effective_at)), cancelled: false });
        continue;
      case 'owner.passkey_reset_cancelled': {
        const why = await signedBy(r);
        if (why) return bad(r.seq, `a reset cancelled without the owner's assertion: ${why}`);
        const reset = resets.get(String(r.data.reset_id));
        if (reset) reset.cancelled = true;
        report.signed_decisions++;
        continue;
      }
      case 'owner.passkeys_reset': {
        const reset = resets.get(String(r.data.reset_id));
        if (!reset) return bad(r.seq, 'the passkeys were reset without a reset started before it in this log');
        if (reset.cancelled) return bad(r.seq, 'the passkeys were reset by a reset the owner had cancelled');
        if (!(r.at >= reset.effective_at) || !(reset.effective_at > reset.at)) return bad(r.seq, `the passkeys were reset before the reset's delay had passed (started ${new Date(reset.at).toISOString()}, effective ${new Date(reset.effective_at).toISOString()})`);
        keys.clear();
        continue;
      }
    }
    if (r.kind === 'approval.approved' && actorOwner) approved.add(String(r.data.transaction_id));
    if (!decisionOfRow(walletId, r.kind, r.data)) continue;
    if (keys.size === 0) {
      if (r.data.passkey !== undefined) return bad(r.seq, 'it carries a passkey assertion by a key this log never added');
      report.unsigned_decisions++;
      continue;
    }
    const why = await signedBy(r);
    if (why) return bad(r.seq, `an owner decision (${r.kind}) ${why}`);
    report.signed_decisions++;
  }
  report.ok = true;
  return report;
}
