/**
 * A box for secret material (key shares, DKG state, signing nonces) that never prints its content.
 * Every printing path — JSON.stringify, String()/template literals, console.log and Bun.inspect —
 * yields `<redacted>`; the value is reachable only through an explicit `reveal()`.
 * Models frost-core's `SigningNonces` / `SecretPackage`, whose Debug impls hide the bytes.
 */

const REDACTED = '<redacted>';

/** Holds one secret value; see the module comment for what it guarantees. */
export class Secret<T> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  /** Returns the secret itself (not a copy): mutations by noble (nonce zeroing, DKG steps) are kept. */
  reveal(): T {
    return this.#value;
  }

  toJSON(): string {
    return REDACTED;
  }

  toString(): string {
    return REDACTED;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return REDACTED;
  }
}
