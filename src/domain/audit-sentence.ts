/**
 * Audit-log entries as the owner reads them: one sentence with the amount, the payee and who
 * decided, e.g. "The agent paid 18.09 + 0.01 fee = 18.1 USDC to data-vendor (payment, decided by
 * the guard rails: Within every guard rail.)". Names replace internal ids wherever one exists: the
 * owner's e-mail, the wallet's name, the payee's username. Pure: the caller looks the names up.
 */
import { formatUsdc } from './money.ts';
import { amountFeeTotal, type MoneyParts } from './spending.ts';

/** One audit entry as `walletAuditLog` returns it. */
export interface AuditEntry {
  kind: string;
  actor: string;
  data: unknown;
}

/** A transaction an entry names, as far as the sentence needs it. */
export interface AuditTransaction {
  type: string;
  money: MoneyParts;
  /** The payee as the agent named it (username or address), or null. */
  to: string | null;
}

/** The names an entry's ids stand for. Missing names fall back to neutral words, never to ids. */
export interface AuditNames {
  /** owner_id → e-mail. */
  owners: ReadonlyMap<string, string>;
  /** transaction_id → the transaction. */
  transactions: ReadonlyMap<string, AuditTransaction>;
  /** The wallet the log belongs to. */
  wallet: { name: string };
  /** credential_id → the name the owner gave that passkey (removed ones too); a missing one reads "a passkey". */
  passkeys?: ReadonlyMap<string, string>;
}

const VIA: Record<string, string> = { dashboard: 'from the dashboard', email: 'by e-mail', api: 'through the owner API' };

/** Who acted, as a noun phrase ("The owner (o@example.com)"), and how ("from the dashboard"). */
export function auditActor(actor: string, names: AuditNames): { who: string; how: string } {
  const owner = /^owner:(\S+)(?: via (\S+))?$/.exec(actor);
  if (owner) {
    const email = names.owners.get(owner[1]!);
    return { who: email ? `The owner (${email})` : 'The owner', how: owner[2] ? (VIA[owner[2]] ?? `via ${owner[2]}`) : '' };
  }
  if (actor === 'agent') return { who: `The agent (${names.wallet.name})`, how: '' };
  if (actor === 'system:restore') return { who: 'The service', how: 'after a restore' };
  if (actor === 'system' || actor.startsWith('system')) return { who: 'The service', how: '' };
  return { who: 'Someone', how: '' };
}

const rec = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const lower = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const withHow = (s: string, how: string) => (how ? `${s} ${how}` : s);

/** A USDC amount given as a JSON number (USDC) → micro-USDC; null when absent. */
function micro(v: unknown): bigint | null {
  if (typeof v !== 'number' || !Number.isFinite(v)) return null;
  return BigInt(Math.round(v * 1_000_000));
}

const KIND_NOUN: Record<string, string> = { payment: 'payment', withdrawal: 'withdrawal', x402: 'x402 purchase', deposit: 'deposit' };

/** "18.09 + 0.01 fee = 18.1 USDC to data-vendor", from the transaction or the entry's own numbers. */
function whatTo(d: Record<string, unknown>, tx: AuditTransaction | undefined): string {
  let money = tx?.money ?? null;
  if (!money) {
    const amount = micro(d.amount);
    if (amount !== null) money = { amount, fee: micro(d.fee) ?? 0n, setup_fee: 0n };
  }
  const to = tx?.to ?? str(d.to);
  const amount = money ? amountFeeTotal(money) : 'an amount';
  return to ? `${amount} to ${to}` : amount;
}

