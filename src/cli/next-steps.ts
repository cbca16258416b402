/**
 * The next step, said as the command to run: the API's `next_step` names API actions (what an
 * HTTP or MCP caller does next); a CLI user gets the exact agent-wallet command instead.
 */

type Data = Record<string, unknown>;

/** A payment's next command, by its status; null keeps the API's words. */
export function paymentNextStep(tx: Data): string | null {
  const id = String(tx.transaction_id);
  switch (tx.status) {
    case 'pre_approved':
    case 'approved':
      return `agent-wallet confirm ${id}`;
    case 'awaiting_approval':
      return `wait for the owner: agent-wallet approval ${String(tx.approval_id)} --wait 30, then agent-wallet confirm ${id}`;
    case 'pending':
      return 'being sent to Solana: agent-wallet events --wait 30 shows payment.completed';
    default:
      return null;
  }
}

/** An approval's next command: confirm once approved, wait while pending. */
export function approvalNextStep(a: Data): string | null {
  const confirm: Record<string, string> = {
    payment: `agent-wallet confirm ${String(a.transaction_id)}`,
    withdrawal: 'agent-wallet withdraw confirm WD_ID (the withdrawal id withdraw printed)',
    x402: 'agent-wallet x402 resume FETCH_ID (the fetch id x402 fetch printed)',
  };
  if (a.status === 'approved') return `the owner approved it: ${confirm[String(a.subject_type)] ?? confirm.payment}`;
  if (a.status === 'pending') return `wait for the owner: agent-wallet approval ${String(a.approval_id)} --wait 30`;
  return null;
}

/** An open paylink's next commands: share it, send it, and how another agent pays it. */
export function paylinkNextStep(p: Data, prefix: string): string | null {
  if (p.status !== 'open') return null;
  const id = String(p.request_id);
  return `share the url, or send it: ${prefix} request send ${id} --email ADDRESS | --wallet USERNAME; another agent pays it with: agent-wallet pay --request ${id}`;
}

/** After register: the claim for the owner, and what works until then, as commands; the key is already in the profile. */
export function registerNextStep(r: Data, profilePath: string): string | null {
  if (r.status !== 'unclaimed') return null;
  return `give your owner the claim URL ${String(r.claim_url)} and the claim code ${String(r.claim_code)}; until they claim it only agent-wallet info, rename and set-owner work (agent-wallet info shows the status). The API key is saved in ${profilePath}.`;
}

/** `data` with its next_step replaced by `step` (when there is one). */
export function withNextStep<T extends Data>(data: T, step: string | null): T {
  return step === null ? data : { ...data, next_step: step };
}
