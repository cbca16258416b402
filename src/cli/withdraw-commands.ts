/** `agent-wallet withdraw AMOUNT ADDRESS --reason R`, `withdraw confirm WD_ID`, `withdraw get WD_ID`. */
import { randomUUID } from 'node:crypto';
import { pinsOf, updatePins } from '../client/pins.ts';
import { confirmSignSubmit } from '../client/sign.ts';
import { recordWithdrawal, withdrawalExpectation, type WithdrawalWords } from '../client/withdrawals.ts';
import { saver } from './custody-commands.ts';
import { commandFlags, profileClient, type CliContext } from './context.ts';
import { EXIT, printData, progress } from './output.ts';
import { UsageError, usdcArg } from './usage.ts';

const USAGE = 'usage: agent-wallet withdraw AMOUNT ADDRESS --reason R [--idempotency-key K] | withdraw confirm WD_ID [--to ADDRESS --amount AMOUNT] [--accept-fees] | withdraw get WD_ID';

/** The address and amount the agent passed to `withdraw confirm` (--to, --amount), or null. */
function givenWords(flags: { to?: string; amount?: string }): WithdrawalWords | null {
  if ((flags.to === undefined) !== (flags.amount === undefined)) throw new UsageError('--to and --amount go together: the address and the amount you withdraw');
  return flags.to !== undefined && flags.amount !== undefined ? { amount: usdcArg('--amount', flags.amount), recipientAddress: flags.to } : null;
}

export const WITHDRAW_COMMANDS: Record<string, (ctx: CliContext) => Promise<number>> = {
  withdraw: async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { reason: 'string', 'idempotency-key': 'string', 'accept-fees': 'boolean', to: 'string', amount: 'string' });
    const [sub, id] = positional;
    const byId = (sub === 'confirm' || sub === 'get') && positional.length === 2;
    if (!byId && (positional.length !== 2 || !flags.reason)) throw new UsageError(USAGE);
    // A malformed amount is a usage error before anything else is read.
    const amount = byId ? 0n : usdcArg('amount', positional[0]);
    const { profile, api } = profileClient(ctx);
    const save = saver(ctx);
    if (byId) {
      const w = await api.call<Record<string, any>>('bot', 'get_withdrawal', { withdrawal_id: id });
      if (sub === 'get') {
        printData(ctx, w);
        return EXIT.ok;
      }
      // Held to what this profile recorded for the withdrawal id, never to the server's word on its transaction.
      const expect = withdrawalExpectation((await pinsOf(api, profile, save)).intents[id!], id!, w.transaction_id, givenWords(flags));
      const done = await confirmSignSubmit(api, profile, w.transaction_id, { confirmAction: 'confirm_withdrawal', expect, acceptNewFees: flags['accept-fees'], save, progress: (s) => progress(ctx, s) });
      updatePins(profile, save, (p) => {
        delete p.intents[id!];
      });
      printData(ctx, { withdrawal_id: id, ...done }, `Withdrawal ${done.status}.`);
      return done.status === 'completed' || done.status === 'pending' ? EXIT.ok : EXIT.error;
    }
    await pinsOf(api, profile, save);
    const idempotencyKey = flags['idempotency-key'] ?? randomUUID();
    const w = await api.call<Record<string, any>>('bot', 'withdraw', { amount: positional[0], to_address: positional[1], reason: flags.reason }, { idempotencyKey });
    if (typeof w.transaction_id === 'string') {
      const created = { withdrawal_id: w.withdrawal_id, transaction_id: w.transaction_id };
      updatePins(profile, save, (p) => {
        recordWithdrawal(p, created, { amount, recipientAddress: positional[1]! }, new Date());
      });
    }
    printData(ctx, w, w.status === 'awaiting_approval' ? `Withdrawal requested; the owner must approve it, then run: agent-wallet withdraw confirm ${w.withdrawal_id}` : `Withdrawal ${w.status}.`);
    return w.status === 'awaiting_approval' ? EXIT.awaitingApproval : w.status === 'rejected' ? EXIT.error : EXIT.ok;
  },
};
