/**
 * The agent side of a signing round (DESIGN §4). Before it releases its share the client decodes
 * the server's message and refuses — nothing signed — unless it is exactly what the AGENT asked
 * for, never merely what the server answered (issue 19): the amount it stated (or, when the amount
 * is not its own — a paylink, a payment confirmed without the intent this client made — at most its
 * ceiling), the address it named or the address pinned for the username, a fee no larger than the
 * pinned schedule gives, and the mint, treasury and fee payer pinned at registration.
 */
import type { Address } from '@solana/kit';
import { decodeSecretState } from '../frost/codec.ts';
import { commitmentList } from '../frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../frost/ids.ts';
import { commit, signShare } from '../frost/party.ts';
import { Secret } from '../frost/secret.ts';
import type { KeyPackage, SigningCommitments, SigningNonces } from '../frost/types.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare, type CommitmentsWire, type SignatureShareWire } from '../frost/wire.ts';
import { checkTransfer, decodeOrReason, type DecodedMessage } from '../solana/decode.ts';
import { formatUsdc, parseUsdc } from '../domain/money.ts';
import { ApiError, type ApiClient } from './api.ts';
import { checkCeiling, checkChain, checkPin, maxFee, micro as microOf, recordPaid, type Intent, type Pins } from './custody.ts';
import { CustodyCheckError } from './errors.ts';
import { acceptNewFees, pinsOf, updatePins, type SaveProfile } from './pins.ts';
import type { ProfileData } from './profile.ts';

/** What the agent asked for; anything else is refused. */
export interface Expectation {
  /** The amount the agent stated; absent: the server's amount, at most `maxAmount`. */
  amount?: bigint;
  /** The agent's ceiling for an amount it did not state; default: the profile's. */
  maxAmount?: bigint;
  /** The address the agent named: the message must pay exactly it. */
  recipientAddress?: string;
  /** The username the agent named: pinned on first payment, held to the pin after. */
  username?: string;
  /** The agent accepts a merchant's new payout address (moves the pin). */
  acceptNewAddress?: boolean;
  /** Solana Pay reference keys the transfer must carry (a paylink's); default: those the server's summary names. */
  references?: string[];
  /** When this client created the intent (local clock): a wallet pinned before then has its token account. */
  createdAt?: string;
}

export interface ConfirmResponse {
  transaction_id: string;
  status: string;
  message: string;
  signed: boolean;
  summary: { to?: string | null; to_address: string; amount: number; fee: number; usdc_mint: string; treasury: string; fee_payer: string; network: string; references?: string[] };
}

function micro(value: number, what: string): bigint {
  const p = parseUsdc(value);
  if (!p.ok) throw new CustodyCheckError(`the server sent an unreadable ${what}`);
  return p.micro;
}

/** The expectation the agent recorded when it created the intent (src/client/custody.ts Intent). */
export function expectationOf(intent: Intent): Expectation {
  return {
    ...(intent.amount !== undefined ? { amount: microOf(intent.amount) } : {}),
    ...(intent.max_amount !== undefined ? { maxAmount: microOf(intent.max_amount) } : {}),
    ...(intent.to_address !== undefined ? { recipientAddress: intent.to_address } : {}),
    ...(intent.username !== undefined ? { username: intent.username } : {}),
    ...(intent.accept_new_address ? { acceptNewAddress: true } : {}),
    ...(intent.created_at !== undefined ? { createdAt: intent.created_at } : {}),
  };
}

/** The intent to record for `expect`, so a later confirm (after the owner's approval) holds the server to it. */
export function intentOf(expect: Expectation): Intent {
  return {
    ...(expect.amount !== undefined ? { amount: formatUsdc(expect.amount) } : {}),
    ...(expect.maxAmount !== undefined ? { max_amount: formatUsdc(expect.maxAmount) } : {}),
    ...(expect.recipientAddress !== undefined ? { to_address: expect.recipientAddress } : {}),
    ...(expect.username !== undefined ? { username: expect.username } : {}),
    ...(expect.acceptNewAddress ? { accept_new_address: true } : {}),
    ...(expect.createdAt !== undefined ? { created_at: expect.createdAt } : {}),
  };
}

