/**
 * The shape of one action in the wire contract: which endpoint serves it, who may call it,
 * its parameter schema and how clients should treat it. Handlers live in src/actions and are
 * attached to these entries; nothing here imports server or client code.
 */
import type { TSchema } from '@sinclair/typebox';

export type Endpoint = 'bot' | 'merchant' | 'public' | 'owner';
export type AuthKind = 'none' | 'bot' | 'merchant' | 'owner';

export interface ContractAction<P extends TSchema = TSchema> {
  endpoint: Endpoint;
  auth: AuthKind;
  params: P;
  summary: string;
  /** Bot actions only: callable on an unclaimed wallet (SPEC: info, update_owner, update_name). */
  allowUnclaimed?: boolean;
  /** Honours X-Idempotency-Key / Idempotency-Key (DESIGN §3). */
  idempotent?: boolean;
  /** Params left out of the idempotency request hash: a retry may send new ones (fresh signing commitments). */
  idempotencyIgnores?: readonly string[];
  /** Changes nothing: safe to retry, served on GET for /public, MCP readOnlyHint. */
  readOnly?: boolean;
  /** Moves money or cannot be undone: MCP destructiveHint. */
  destructive?: boolean;
}

/** Declares a contract entry with its literal types preserved. */
export function action<P extends TSchema>(def: ContractAction<P>): ContractAction<P> {
  return def;
}
