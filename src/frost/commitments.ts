/**
 * The commitment list of a signing session (RFC 9591 §5.2 `commitment_list`). For our 2-of-2 key it
 * MUST be exactly {agent, server}: no third identifier, no duplicate, no missing party, and every
 * commitment a valid element (§3.1) — checked before any share is produced, verified or aggregated.
 */
import { elementProblem } from './group.ts';
import { AGENT_ID, participantName, SERVER_ID } from './ids.ts';
import { FrostProtocolError } from './errors.ts';
import type { SigningCommitments } from './types.ts';

/** Throws `FrostProtocolError` unless `list` is exactly one valid commitment pair from each party. */
export function assertCommitmentList(list: readonly SigningCommitments[]): void {
  if (!Array.isArray(list) || list.length !== 2) throw new FrostProtocolError('commitment list must hold exactly the agent and the server');
  const ids = new Set(list.map((c) => c.identifier));
  if (ids.size !== 2 || !ids.has(AGENT_ID) || !ids.has(SERVER_ID)) {
    throw new FrostProtocolError('commitment list must hold exactly the agent and the server, once each');
  }
  for (const c of list) {
    for (const field of ['hiding', 'binding'] as const) {
      const problem = elementProblem(c[field]);
      if (problem !== null) throw new FrostProtocolError(`the ${participantName(c.identifier)}'s ${field} commitment ${problem}`);
    }
  }
}

/** Builds the checked commitment list of a signing session, in RFC 9591 order (ascending identifier). */
export function commitmentList(agent: SigningCommitments, server: SigningCommitments): SigningCommitments[] {
  if (agent.identifier !== AGENT_ID) throw new FrostProtocolError("the agent's commitments carry another identifier");
  if (server.identifier !== SERVER_ID) throw new FrostProtocolError("the server's commitments carry another identifier");
  const list = [agent, server];
  assertCommitmentList(list);
  return list;
}