function createsAccount(message: DecodedMessage | string): boolean {
  // An undecodable message is refused by checkTransfer with its reason.
  return typeof message !== 'string' && message.instructions.some((ix) => ix.kind === 'createAtaIdempotent');
}

/** The payee a username pin applies to: the one the agent named, else (paylinks, unknown intents) the one the server names. */
function payeeName(c: ConfirmResponse, expect: Expectation): string | null {
  if (expect.username) return expect.username;
  if (expect.recipientAddress || !c.summary.to || c.summary.to.length >= 32) return null;
  return c.summary.to.toLowerCase();
}

/**
 * Refuses (throws CustodyCheckError) unless the message is exactly what the agent asked for
 * under its pins. Returns the pin to record once the share is sent, if any.
 */
export async function checkMessage(
  profile: ProfileData,
  pins: Pins,
  c: ConfirmResponse,
  expect: Expectation,
  kind: 'payment' | 'withdrawal',
): Promise<{ username: string; address: string } | null> {
  checkChain(pins, { mint: c.summary.usdc_mint, treasury: c.summary.treasury, fee_payer: c.summary.fee_payer });
  const name = kind === 'payment' ? payeeName(c, expect) : null;
  if (name) checkPin(pins.payees[name], name, c.summary.to_address, expect.acceptNewAddress === true);
  const offered = micro(c.summary.amount, 'amount');
  if (expect.amount !== undefined && offered !== expect.amount) {
    throw new CustodyCheckError(`refusing to sign: the server answers a ${kind} of ${formatUsdc(offered)} USDC; you asked for ${formatUsdc(expect.amount)} USDC`, {
      details: { asked_amount: formatUsdc(expect.amount), offered_amount: formatUsdc(offered) },
    });
  }
  const amount = expect.amount ?? offered;
  if (expect.amount === undefined) checkCeiling(pins, amount, expect.maxAmount, kind === 'withdrawal' ? 'the withdrawal' : 'the payment');
  // Decoded once, for the fee allowance and the check; the bytes signed later are c.message itself.
  const message = decodeOrReason(new Uint8Array(Buffer.from(c.message, 'base64')));
  // A wallet paid before this intent was created has its token account: that payment created it, and
  // closing it needs the wallet's own (FROST) signature. Anywhere else the message's creation counts.
  const pin = name ? pins.payees[name] : undefined;
  const accountExists = pin?.kind === 'wallet' && pin.address === c.summary.to_address && expect.createdAt !== undefined && pin.first_paid < expect.createdAt;
  const allowed = maxFee(pins.fees, kind, amount, !accountExists && createsAccount(message));
  const fee = micro(c.summary.fee, 'fee');
  if (fee > allowed) {
    throw new CustodyCheckError(`refusing to sign: the server charges a fee of ${formatUsdc(fee)} USDC; the fee schedule pinned at ${pins.pinned_at} gives at most ${formatUsdc(allowed)} USDC for this ${kind}`, {
      howToFix: 'Do not retry as is. Compare the pinned and the published schedule with "agent-wallet fees"; if you accept the new one, retry with --accept-fees (MCP: accept_new_fees: true), which pins it.',
      details: { fee: formatUsdc(fee), max_fee: formatUsdc(allowed), pinned_fees: pins.fees },
    });
  }
  const result = await checkTransfer(message, {
    wallet: profile.address as Address,
    mint: pins.mint as Address,
    recipientOwner: (expect.recipientAddress ?? c.summary.to_address) as Address,
    amount,
    maxFee: allowed,
    treasuryOwner: pins.treasury as Address,
    feePayer: pins.fee_payer as Address,
    // Reference keys are read-only, non-signing accounts: they move nothing, so the server's word is enough.
    references: (expect.references ?? c.summary.references ?? []) as Address[],
  });
  if (!result.ok) throw new CustodyCheckError(`refusing to sign: ${result.reason}`);
  return name && (expect.username || pins.payees[name]) ? { username: name, address: c.summary.to_address } : null;
}

