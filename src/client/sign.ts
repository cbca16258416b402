/**
 * The agent side of a signing round (DESIGN §4). Before it releases its share the client decodes
 * the server's message and refuses — nothing signed — unless it is exactly the intent it asked
 * for: allowed programs only, the USDC mint of its network, the recipient's token account, the
 * amount, a fee no larger than quoted going to the treasury, and the fee payer. Custody rests on
 * both sides checking.
 */
import type { Address } from '@solana/kit';
import { decodeSecretState } from '../frost/codec.ts';
import { commitmentList } from '../frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../frost/ids.ts';
import { commit, signShare } from '../frost/party.ts';
import { Secret } from '../frost/secret.ts';
import type { KeyPackage } from '../frost/types.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../frost/wire.ts';
import { NETWORKS, type NetworkName } from '../solana/networks.ts';
import { checkTransfer } from '../solana/decode.ts';
import { parseUsdc } from '../domain/money.ts';
import type { ApiClient } from './api.ts';
import type { ProfileData } from './profile.ts';
import { CustodyCheckError } from './register.ts';

/** What the agent expects the transfer to do; anything else is refused. */
export interface Expectation {
  recipientAddress: string;
  amount: bigint;
  /** The most the agent agreed to pay in fees (platform + account setup). */
  maxFee: bigint;
  /** Solana Pay reference keys the transfer must carry (a paylink's); default: those the server's summary names. */
  references?: string[];
}

export interface ConfirmResponse {
  transaction_id: string;
  status: string;
  message: string;
  signed: boolean;
  summary: { to_address: string; amount: number; fee: number; usdc_mint: string; treasury: string; fee_payer: string; network: string; references?: string[] };
}

function micro(value: number, what: string): bigint {
  const p = parseUsdc(value);
  if (!p.ok) throw new CustodyCheckError(`the server sent an unreadable ${what}`);
  return p.micro;
}

/** The expectation from the server's own summary, for a payment this client did not create in this process. */
export function expectationFromSummary(c: ConfirmResponse): Expectation {
  return { recipientAddress: c.summary.to_address, amount: micro(c.summary.amount, 'amount'), maxFee: micro(c.summary.fee, 'fee') };
}

/** The USDC mint the agent trusts for its network (the server's word only on a custom network). */
function trustedMint(profile: ProfileData, c: ConfirmResponse): string {
  const known = NETWORKS[profile.network as NetworkName]?.defaultUsdcMint;
  return known ?? c.summary.usdc_mint;
}

/** Refuses (throws CustodyCheckError) unless the message is exactly the expected transfer. */
export async function checkMessage(profile: ProfileData, c: ConfirmResponse, expect: Expectation): Promise<void> {
  const result = await checkTransfer(new Uint8Array(Buffer.from(c.message, 'base64')), {
    wallet: profile.address as Address,
    mint: trustedMint(profile, c) as Address,
    recipientOwner: expect.recipientAddress as Address,
    amount: expect.amount,
    maxFee: expect.maxFee,
    treasuryOwner: c.summary.treasury as Address,
    feePayer: c.summary.fee_payer as Address,
    // Reference keys are read-only, non-signing accounts: they move nothing, so the server's word is enough.
    references: (expect.references ?? c.summary.references ?? []) as Address[],
  });
  if (!result.ok) throw new CustodyCheckError(`refusing to sign: ${result.reason}`);
}

/**
 * confirm → check → frost_sign_init → share → frost_sign_complete → submit_signed_tx (wait).
 * `confirmAction` is confirm_payment or confirm_withdrawal. Returns the final transaction view.
 */
export async function confirmSignSubmit(
  api: ApiClient,
  profile: ProfileData,
  transactionId: string,
  opts: { confirmAction?: string; expect?: Expectation; progress?: (step: string) => void; wait?: boolean } = {},
): Promise<Record<string, unknown>> {
  const progress = opts.progress ?? (() => {});
  const confirmed = await api.call<ConfirmResponse>('bot', opts.confirmAction ?? 'confirm_payment', { transaction_id: transactionId });
  if (!confirmed.signed) {
    await checkMessage(profile, confirmed, opts.expect ?? expectationFromSummary(confirmed));
    progress('signing (FROST round with the server)');
    const key = new Secret(decodeSecretState(Buffer.from(profile.key_package, 'base64')) as KeyPackage);
    const { nonces, commitments } = commit(key);
    const init = await api.call<{ sign_session_id: string; server_commitments: unknown; message: string }>('bot', 'frost_sign_init', {
      transaction_id: transactionId,
      commitments: encodeCommitments(commitments),
    });
    if (init.message !== confirmed.message) throw new CustodyCheckError('the server asked to sign a different message than the one checked; refused');
    const list = commitmentList(commitments, decodeCommitments(init.server_commitments, SERVER_ID));
    const share = signShare(key, nonces, list, new Uint8Array(Buffer.from(confirmed.message, 'base64')));
    await api.call('bot', 'frost_sign_complete', { transaction_id: transactionId, sign_session_id: init.sign_session_id, signature_share: encodeSignatureShare(AGENT_ID, share) });
  }
  progress('submitted to Solana');
  return api.call<Record<string, unknown>>('bot', 'submit_signed_tx', { transaction_id: transactionId, wait: opts.wait ?? true });
}
