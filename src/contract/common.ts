/**
 * TypeBox building blocks shared by every action schema. The schemas are the single source of
 * truth: the dispatcher validates with them, the OpenAPI document and the MCP tool schemas are
 * generated from them, and the client imports them.
 */
import { Type as T, type TSchema } from '@sinclair/typebox';
import { idPattern, type IdKind } from './ids.ts';

/** A USDC amount: a decimal number or string, at most 6 decimals; range checked by the handler. */
export const Amount = T.Union([T.Number(), T.String({ maxLength: 32 })], {
  description: 'USDC amount as a decimal number or string, > 0, at most 6 decimal places, e.g. 12.5',
});

/** A prefixed identifier of the given kind. */
export const Id = (kind: IdKind, description?: string) => T.String({ pattern: idPattern(kind), description });

const SOLANA_ADDRESS = '^[1-9A-HJ-NP-Za-km-z]{32,44}$';

/** A base58 Solana address (32 bytes). */
export const SolanaAddress = T.String({ pattern: SOLANA_ADDRESS, description: 'Solana address (base58)' });

/** Whether `s` has the shape of a Solana address (SolanaAddress's pattern, for text that is not a params object). */
export const isSolanaAddress = (s: string): boolean => new RegExp(SOLANA_ADDRESS).test(s);

export const Limit = T.Integer({ minimum: 1, maximum: 100, default: 20, description: 'page size, default 20, max 100' });
export const Offset = T.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'items to skip, default 0' });

/** An object schema that refuses unknown properties (DESIGN §3). */
export const Params = <P extends Record<string, TSchema>>(props: P, description?: string) =>
  T.Object(props, { additionalProperties: false, description });

/** Parameters of an action that takes none. */
export const NoParams = Params({});
