/** Parameter checks shared by the action groups and the services they call (earning). */
import { invalid } from './errors.ts';
import { parseUsdc, toUsdcNumber } from './domain/money.ts';
import type { Services } from './services.ts';

/** A USDC amount parameter: > 0, at most 6 decimals, at most limits.max_amount. */
export function amountParam(services: Services, field: string, value: unknown): bigint {
  const parsed = parseUsdc(value);
  if (!parsed.ok) throw invalid(field, parsed.reason, 'Send a decimal USDC amount such as 12.5 (at most 6 decimal places).');
  if (parsed.micro <= 0n) throw invalid(field, 'must be greater than 0');
  if (parsed.micro > services.config.money.maxAmount) throw invalid(field, `must be at most ${toUsdcNumber(services.config.money.maxAmount)} USDC (limits.max_amount)`);
  return parsed.micro;
}