/** A first payment to a username pins it with its kind from lookup, which must agree with the payment. */
async function pinKind(api: ApiClient, pins: Pins, payee: { username: string; address: string }): Promise<'wallet' | 'merchant'> {
  const known = pins.payees[payee.username];
  if (known) return known.kind === 'merchant' ? 'merchant' : 'wallet';
  const found = await api.call<{ found: boolean; type: string | null; address: string | null }>('bot', 'lookup', { username: payee.username });
  if (!found.found || found.address !== payee.address) {
    throw new CustodyCheckError(`refusing to sign: the server pays ${payee.address} for @${payee.username} but its lookup answers ${String(found.address)}`, {
      details: { username: payee.username, offered_address: payee.address, lookup_address: found.address },
    });
  }
  return found.type === 'merchant' ? 'merchant' : 'wallet';
}

export interface SignOptions {
  /** confirm_payment (default) or confirm_withdrawal. */
  confirmAction?: string;
  /** What the agent asked for; default: the intent this profile recorded for the transaction, else nothing (its ceiling and pins only). */
  expect?: Expectation;
  /** The agent accepts the fee schedule the server publishes now. */
  acceptNewFees?: boolean;
  /** Writes the profile after its pins changed (CLI and MCP rewrite the profile file). */
  save?: SaveProfile;
  progress?: (step: string) => void;
  wait?: boolean;
  /**
   * The intent was created by this same command (pay): when the client refuses to sign it, it is
   * cancelled, so a refused payment holds no budget, paylink or account-setup reservation.
   */
  cancelOnRefusal?: boolean;
  /** Set on the one new round after the server dropped a message that another payment's account creation made stale. */
  rebuilt?: boolean;
}

/** Cancels an intent the client refused to sign; true when it is cancelled (a failure leaves it to expire). */
async function cancelRefused(api: ApiClient, transactionId: string): Promise<boolean> {
  try {
    await api.call('bot', 'cancel_payment', { transaction_id: transactionId });
    return true;
  } catch {
    return false;
  }
}

/**
 * The agent's round one: fresh nonces whose commitments travel with pay / confirm_payment /
 * confirm_withdrawal. The nonces sign at most one message; an answer that opens no signing session
 * (the payment waits for the owner, a replayed pay) leaves them unused, and they are dropped.
 */
export class AgentRound {
  readonly commitments: CommitmentsWire;
  readonly #key: Secret<KeyPackage>;
  readonly #own: SigningCommitments;
  #nonces: Secret<SigningNonces> | null;

