/**
 * Client-side failures and their one code table, shared by the CLI (--json) and the MCP server so
 * both give the same code and how_to_fix for the same refusal.
 */
import { ApiError, ConnectionError } from './api.ts';
import { ProfileError } from './profile.ts';
import { WalletFileError } from './wallet-file.ts';
import { KitError } from './recovery-kit.ts';
import { SealError } from '../frost/errors.ts';
import { RepairError } from '../frost/recovery-share.ts';

/** The server's answer or message is not what the agent asked for, or not what it pinned: nothing was signed. */
export class CustodyCheckError extends Error {
  override readonly name = 'CustodyCheckError';
  readonly howToFix: string;
  readonly details: Record<string, unknown>;
  constructor(message: string, opts: { howToFix?: string; details?: Record<string, unknown> } = {}) {
    super(message);
    this.howToFix = opts.howToFix ?? CLIENT_ERRORS.CLIENT_CUSTODY_CHECK;
    this.details = opts.details ?? {};
  }
}

/** Client-side codes and what to do about each (the agent reads how_to_fix). */
export const CLIENT_ERRORS = {
  CLIENT_CUSTODY_CHECK: 'Nothing was signed: the server proposed something other than what you asked for or pinned. Do not retry; report it to the operator.',
  CLIENT_USAGE: 'Fix the command line: run agent-wallet help for the usage.',
  CLIENT_PROFILE: 'Register a wallet (agent-wallet register / MCP register) or import one; otherwise check AGENT_WALLET_HOME, AGENT_WALLET_PROFILE (--profile) and AGENT_WALLET_PASSPHRASE.',
  CLIENT_CONNECTION: 'Start the daemon (agent-wallet serve) or fix --server / AGENT_WALLET_URL (it must end in /v1), then retry; a payment is safe to retry with the same idempotency key.',
  CLIENT_WALLET_FILE: 'Use the .wlt file exactly as export (or MCP wallet_export) wrote it.',
  CLIENT_FILE: 'Check the file path (absolute, or relative to the profile home) and its permissions.',
  CLIENT_RECOVERY:
    "Nothing was written or sent: a recovery step refused what it was given. The message names the side that is wrong (the agent, the daemon, or the kit); start a new enrollment (agent-wallet owner recovery start), check the kit file and its passphrase, or enroll again after a refresh.",
  CLIENT_INTERNAL: 'An unexpected error in the client; see its stderr. Retrying a payment is safe with the same idempotency key.',
} as const;

export type ClientErrorCode = keyof typeof CLIENT_ERRORS;

export interface ErrorEnvelope {
  success: false;
  error: { code: string; message: string; how_to_fix: string } & Record<string, unknown>;
}

/**
 * The envelope of any failure: the API's own, or a client-side one. `classify` lets a caller name
 * its own error classes (the CLI's usage errors, the MCP server's tool errors) before the shared ones.
 */
export function clientEnvelope(err: unknown, classify: (err: unknown) => { code: string; howToFix: string } | null = () => null): ErrorEnvelope {
  if (err instanceof ApiError) return err.envelope() as ErrorEnvelope;
  const message = (err as Error)?.message ?? String(err);
  const local = (code: string, howToFix: string, details: Record<string, unknown> = {}): ErrorEnvelope => ({ success: false, error: { ...details, code, message, how_to_fix: howToFix } });
  const own = classify(err);
  if (own) return local(own.code, own.howToFix);
  if (err instanceof CustodyCheckError) return local('CLIENT_CUSTODY_CHECK', err.howToFix, err.details);
  if (err instanceof ProfileError) return local('CLIENT_PROFILE', CLIENT_ERRORS.CLIENT_PROFILE);
  if (err instanceof ConnectionError) return local('CLIENT_CONNECTION', CLIENT_ERRORS.CLIENT_CONNECTION);
  if (err instanceof WalletFileError) return local('CLIENT_WALLET_FILE', CLIENT_ERRORS.CLIENT_WALLET_FILE);
  if (err instanceof RepairError) return local('CLIENT_RECOVERY', CLIENT_ERRORS.CLIENT_RECOVERY, { culprit: err.culprit });
  if (err instanceof KitError || err instanceof SealError) return local('CLIENT_RECOVERY', CLIENT_ERRORS.CLIENT_RECOVERY);
  if (typeof (err as { code?: unknown })?.code === 'string' && (err as { syscall?: unknown }).syscall) return local('CLIENT_FILE', CLIENT_ERRORS.CLIENT_FILE);
  return local('CLIENT_INTERNAL', CLIENT_ERRORS.CLIENT_INTERNAL);
}
