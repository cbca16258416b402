import { ERROR_DEFAULTS, type ErrorCode, type ErrorEnvelope } from './contract/errors.ts';

/**
 * The one error type of the daemon, thrown from any layer and turned into the envelope by the
 * API. The property holding the code is `errorCode`, never `code`: Elysia reads `error.code`
 * itself and would misroute the error.
 */
export class AppError extends Error {
  readonly errorCode: ErrorCode;
  readonly status: number;
  readonly howToFix: string;
  /** Extra fields merged into the error object of the envelope (e.g. claim_url, shortfall). */
  readonly details: Record<string, unknown>;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers: Record<string, string>;

  constructor(
    errorCode: ErrorCode,
    message?: string,
    opts: { howToFix?: string; status?: number; details?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    const defaults = ERROR_DEFAULTS[errorCode];
    super(message ?? defaults.message);
    this.name = 'AppError';
    this.errorCode = errorCode;
    this.status = opts.status ?? defaults.status;
    this.howToFix = opts.howToFix ?? defaults.howToFix;
    this.details = opts.details ?? {};
    this.headers = opts.headers ?? {};
  }

  toEnvelope(): ErrorEnvelope {
    return { success: false, error: { ...this.details, code: this.errorCode, message: this.message, how_to_fix: this.howToFix } };
  }
}

/** A VALIDATION_ERROR naming the field (a JSON pointer such as "/amount") and what is wrong with it. */
export function invalid(field: string, problem: string, howToFix?: string): AppError {
  return new AppError('VALIDATION_ERROR', `${field}: ${problem}`, { howToFix: howToFix ?? `Fix ${field} and send the request again.`, details: { field } });
}
