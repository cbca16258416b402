/**
 * What an owner's passkey signs (DESIGN §7.1): a decision as canonical JSON, and the WebAuthn
 * challenge that commits to it — sha256 of a fixed label, the decision and a server nonce — so an
 * assertion approves exactly one decision, once, and anyone holding the decision, the nonce and
 * the credential's public key can check it offline. Pure: the daemon, the pages and
 * `agent-wallet owner verify-log` share these rules.
 */
import { sha256 } from './sha256.ts';
import { classifyChange } from './rails-change.ts';
import { parseGuardRails } from '../contract/guard-rails.ts';

/** The decisions that need a fresh assertion once an owner has a passkey. Amounts are micro-USDC as decimal strings. */
export type OwnerDecision =
  | { kind: 'sign_in'; owner_id: string; wallet_id: string | null }
  | { kind: 'passkey.add'; owner_id: string; credential_id: string; public_key: string }
  | { kind: 'passkey.remove'; owner_id: string; credential_id: string }
  | { kind: 'passkey.reset_cancel'; owner_id: string; reset_id: string }
  | { kind: 'approval.approve'; owner_id: string; wallet_id: string; approval_id: string; subject_type: string; amount: string; recipient: string }
  | { kind: 'guard_rails.loosen'; owner_id: string; wallet_id: string; from: unknown; to: unknown }
  | { kind: 'token.mint'; owner_id: string; label: string }
  | { kind: 'recovery.enroll'; owner_id: string; wallet_id: string }
  | { kind: 'recovery.sweep'; owner_id: string; wallet_id: string; to_address: string };

export type DecisionKind = OwnerDecision['kind'];

/** JSON with object keys sorted at every level: one text per value, whoever writes it. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The WebAuthn challenge (base64url) of `decision` with the server's `nonce`. */
export function decisionChallenge(decision: OwnerDecision, nonce: string): string {
  return Buffer.from(sha256(`agent-wallet owner decision v1\n${canonicalJson(decision)}\n${nonce}`)).toString('base64url');
}

export const sameDecision = (a: OwnerDecision, b: OwnerDecision): boolean => canonicalJson(a) === canonicalJson(b);

/** Whether changing the rails from `from` to `to` loosens anything (unfreezing included): only a loosening needs the passkey. */
export function railsLoosen(from: unknown, to: unknown): boolean {
  const a = parseGuardRails(from);
  const b = parseGuardRails(to);
  if (!a.ok || !b.ok) return true;
  return classifyChange(a.rails, b.rails).loosening !== null;
}

/** The owner id of a decision-log actor (`owner:<id> via <channel>`), or null. */
export function ownerOfActor(actor: unknown): string | null {
  const m = typeof actor === 'string' ? /^owner:(\S+) via \S+$/.exec(actor) : null;
  return m ? m[1]! : null;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));

/**
 * The decision a decision-log row records, when it is one a passkey must sign: what the owner
 * saw and approved, rebuilt from the row alone (so an edited row no longer matches the signed
 * decision). Null for rows no passkey signs (the agent's, the daemon's, a tightening).
 */
export function decisionOfRow(walletId: string, kind: string, data: Record<string, any>): OwnerDecision | null {
  const owner = ownerOfActor(data.actor);
  if (!owner) return null;
  switch (kind) {
    case 'approval.approved':
      return { kind: 'approval.approve', owner_id: owner, wallet_id: walletId, approval_id: str(data.approval_id), subject_type: str(data.subject_type), amount: str(data.amount), recipient: str(data.recipient) };
    case 'guard_rails.set':
      return railsLoosen(data.previous, data.requested) ? { kind: 'guard_rails.loosen', owner_id: owner, wallet_id: walletId, from: data.previous, to: data.requested } : null;
    case 'owner.token_minted':
      return { kind: 'token.mint', owner_id: owner, label: str(data.label) };
    case 'recovery.enrollment_started':
      return { kind: 'recovery.enroll', owner_id: owner, wallet_id: walletId };
    case 'recovery.sweep_announced':
      return { kind: 'recovery.sweep', owner_id: owner, wallet_id: walletId, to_address: str(data.to_address) };
    case 'owner.passkey_added':
      return { kind: 'passkey.add', owner_id: owner, credential_id: str(data.credential_id), public_key: str(data.public_key) };
    case 'owner.passkey_removed':
      return { kind: 'passkey.remove', owner_id: owner, credential_id: str(data.credential_id) };
    case 'owner.passkey_reset_cancelled':
      return { kind: 'passkey.reset_cancel', owner_id: owner, reset_id: str(data.reset_id) };
    default:
      return null;
  }
}

/** How each decision is named to the owner on the passkey prompt's page. */
export function decisionWords(d: OwnerDecision): string {
  switch (d.kind) {
    case 'sign_in':
      return d.wallet_id ? `claim wallet ${d.wallet_id} and sign in` : 'sign in';
    case 'passkey.add':
      return 'add a passkey';
    case 'passkey.remove':
      return 'remove a passkey';
    case 'passkey.reset_cancel':
      return 'cancel the passkey reset';
    case 'approval.approve':
      return `approve ${d.subject_type} ${d.approval_id}`;
    case 'guard_rails.loosen':
      return 'loosen the guard rails';
    case 'token.mint':
      return `mint the owner API token "${d.label}"`;
    case 'recovery.enroll':
      return 'start a recovery-kit enrolment';
    case 'recovery.sweep':
      return `announce a sweep to ${d.to_address}`;
  }
}