  constructor(profile: ProfileData) {
    this.#key = new Secret(decodeSecretState(Buffer.from(profile.key_package, 'base64')) as KeyPackage);
    const { nonces, commitments } = commit(this.#key);
    this.#nonces = nonces;
    this.#own = commitments;
    this.commitments = encodeCommitments(commitments);
  }

  /** The agent's share of `message` for the server's commitments; the nonces are spent by it. */
  share(serverCommitments: unknown, message: Uint8Array): SignatureShareWire {
    const nonces = this.#nonces;
    if (!nonces) throw new Error('these nonces already signed: a FROST nonce pair is used once');
    this.#nonces = null;
    return encodeSignatureShare(AGENT_ID, signShare(this.#key, nonces, commitmentList(this.#own, decodeCommitments(serverCommitments, SERVER_ID)), message));
  }
}

/** What pay / confirm_* answer with the agent's commitments: the confirm fields and, when signing can go ahead, the round. */
export interface RoundAnswer extends ConfirmResponse {
  sign_session_id?: string;
  server_commitments?: unknown;
}

/**
 * confirm (with the agent's commitments) → check → share → frost_sign_complete with submit and
 * wait: two round trips. Returns the final transaction view.
 */
export async function confirmSignSubmit(api: ApiClient, profile: ProfileData, transactionId: string, opts: SignOptions = {}): Promise<Record<string, unknown>> {
  const pins = opts.acceptNewFees ? await acceptNewFees(api, profile, opts.save) : await pinsOf(api, profile, opts.save);
  const round = new AgentRound(profile);
  const answer = await api.call<RoundAnswer>('bot', opts.confirmAction ?? 'confirm_payment', { transaction_id: transactionId, commitments: round.commitments });
  return signRound(api, profile, pins, transactionId, answer, round, opts);
}

/**
 * Finishes a pay that carried `round`'s commitments: signs the round its answer opened, or — an
 * answer with none (a replayed pay returns the intent alone; a message that could not be built
 * then) — confirms with fresh nonces.
 */
export async function completePay(api: ApiClient, profile: ProfileData, intent: Record<string, unknown>, round: AgentRound, opts: SignOptions = {}): Promise<Record<string, unknown>> {
  const transactionId = String(intent.transaction_id);
  if (typeof intent.sign_session_id !== 'string') return confirmSignSubmit(api, profile, transactionId, opts);
  const pins = opts.acceptNewFees ? await acceptNewFees(api, profile, opts.save) : await pinsOf(api, profile, opts.save);
  return signRound(api, profile, pins, transactionId, intent as unknown as RoundAnswer, round, opts);
}

/** Check → share → frost_sign_complete + submit; an already signed transaction is re-sent, never signed again. */
async function signRound(api: ApiClient, profile: ProfileData, pins: Pins, transactionId: string, answer: RoundAnswer, round: AgentRound, opts: SignOptions): Promise<Record<string, unknown>> {
  const progress = opts.progress ?? (() => {});
  const wait = opts.wait ?? true;
  if (answer.signed) {
    progress('submitted to Solana');
    return api.call<Record<string, unknown>>('bot', 'submit_signed_tx', { transaction_id: transactionId, wait });
  }
  if (typeof answer.sign_session_id !== 'string') throw new CustodyCheckError('the server answered without a signing session; refusing to continue');
  const recorded = pins.intents[transactionId];
  const expect = opts.expect ?? (recorded ? expectationOf(recorded) : {});
  const kind = opts.confirmAction === 'confirm_withdrawal' ? 'withdrawal' : 'payment';
  // The check runs before the agent's share exists: a refused message gets nothing.
  const refused = async (err: unknown): Promise<never> => {
    // The refusal names the transaction: the agent may cancel it, or confirm it with other words.
    if (!(err instanceof CustodyCheckError)) throw err;
    err.details.transaction_id = transactionId;
    if (!opts.cancelOnRefusal || !(await cancelRefused(api, transactionId))) throw err;
    throw new CustodyCheckError(err.message, {
      howToFix: `${err.howToFix} This payment was cancelled (it holds nothing): where a flag is named, run the same pay command again with it, not confirm.`,
      details: { ...err.details, cancelled: true },
    });
  };
  const { payee, payeeKind } = await (async () => {
    const checkedPayee = await checkMessage(profile, pins, answer, expect, kind);
    return { payee: checkedPayee, payeeKind: checkedPayee ? await pinKind(api, pins, checkedPayee) : null };
  })().catch(refused);
  progress('signing (FROST round with the server)');
  const share = round.share(answer.server_commitments, new Uint8Array(Buffer.from(answer.message, 'base64')));
  let done: Record<string, unknown>;
  try {
    done = await api.call<Record<string, unknown>>('bot', 'frost_sign_complete', { transaction_id: transactionId, sign_session_id: answer.sign_session_id, signature_share: share, submit: true, wait });
  } catch (err) {
    // Nothing was signed: the server dropped this message because another payment creates the
    // recipient's account. One new round over the message it builds now (without the creation and
    // its fee), checked like the first.
    if (err instanceof ApiError && err.details.rebuild === true && !opts.rebuilt) return confirmSignSubmit(api, profile, transactionId, { ...opts, rebuilt: true });
    throw err;
  }
  updatePins(profile, opts.save, (p) => {
    // Only a payment that landed counts as paid: the fee check assumes a paid wallet's token account exists.
    if (payee && payeeKind && done.status === 'completed') recordPaid(p.payees, payee.username, payee.address, payeeKind, new Date());
    delete p.intents[transactionId];
  });
  progress('submitted to Solana');
  return done;
}
