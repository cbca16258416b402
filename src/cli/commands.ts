/** Every agent command of the command-line client, by name. */
import type { CliContext } from './context.ts';
import { PAYMENT_COMMANDS } from './payment-commands.ts';
import { WALLET_COMMANDS } from './wallet-commands.ts';
import { WITHDRAW_COMMANDS } from './withdraw-commands.ts';
import { X402_COMMANDS } from './x402-commands.ts';
import { EARNING_COMMANDS } from './earning-commands.ts';
import { CUSTODY_COMMANDS } from './custody-commands.ts';

export const CLIENT_COMMANDS: Record<string, (ctx: CliContext) => Promise<number>> = { ...WALLET_COMMANDS, ...PAYMENT_COMMANDS, ...WITHDRAW_COMMANDS, ...X402_COMMANDS, ...EARNING_COMMANDS, ...CUSTODY_COMMANDS };
