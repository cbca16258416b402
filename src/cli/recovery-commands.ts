/**
 * The agent's side of the owner's recovery share:
 *   recovery enroll CODE   run the agent's half of an enrollment the owner started on their machine
 *   recovery refresh       refresh both key shares (same address): a recovery kit made before stops working
 */
import { agentEnroll } from '../client/recovery-enroll.ts';
import { refreshKey } from '../client/recovery-refresh.ts';
import { saver } from './custody-commands.ts';
import { commandFlags, profileClient, type CliContext } from './context.ts';
import { EXIT, printData, progress } from './output.ts';

type Command = (ctx: CliContext) => Promise<number>;

export const RECOVERY_COMMANDS: Record<string, Command> = {
  enroll: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const { profile, api } = profileClient(ctx);
    progress(ctx, 'splitting this share and exchanging pieces with the daemon; the report goes to the owner sealed to the key in the code');
    const done = await agentEnroll(api, profile, positional[0]!);
    printData(ctx, done, "The agent's half is done. The owner finishes on their machine: agent-wallet owner recovery finish " + done.enrollment_id);
    return EXIT.ok;
  },

  refresh: async (ctx) => {
    const { profile, api } = profileClient(ctx);
    progress(ctx, 'refreshing both key shares with the daemon (the address stays)');
    const done = await refreshKey(api, profile, saver(ctx));
    const exports = done.revoked_exports.length > 0 ? ` and its ${done.revoked_exports.length} earlier .wlt export(s) are revoked` : '';
    printData(
      ctx,
      done,
      `Key shares refreshed; the address ${done.address} is unchanged. The bot API key was rotated (the new one is stored in this profile only)${exports}: copies of this profile made before the refresh no longer work (backups, other machines, a running MCP server: restart it, make new exports). Any recovery kit made before no longer works: the owner enrolls again (agent-wallet owner recovery start).`,
    );
    return EXIT.ok;
  },
};
