/**
 * What confirming a withdrawal holds the server's message to (issue 24.1), for the CLI (`withdraw
 * confirm WD_ID`) and the MCP server (`confirm_withdrawal`): the address and amount this profile
 * recorded for the id the agent confirms — and, for a withdrawal id, the transaction the server
 * made for it when the agent asked — never the server's word now on which transaction a
 * withdrawal is. Without a record, only an address and amount the agent gives now hold it; with
 * neither, nothing is signed. Pure.
 */
import { recordIntent, type Pins } from './custody.ts';
import { CustodyCheckError } from './errors.ts';
import { expectationOf, intentOf, type Expectation } from './sign.ts';
import { formatUsdc } from '../domain/money.ts';

/** The address and amount of a withdrawal, in the agent's own words. */
export interface WithdrawalWords {
  amount: bigint;
  recipientAddress: string;
}

/** Records what the agent asked for a withdrawal under its transaction id and its withdrawal id (the latter with that transaction). */
export function recordWithdrawal(pins: Pins, created: { transaction_id: string; withdrawal_id?: unknown }, words: WithdrawalWords, now: Date): void {
  const intent = intentOf(words);
  recordIntent(pins, created.transaction_id, intent, now);
  if (typeof created.withdrawal_id === 'string') recordIntent(pins, created.withdrawal_id, { ...intent, transaction_id: created.transaction_id }, now);
}

/**
 * The expectation for confirming `id` (a withdrawal id or its transaction id), whose transaction
 * the server names as `transactionId`; `recorded` is this profile's intent under `id`, `given`
 * the address and amount the agent passed now (or null).
 */
export function withdrawalExpectation(recorded: Pins['intents'][string] | undefined, id: string, transactionId: string, given: WithdrawalWords | null): Expectation {
  if (!recorded) {
    if (given) return { amount: given.amount, recipientAddress: given.recipientAddress };
    throw new CustodyCheckError(`refusing to sign: this profile has no record of withdrawal ${id}, so nothing holds the server to an address and an amount`, {
      howToFix: `If you asked for this withdrawal (from another machine or profile), confirm it with the address and amount you asked for: agent-wallet withdraw confirm WD_ID --to ADDRESS --amount AMOUNT (MCP: confirm_withdrawal with to_address and amount).`,
      details: { withdrawal_id: id },
    });
  }
  if (recorded.transaction_id !== undefined && recorded.transaction_id !== transactionId) {
    throw new CustodyCheckError(`refusing to sign: the server names transaction ${transactionId} for withdrawal ${id}, but it made ${recorded.transaction_id} for it when you asked`, {
      howToFix: 'Do not retry: a server that swaps the transaction behind a withdrawal may be compromised. Report it to the operator.',
      details: { withdrawal_id: id, recorded_transaction_id: recorded.transaction_id, offered_transaction_id: transactionId },
    });
  }
  const expect = expectationOf(recorded);
  if (given && (given.amount !== expect.amount || given.recipientAddress !== expect.recipientAddress)) {
    throw new CustodyCheckError(`refusing to sign: the address and amount you gave (${formatUsdc(given.amount)} USDC to ${given.recipientAddress}) differ from those this profile recorded for withdrawal ${id}`, {
      howToFix: 'Confirm without an address and amount to hold it to what you asked, or ask for a new withdrawal.',
      details: { withdrawal_id: id },
    });
  }
  return expect;
}
