/**
 * The owner + daemon sweep, the owner's side (DESIGN §4.1): announce it (the agent's key is revoked,
 * a delay starts), and after the delay sign the daemon's message with the kit — once the message is
 * checked to move the wallet's USDC to the address the owner named and nothing else. The daemon may
 * lie: a message that pays anyone else, carries another instruction, or makes the wallet pay a fee
 * gets no share.
 */
import type { Address } from '@solana/kit';
import type { ApiClient } from './api.ts';
import { CustodyCheckError } from './errors.ts';
import { openKit, type RecoveryKit } from './recovery-kit.ts';
import { commit } from '../frost/party.ts';
import { OWNER_ID, recoverySignShare } from '../frost/recovery-share.ts';
import { SERVER_ID } from '../frost/ids.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../frost/wire.ts';
import { usdcAta } from '../solana/ata.ts';
import { decodeMessage } from '../solana/decode.ts';
import { parseUsdc } from '../domain/money.ts';

export interface SweepView {
  sweep_id: string;
  to_address: string;
  status: 'waiting' | 'cancelled' | 'signing';
  executes_at: string;
  /** The daemon would open a signing round now: its delay is over and nothing is signed yet. */
  signable: boolean;
  transaction: { transaction_id: string; status: string; amount: number; signature: string | null } | null;
}

/** The wallet's sweep in progress (not cancelled), if any. */
export async function liveSweepOf(api: ApiClient, walletId: string): Promise<SweepView | null> {
  const { items } = await api.call<{ items: SweepView[] }>('owner', 'recovery_sweeps', { wallet_id: walletId });
  return items.find((s) => s.status !== 'cancelled' && s.transaction?.status !== 'completed') ?? null;
}

/** Refuses a sweep message that does anything but move the wallet's USDC to `to`, the fee paid by someone else. */
async function checkSweepMessage(message: Uint8Array, wallet: Address, to: Address, amount: bigint): Promise<void> {
  const m = decodeMessage(message);
  const refuse = (why: string) => {
    throw new CustodyCheckError(`refusing to sign the sweep: ${why}`, { howToFix: 'Do not retry: the daemon proposed something other than the sweep you announced. Use agent-wallet recover with the agent instead.' });
  };
  if (m.feePayer === wallet) refuse('the wallet would pay the fee');
  const transfers = m.instructions.filter((i) => i.kind === 'transferChecked');
  if (transfers.length !== 1) refuse(`${transfers.length} transfers in the message`);
  const t = transfers[0]!;
  if (t.kind !== 'transferChecked') return;
  if (t.authority !== wallet || t.source !== (await usdcAta(wallet, t.mint))) refuse('the transfer is not from the wallet');
  if (t.destination !== (await usdcAta(to, t.mint))) refuse(`the transfer pays ${t.destination}, not ${to}`);
  if (t.amount !== amount) refuse(`the transfer moves ${t.amount} base units, not the ${amount} the daemon announced`);
  for (const i of m.instructions) {
    if (i.kind === 'unknown') refuse(`an instruction of program ${i.programId}`);
    if (i.kind === 'createAtaIdempotent' && (i.owner !== to || i.payer === wallet)) refuse('an account creation other than the destination, paid by the fee payer');
  }
}

export async function announceSweep(api: ApiClient, walletId: string, to: string): Promise<SweepView & { next_step: string }> {
  return api.call('owner', 'recovery_sweep_start', { wallet_id: walletId, to_address: to });
}

/** Signs an announced sweep after its delay with the kit; resolves to the transaction's outcome. */
export async function signSweep(api: ApiClient, kit: RecoveryKit, passphrase: string, sweep: SweepView, progress: (s: string) => void = () => {}): Promise<Record<string, unknown>> {
  const key = openKit(kit, passphrase);
  const { nonces, commitments } = commit(key);
  const round = await api.call<{ sign_session_id: string; server_commitments: unknown; message: string; amount: number; to_address: string }>('owner', 'recovery_sweep_sign', {
    sweep_id: sweep.sweep_id,
    commitments: encodeCommitments(commitments),
  });
  if (round.to_address !== sweep.to_address) throw new CustodyCheckError(`refusing to sign the sweep: the daemon now names ${round.to_address}, not ${sweep.to_address}`);
  const message = new Uint8Array(Buffer.from(round.message, 'base64'));
  const amount = parseUsdc(round.amount);
  if (!amount.ok) throw new CustodyCheckError(`refusing to sign the sweep: the daemon's amount ${String(round.amount)} ${amount.reason}`);
  await checkSweepMessage(message, kit.address as Address, sweep.to_address as Address, amount.micro);
  progress(`signing the sweep of ${round.amount} USDC to ${sweep.to_address} with the kit`);
  const list = [commitments, decodeCommitments(round.server_commitments, SERVER_ID)];
  const share = recoverySignShare(key, nonces, list, message);
  return api.call('owner', 'recovery_sweep_complete', { sweep_id: sweep.sweep_id, sign_session_id: round.sign_session_id, signature_share: encodeSignatureShare(OWNER_ID, share) });
}
