/** `agent-wallet withdraw AMOUNT ADDRESS --reason R`, `withdraw confirm WD_ID`, `withdraw get WD_ID`. */
import { randomUUID } from 'node:crypto';
import { recordIntent } from '../client/custody.ts';
import { pinsOf, updatePins } from '../client/pins.ts';
import { confirmSignSubmit, intentOf } from '../client/sign.ts';
import { parseUsdc } from '../domain/money.ts';
import { saver } from './custody-commands.ts';
import { commandFlags, profileClient, type CliContext } from './context.ts';
import { EXIT, printData, progress } from './output.ts';
import { UsageError } from './usage.ts';

const USAGE = 'usage: agent-wallet withdraw AMOUNT ADDRESS --reason R [--idempotency-key K] | withdraw confirm WD_ID [--accept-fees] | withdraw get WD_ID';

export const WITHDRAW_COMMANDS: Record<string, (ctx: CliContext) => Promise<number>> = {
  withdraw: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { reason: 'string', 'idempotency-key': 'string', 'accept-fees': 'boolean' });
    const { profile, api } = profileClient(ctx);
    const save = saver(ctx);
    const [sub, id] = positional;
    if ((sub === 'confirm' || sub === 'get') && positional.length === 2) {
      const w = await api.call<Record<string, any>>('bot', 'get_withdrawal', { withdrawal_id: id });
      if (sub === 'get') {
        printData(ctx, w);
        return EXIT.ok;
      }
      // The amount and address the agent gave to withdraw (recorded then); otherwise its ceiling.
      const done = await confirmSignSubmit(api, profile, w.transaction_id, { confirmAction: 'confirm_withdrawal', acceptNewFees: flags['accept-fees'], save, progress: (s) => progress(ctx, s) });
      printData(ctx, { withdrawal_id: id, ...done }, `Withdrawal ${done.status}.`);
      return done.status === 'completed' || done.status === 'pending' ? EXIT.ok : EXIT.error;
    }
    if (positional.length !== 2 || !flags.reason) throw new UsageError(USAGE);
    const amount = parseUsdc(positional[0]);
    if (!amount.ok) throw new UsageError(`amount ${positional[0]} ${amount.reason}`);
    await pinsOf(api, profile, save);
    const idempotencyKey = flags['idempotency-key'] ?? randomUUID();
    const w = await api.call<Record<string, any>>('bot', 'withdraw', { amount: positional[0], to_address: positional[1], reason: flags.reason }, { idempotencyKey });
    if (w.transaction_id) {
      updatePins(profile, save, (p) => {
        recordIntent(p, w.transaction_id, intentOf({ amount: amount.micro, recipientAddress: positional[1]! }), new Date());
      });
    }
    printData(ctx, w, w.status === 'awaiting_approval' ? `Withdrawal requested; the owner must approve it, then run: agent-wallet withdraw confirm ${w.withdrawal_id}` : `Withdrawal ${w.status}.`);
    return w.status === 'awaiting_approval' ? EXIT.awaitingApproval : w.status === 'rejected' ? EXIT.error : EXIT.ok;
  },
};
