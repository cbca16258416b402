/** `agent-wallet withdraw AMOUNT ADDRESS --reason R`, `withdraw confirm WD_ID`, `withdraw get WD_ID`. */
import { randomUUID } from 'node:crypto';
import { recordIntent, type Intent } from '../client/custody.ts';
import { CustodyCheckError } from '../client/errors.ts';
import { pinsOf, updatePins } from '../client/pins.ts';
import { confirmSignSubmit, expectationOf, intentOf, type Expectation } from '../client/sign.ts';
import { saver } from './custody-commands.ts';
import { commandFlags, profileClient, type CliContext } from './context.ts';
import { EXIT, printData, progress } from './output.ts';
import { UsageError, usdcArg } from './usage.ts';

const USAGE = 'usage: agent-wallet withdraw AMOUNT ADDRESS --reason R [--idempotency-key K] | withdraw confirm WD_ID [--to ADDRESS --amount AMOUNT] [--accept-fees] | withdraw get WD_ID';

/**
 * What `withdraw confirm WD_ID` holds the server's message to: the amount and address this profile
 * recorded for that withdrawal id, and the transaction the server made for it then — never the
 * server's word now on which transaction the withdrawal is. Without a record, only the address and
 * amount the agent passes now (--to, --amount); with neither, nothing is signed.
 */
function withdrawalExpectation(recorded: Intent | undefined, withdrawalId: string, serverTx: string, flags: { to?: string; amount?: string }): Expectation {
  const given = flags.to !== undefined && flags.amount !== undefined ? { amount: usdcArg('--amount', flags.amount), recipientAddress: flags.to } : null;
  if ((flags.to === undefined) !== (flags.amount === undefined)) throw new UsageError('--to and --amount go together: the address and the amount you withdraw');
  if (!recorded) {
    if (given) return given;
    throw new CustodyCheckError(`refusing to sign: this profile has no record of withdrawal ${withdrawalId}, so nothing holds the server to an address and an amount`, {
      howToFix: `If you asked for this withdrawal (from another machine or profile), confirm it with the address and amount you asked for: agent-wallet withdraw confirm ${withdrawalId} --to ADDRESS --amount AMOUNT.`,
      details: { withdrawal_id: withdrawalId },
    });
  }
  if (recorded.transaction_id !== undefined && recorded.transaction_id !== serverTx) {
    throw new CustodyCheckError(`refusing to sign: the server names transaction ${serverTx} for withdrawal ${withdrawalId}, but it made ${recorded.transaction_id} for it when you asked`, {
      howToFix: 'Do not retry: a server that swaps the transaction behind a withdrawal may be compromised. Report it to the operator.',
      details: { withdrawal_id: withdrawalId, recorded_transaction_id: recorded.transaction_id, offered_transaction_id: serverTx },
    });
  }
  const expect = expectationOf(recorded);
  if (given && (given.amount !== expect.amount || given.recipientAddress !== expect.recipientAddress)) {
    throw new CustodyCheckError(`refusing to sign: --to/--amount differ from the address and amount this profile recorded for withdrawal ${withdrawalId}`, {
      howToFix: 'Confirm without --to/--amount to hold it to what you asked, or ask for a new withdrawal.',
      details: { withdrawal_id: withdrawalId },
    });
  }
  return expect;
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
      const expect = withdrawalExpectation((await pinsOf(api, profile, save)).intents[id!], id!, w.transaction_id, flags);
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
    if (w.transaction_id) {
      const intent = intentOf({ amount, recipientAddress: positional[1]! });
      updatePins(profile, save, (p) => {
        recordIntent(p, w.transaction_id, intent, new Date());
        // Under the withdrawal id too: `withdraw confirm WD_ID` holds the server to this transaction and these words.
        if (w.withdrawal_id) recordIntent(p, w.withdrawal_id, { ...intent, transaction_id: w.transaction_id }, new Date());
      });
    }
    printData(ctx, w, w.status === 'awaiting_approval' ? `Withdrawal requested; the owner must approve it, then run: agent-wallet withdraw confirm ${w.withdrawal_id}` : `Withdrawal ${w.status}.`);
    return w.status === 'awaiting_approval' ? EXIT.awaitingApproval : w.status === 'rejected' ? EXIT.error : EXIT.ok;
  },
};
