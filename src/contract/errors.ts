/**
 * Error codes of the wire contract (SPEC "Errors" plus the DESIGN §3 extensions), their HTTP
 * statuses and default texts. Imported by the server and the client alike.
 */

export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'WALLET_NOT_CLAIMED',
  'NOT_FOUND',
  'INSUFFICIENT_FUNDS',
  'INVALID_RECIPIENT',
  'INVALID_STATUS',
  'AWAITING_APPROVAL',
  'ALREADY_COMPLETED',
  'TRANSACTION_EXPIRED',
  'INTERNAL_ERROR',
  // DESIGN §3 extensions
  'IDEMPOTENCY_CONFLICT',
  'RATE_LIMITED',
  'SERVICE_UNAVAILABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

interface ErrorDefaults {
  status: number;
  message: string;
  howToFix: string;
}

export const ERROR_DEFAULTS: Record<ErrorCode, ErrorDefaults> = {
  VALIDATION_ERROR: { status: 400, message: 'The request is not valid.', howToFix: 'Correct the named field and send the request again.' },
  UNAUTHORIZED: {
    status: 401,
    message: 'Missing or invalid API key.',
    howToFix: 'Send the header "Authorization: Bearer wallet_bot_…" with the API key returned by register (merchants: wallet_merchant_…).',
  },
  WALLET_NOT_CLAIMED: {
    status: 403,
    message: 'This wallet has not been claimed by its owner yet.',
    howToFix: 'Ask your human owner to open the claim URL and enter the claim code; until then only info, update_owner and update_name work.',
  },
  NOT_FOUND: { status: 404, message: 'Not found.', howToFix: 'Check the identifier; objects of other wallets are never visible.' },
  INSUFFICIENT_FUNDS: { status: 402, message: 'The wallet balance does not cover the amount plus fees.', howToFix: 'Deposit USDC to the wallet address or ask the owner with request_funds.' },
  INVALID_RECIPIENT: { status: 422, message: 'The recipient is not valid.', howToFix: 'Check the username or Solana address with lookup.' },
  INVALID_STATUS: { status: 409, message: 'The object is not in a state that allows this action.', howToFix: 'Read its current status and follow next_step.' },
  AWAITING_APPROVAL: { status: 409, message: 'The owner has not approved this yet.', howToFix: 'Wait for the owner: poll approval_status with wait_seconds.' },
  ALREADY_COMPLETED: { status: 409, message: 'This has already completed.', howToFix: 'Nothing to do: read its result instead of repeating it.' },
  TRANSACTION_EXPIRED: { status: 410, message: 'The transaction expired before it was confirmed.', howToFix: 'Create a new payment.' },
  INTERNAL_ERROR: { status: 500, message: 'Internal error.', howToFix: 'Retry later; if it persists, give the operator the X-Request-Id of this response.' },
  IDEMPOTENCY_CONFLICT: {
    status: 422,
    message: 'This idempotency key was already used with different parameters.',
    howToFix: 'Use a new X-Idempotency-Key for a new request, or resend the original parameters.',
  },
  RATE_LIMITED: { status: 429, message: 'Too many requests.', howToFix: 'Wait for the number of seconds in the Retry-After header, then retry.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'A dependency is unavailable.', howToFix: 'Retry after the number of seconds in Retry-After; nothing was changed.' },
};

/** The failure envelope of SPEC "Errors". */
export interface ErrorEnvelope {
  success: false;
  error: { code: ErrorCode; message: string; how_to_fix: string; [extra: string]: unknown };
}

/** The success envelope. */
export interface SuccessEnvelope<T = unknown> {
  success: true;
  data: T;
}
