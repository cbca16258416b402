/**
 * Contract of the agent's view of the owner's rails and decisions (SPEC "Bot actions, history,
 * guard rails, events"; DESIGN §7 "Push, not polling").
 */
import { Type as T } from '@sinclair/typebox';
import { Id, NoParams, Params } from './common.ts';
import { action } from './action.ts';

/** Longest wait of a long poll. */
export const MAX_WAIT_SECONDS = 30;

export const APPROVALS = {
  my_limits: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: NoParams,
    summary: "The owner's guard rails as they apply to this wallet now, a pending loosening with its time, what is used and what remains of each budget.",
  }),
  freeze: action({
    endpoint: 'bot',
    auth: 'bot',
    allowUnclaimed: true,
    params: Params({ reason: T.Optional(T.String({ minLength: 1, maxLength: 500, description: 'why: shown to the owner in the audit log and the events' })) }),
    summary:
      "Freezes this wallet at once (the frozen guard rail): every payment, withdrawal and x402 purchase is refused from now on, signing included. For an agent that suspects it is being steered. Only the owner unfreezes.",
  }),
  pending_approvals: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: NoParams,
    summary: 'Everything of this wallet waiting for the owner, newest first.',
  }),
  approval_status: action({
    endpoint: 'bot',
    auth: 'bot',
    readOnly: true,
    params: Params({
      approval_id: Id('approval', 'from pay or withdraw (status awaiting_approval)'),
      wait_seconds: T.Optional(
        T.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS, description: `long poll: wait up to this many seconds (≤ ${MAX_WAIT_SECONDS}) for the owner's decision` }),
      ),
    }),
    summary: 'Status of an approval; with wait_seconds, answers as soon as the owner decides (long poll).',
  }),
};
