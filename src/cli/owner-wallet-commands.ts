/**
 * The owner's wallet commands on the owner API, with an owner token (as the recovery commands):
 *   owner rotate-key WALLET_ID         a new bot API key (rotate_api_key): the old key and the exports are refused
 *   owner fund-requests [WALLET_ID]    the agents' fund requests (fund_requests), newest first
 *   owner fund-requests decline FR_ID [--reason TEXT]   decline one (resolve_fund_request); the agent reads the reason
 *   owner paylinks [WALLET_ID]         the agents' paylinks (paylinks), newest first, each with its checkout page
 */
import { commandFlags, type CliContext } from './context.ts';
import { EXIT, printData } from './output.ts';
import { ownerApi } from './owner-recovery-commands.ts';
import { UsageError } from './usage.ts';

type Command = (ctx: CliContext) => Promise<number>;

function intFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,7}$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${value}"`);
  return Number(value);
}

export const OWNER_WALLET_COMMANDS: Record<string, Command> = {
  'rotate-key': async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const rotated = await ownerApi(ctx).call<{ wallet_id: string; api_key: string; rotated_at: string; revoked_exports: string[] }>('owner', 'rotate_api_key', { wallet_id: positional[0]! });
    if (ctx.json) {
      printData(ctx, rotated);
      return EXIT.ok;
    }
    const revoked = rotated.revoked_exports.length ? `Exports revoked (they carried the old key): ${rotated.revoked_exports.join(', ')}.` : 'No export was active.';
    ctx.out(
      [
        `New API key of wallet ${rotated.wallet_id}, shown once (the old key is refused from ${rotated.rotated_at}):`,
        '',
        `  ${rotated.api_key}`,
        '',
        "Give it to the agent yourself (not through the service). On the agent's machine, with the key in a file:",
        '',
        '  agent-wallet set-api-key < key.txt        (add --profile NAME for a profile other than "default")',
        '',
        'It checks that the key opens this wallet before storing it; then delete key.txt.',
        revoked,
        '',
      ].join('\n'),
    );
    return EXIT.ok;
  },

  'fund-requests': async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { status: 'string', limit: 'string', offset: 'string' });
    const params = { wallet_id: positional[0], status: flags.status, limit: intFlag('limit', flags.limit), offset: intFlag('offset', flags.offset) };
    const data = await ownerApi(ctx).call('owner', 'fund_requests', JSON.parse(JSON.stringify(params)));
    printData(ctx, data, undefined, ['created_at', 'fund_request_id', 'wallet_name', 'wallet_id', 'status', 'amount', 'reason', 'decline_reason', 'fund_url']);
    return EXIT.ok;
  },

  'fund-requests decline': async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { reason: 'string' });
    const params = { fund_request_id: positional[0]!, decision: 'declined', ...(flags.reason === undefined ? {} : { reason: flags.reason }) };
    const declined = await ownerApi(ctx).call<{ fund_request_id: string; wallet_id: string; amount: number; status: string; decline_reason?: string }>('owner', 'resolve_fund_request', params);
    if (ctx.json) {
      printData(ctx, declined);
      return EXIT.ok;
    }
    const why = declined.decline_reason ? ` with your reason: ${declined.decline_reason}` : ' (no reason given)';
    ctx.out(`Declined fund request ${declined.fund_request_id} of ${declined.amount} USDC (wallet ${declined.wallet_id})${why}.\nThe agent gets a fund_request.declined event.\n`);
    return EXIT.ok;
  },

  paylinks: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { status: 'string', limit: 'string', offset: 'string' });
    const params = { wallet_id: positional[0], status: flags.status, limit: intFlag('limit', flags.limit), offset: intFlag('offset', flags.offset) };
    const data = await ownerApi(ctx).call('owner', 'paylinks', JSON.parse(JSON.stringify(params)));
    printData(ctx, data, undefined, ['created_at', 'request_id', 'wallet_name', 'wallet_id', 'status', 'amount', 'description', 'reference', 'expires_at', 'url']);
    return EXIT.ok;
  },
};