/** The passkey a decision was signed with (its data's `passkey` evidence), as a clause: ", signed with passkey “laptop”". */
function signedWith(d: Record<string, unknown>, names: AuditNames): string {
  const evidence = rec(d.passkey);
  const id = str(evidence.credential_id);
  if (!id) return '';
  const name = names.passkeys?.get(id);
  return name ? `, signed with passkey “${name}”` : ', signed with a passkey';
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The readable sentence of one audit entry; a decision signed with the owner's passkey says with which. */
export function auditSentence(e: AuditEntry, names: AuditNames): string {
  const sentence = baseSentence(e, names);
  const signed = e.kind === 'owner.passkey_added' && rec(e.data).passkey ? `, confirmed with an earlier passkey` : signedWith(rec(e.data), names);
  return sentence + signed;
}

function baseSentence(e: AuditEntry, names: AuditNames): string {
  const d = rec(e.data);
  const { who, how } = auditActor(e.actor, names);
  const txId = str(d.transaction_id);
  const tx = txId ? names.transactions.get(txId) : undefined;
  const noun = KIND_NOUN[tx?.type ?? ''] ?? 'payment';
  switch (e.kind) {
    case 'decision': {
      const reason = str(d.reason) ?? '';
      const why = reason ? `: ${reason}` : '';
      const what = whatTo(d, tx);
      if (d.status === 'pre_approved') return `Paid ${what} (${noun}, decided by the guard rails${why})`;
      if (d.status === 'awaiting_approval') return `Asked the owner to approve ${what} (${noun}, decided by the guard rails${why})`;
      if (d.status === 'rejected') return `Refused ${what} (${noun}, decided by the guard rails${why})`;
      return `${who} asked for ${what} (${noun})`;
    }
    case 'approval.approved':
    case 'approval.rejected': {
      const verb = e.kind === 'approval.approved' ? 'approved' : 'rejected';
      // The entry's amount is micro-USDC (the approval row's): the transaction gives the parts.
      return withHow(`${who} ${verb} the ${noun} of ${whatTo({}, tx)}`, how);
    }
    case 'guard_rails.set': {
      const applyAt = str(d.apply_at);
      return withHow(`${who} set the guard rails`, how) + (applyAt ? `; the looser part applies at ${applyAt}` : '');
    }
    case 'guard_rails.frozen': {
      const reason = str(d.reason);
      return `${who} froze the wallet${reason ? `: ${reason}` : ''}`;
    }
    case 'wallet.claimed':
      return withHow(`${who} claimed the wallet`, how);
    case 'export.created':
      return `${who} exported its key share for a backup`;
    case 'export.revoked':
      return withHow(`${who} revoked a key-share export`, how);
    case 'api_key.rotated': {
      const n = Array.isArray(d.revoked_exports) ? d.revoked_exports.length : 0;
      return withHow(`${who} rotated the agent's API key`, how) + (n > 0 ? ` (${n} export${n === 1 ? '' : 's'} revoked)` : '');
    }
    case 'recovery.enrollment_started':
      return withHow(`${who} started enrolling a recovery kit`, how);
    case 'recovery.enrolled': {
      const fp = str(d.fingerprint);
      return withHow(`${who} enrolled a recovery kit`, how) + (fp ? ` (fingerprint ${fp})` : '');
    }
    case 'recovery.sweep_announced': {
      const to = str(d.to_address);
      const at = str(d.executes_at);
      return withHow(`${who} announced a sweep of the whole balance${to ? ` to ${to}` : ''}`, how) + (at ? `, signable from ${at}` : '');
    }
    case 'recovery.sweep_cancelled':
      return withHow(`${who} cancelled the announced sweep`, how);
    case 'recovery.sweep_signed': {
      const amount = micro(d.amount);
      return withHow(`${who} signed the sweep${amount !== null ? ` of ${amountFeeTotal({ amount, fee: 0n, setup_fee: 0n })}` : ''}`, how);
    }
    case 'fund_request.declined':
    case 'fund_request.fulfilled': {
      const amount = micro(d.amount);
      const asked = str(d.requested_for);
      const what = `the agent's request for ${amount !== null ? `${formatUsdc(amount)} USDC` : 'money'}${asked ? ` (${asked})` : ''}`;
      const reason = str(d.reason);
      const verb = e.kind === 'fund_request.declined' ? 'declined' : 'marked as fulfilled';
      return withHow(`${who} ${verb} ${what}`, how) + (reason ? `: ${reason}` : '');
    }
    case 'key.refreshed':
      return `${who} refreshed the wallet's key shares`;
    case 'key_refresh.allowed':
      return withHow(`${who} allowed a refresh of the key shares`, how);
    case 'x402.sign_in': {
      const domain = str(d.domain);
      return `${who} signed in${domain ? ` to ${domain}` : ''} to reuse an x402 purchase`;
    }
    case 'owner.passkey_added': {
      const name = str(d.name);
      return withHow(`${who} added the passkey${name ? ` “${name}”` : ''}`, how);
    }
    case 'owner.passkey_removed': {
      const name = str(d.name) ?? (str(d.credential_id) ? names.passkeys?.get(str(d.credential_id)!) : undefined);
      return withHow(`${who} removed the passkey${name ? ` “${name}”` : ''}`, how);
    }
    case 'owner.passkeys_carried': {
      const n = Array.isArray(d.keys) ? d.keys.length : 0;
      return `${who} brought ${plural(n, 'passkey')} to this wallet on claiming it: ${n === 1 ? 'it signs' : 'they sign'} its decisions too`;
    }
    case 'owner.passkey_reset_started': {
      const at = str(d.effective_at);
      return withHow(`${who} started a reset of the passkeys`, how) + (at ? `: every passkey is removed at ${at} unless one cancels it` : '');
    }
    case 'owner.passkey_reset_cancelled':
      return withHow(`${who} cancelled the passkey reset`, how);
    case 'owner.passkeys_reset': {
      const n = Array.isArray(d.removed) ? d.removed.length : typeof d.removed === 'number' ? d.removed : null;
      return `The passkey reset took effect: ${n === null ? 'every passkey' : plural(n, 'passkey')} of the owner removed; mailed links alone decide again`;
    }
    case 'owner.token_minted': {
      const label = str(d.label);
      return withHow(`${who} minted the owner API token${label ? ` “${label}”` : ''}`, how);
    }
    case 'restore.approval_unrecoverable':
      return `${who} withdrew an approval lost in a restore: the owner decides again`;
    case 'restore.recovered_from_chain':
      return `${who} recovered a ${noun} from the chain after a restore`;
    default:
      return withHow(`${who}: ${lower(e.kind.replace(/[._]/g, ' '))}`, how);
  }
}
