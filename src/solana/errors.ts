/**
 * The two ways the chain can fail a caller, kept apart because they call for opposite reactions:
 * an unavailable chain is retried later (the API answers SERVICE_UNAVAILABLE), a rejected
 * transaction is not retried as is. Neither uses a property named `code` (Elysia's `onError`
 * reads `error.code`).
 */

/** The RPC endpoint could not be reached or answered with a server fault (network error, timeout, HTTP 5xx/429). */
export class ChainUnavailableError extends Error {
  override readonly name = 'ChainUnavailableError';
  /** True when the provider's rate limit (HTTP 429) or our own request budget stopped the call, not an outage. */
  readonly rateLimited: boolean;
  /** How long the caller should wait before trying again. */
  readonly retryAfterSeconds: number;

  constructor(message: string, opts: ErrorOptions & { rateLimited?: boolean; retryAfterSeconds?: number } = {}) {
    super(message, opts);
    this.rateLimited = opts.rateLimited ?? false;
    this.retryAfterSeconds = opts.retryAfterSeconds ?? 5;
  }
}

/** Why the cluster refused a transaction. */
export type ChainRejectionKind =
  | 'blockhash_not_found'
  | 'signature_failure'
  | 'already_processed'
  | 'simulation_failed'
  | 'other';

/**
 * The cluster refused a transaction (preflight failure, unknown blockhash, bad signature).
 * `already_processed` means these exact bytes were executed before: the caller MUST treat it as
 * "look up the signature", never as a failure of the payment.
 */
export class ChainRejectedError extends Error {
  override readonly name = 'ChainRejectedError';

  constructor(
    readonly kind: ChainRejectionKind,
    readonly reason: string,
    readonly logs: readonly string[] = [],
  ) {
    super(reason);
  }
}

/** Bytes that are not a transaction message this service can reason about (malformed, lookup tables, v1). */
export class MessageDecodeError extends Error {
  override readonly name = 'MessageDecodeError';
}
