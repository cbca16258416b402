/**
 * The errors of the FROST building blocks. Messages name what failed and never contain secret
 * material (shares, nonces, keys); public values such as identifiers may appear.
 */
import type { Identifier } from './ids.ts';

/** A package received over the wire is malformed; `field` is the JSON path of the offending value. */
export class FrostWireError extends Error {
  override readonly name = 'FrostWireError';
  readonly field: string;

  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

/**
 * A protocol step refused its input: a bad proof of knowledge, a round-2 share that fails its
 * commitments, a commitment list that is not exactly {agent, server}, a used nonce, or shares that
 * do not aggregate. `culprits` names the participants proven to have misbehaved, when known.
 */
export class FrostProtocolError extends Error {
  override readonly name = 'FrostProtocolError';
  readonly culprits: readonly Identifier[];

  constructor(message: string, options?: { cause?: unknown; culprits?: readonly Identifier[] }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.culprits = options?.culprits ?? [];
  }
}

/** Sealed data cannot be opened: wrong key, wrong associated data, tampering or an unknown format. */
export class SealError extends Error {
  override readonly name = 'SealError';
}
