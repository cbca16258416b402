/** Usage errors (exit code 2, DESIGN §11) found after commander parsed the command line. */
import { parseUsdc } from '../domain/money.ts';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Parses a port flag value; throws UsageError. */
export function parsePort(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`${flag} must be a port number from 0 to 65535, got "${value}"`);
  return Number(value);
}

/** A USDC amount from the command line, in micro-USDC: malformed, negative, over-precise or zero is a usage error. */
export function usdcArg(what: string, value: unknown): bigint {
  const p = parseUsdc(value);
  if (!p.ok) throw new UsageError(`${what} ${String(value)} ${p.reason}`);
  if (p.micro === 0n) throw new UsageError(`${what} ${String(value)} must be greater than 0`);
  return p.micro;
}
