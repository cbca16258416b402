/**
 * The owner + agent sweep with no daemon (DESIGN §4.1): the operator is gone, so the agent's share
 * (identifier 1, in its profile) and the owner's (identifier 3, in the kit) sign together on one
 * machine — FROST over {1, 3} — a transfer of the wallet's whole USDC balance to the address the
 * owner names, the fee paid by a keypair the owner supplies (the wallet holds no SOL). It talks to a
 * Solana RPC only, never to the daemon. Everything is checked before anything is signed.
 */
import { getBase58Decoder, isAddress, type Address } from '@solana/kit';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { decodeSecretState } from '../frost/codec.ts';
import { ed25519Sign } from '../frost/native-ed25519.ts';
import { commit } from '../frost/party.ts';
import { RepairError, recoveryAggregate, recoverySignShare } from '../frost/recovery-share.ts';
import { Secret } from '../frost/secret.ts';
import type { KeyPackage } from '../frost/types.ts';
import { ChainRejectedError } from '../solana/errors.ts';
import type { ChainPort } from '../solana/port.ts';
import { assembleSignedTransaction, buildUsdcTransfer, transactionSignature } from '../solana/transfer.ts';
import type { ProfileData } from './profile.ts';
import { openKit, type RecoveryKit } from './recovery-kit.ts';
import { SWEEP_MEMO } from '../contract/recovery-enroll.ts';

/** How long to wait for the sweep to be confirmed, re-sending the same bytes meanwhile. */
const CONFIRM_TIMEOUT_MS = 60_000;
const RESEND_MS = 2_000;

export interface OfflineSweep {
  signature: string;
  wallet: string;
  to: string;
  amount: bigint;
  fee_payer: string;
}

/**
 * Checks that the kit and the profile are two shares of one key, as it is now; returns both key
 * packages. A kit that does not sign with the profile is refused with what is wrong: its key is
 * not this wallet's at all (another wallet's kit, relabelled), or it is this wallet's key with the
 * shares from before a refresh (C0, the group key, stays; C1 moves).
 */
export function recoveryPair(profile: ProfileData, kit: RecoveryKit, passphrase: string): { agent: Secret<KeyPackage>; owner: Secret<KeyPackage> } {
  if (kit.wallet_id !== profile.wallet_id || kit.address !== profile.address) {
    throw new RepairError('key', `the kit is for wallet ${kit.wallet_id} (${kit.address}), not this profile's ${profile.wallet_id} (${profile.address})`);
  }
  const agent = new Secret(decodeSecretState(Buffer.from(profile.key_package, 'base64')) as KeyPackage);
  const commitments = agent.reveal().public.commitments.map((c) => bytesToHex(c));
  const kitCommitments = kit.commitments.map((c) => String(c).toLowerCase());
  if (kitCommitments[0] !== commitments[0]) {
    throw new RepairError(
      'key',
      `the kit's public key is not this wallet's: it is the key of ${addressOfKey(kitCommitments[0])}, not of ${profile.address}, so it was never a kit of this wallet (its wallet id and address were changed to this wallet's). Nothing was signed or sent; use the kit enrolled for ${profile.wallet_id}`,
    );
  }
  // Opening checks the kit's share against its own commitment: past this, it is a share of this wallet's key.
  const owner = openKit(kit, passphrase);
  if (kitCommitments.join() !== commitments.join()) {
    throw new RepairError('key', "the kit is this wallet's, made before its key was refreshed: the refresh replaced every share, so it no longer signs with this profile; enroll again (agent-wallet owner recovery start)");
  }
  return { agent, owner };
}

/** The address of a group key in a kit's hex, or the hex itself when it is not a 32-byte key. */
function addressOfKey(hex: string | undefined): string {
  return hex && /^[0-9a-f]{64}$/.test(hex) ? getBase58Decoder().decode(hexToBytes(hex)) : `"${hex ?? ''}"`;
}

/** Signs and sends the sweep; resolves once the cluster confirmed it. */
export async function offlineSweep(p: {
  profile: ProfileData;
  kit: RecoveryKit;
  passphrase: string;
  to: string;
  mint: Address;
  feePayer: { address: Address; keypairBytes: Uint8Array };
  chain: ChainPort;
  progress?: (step: string) => void;
}): Promise<OfflineSweep> {
  const progress = p.progress ?? (() => {});
  const wallet = p.profile.address as Address;
  if (!isAddress(p.to)) throw new RepairError('key', `--to ${p.to} is not a Solana address`);
  if (p.to === wallet) throw new RepairError('key', '--to is the wallet itself: name the address the balance goes to');
  if (p.feePayer.address === wallet) throw new RepairError('key', 'the fee payer must be a key of your own, not the wallet');
  const { agent, owner } = recoveryPair(p.profile, p.kit, p.passphrase);
  // Without this, an RPC of another cluster (or a wrong --mint) would read as an empty wallet.
  if (!(await p.chain.accountExists(p.mint))) {
    throw new RepairError('key', `the USDC mint ${p.mint} is not on the cluster behind --rpc: point --rpc at the wallet's network (${p.profile.network}) or pass that network's USDC --mint`);
  }
  progress(`reading the USDC balance of ${wallet}`);
  const amount = await p.chain.getTokenBalance(wallet, p.mint);
  if (amount <= 0n) throw new RepairError('key', `the wallet ${wallet} holds no USDC (mint ${p.mint}): nothing to sweep`);
  const to = p.to as Address;
  const blockhash = await p.chain.getLatestBlockhash();
  const { messageBytes } = await buildUsdcTransfer({
    wallet,
    mint: p.mint,
    recipientOwner: to,
    amount,
    fee: 0n,
    treasuryOwner: to,
    feePayer: p.feePayer.address,
    createRecipientAta: !(await p.chain.tokenAccountExists(to, p.mint)),
    memo: SWEEP_MEMO,
    blockhash,
  });
  progress('signing with the agent share and the kit (FROST, identifiers 1 and 3)');
  const rounds = [agent, owner].map((key) => ({ key, ...commit(key) }));
  const list = rounds.map((r) => r.commitments);
  const shares = Object.fromEntries(rounds.map((r) => [r.key.reveal().secret.identifier, recoverySignShare(r.key, r.nonces, list, messageBytes)]));
  const walletSignature = recoveryAggregate(agent.reveal().public, list, messageBytes, shares);
  const wire = assembleSignedTransaction(messageBytes, { [wallet]: walletSignature, [p.feePayer.address]: ed25519Sign(messageBytes, p.feePayer.keypairBytes) });
  const signature = transactionSignature(wire);
  progress(`sending ${signature}`);
  await send(p.chain, wire);
  const deadline = Date.now() + CONFIRM_TIMEOUT_MS;
  let sentAt = Date.now();
  for (;;) {
    const [status] = await p.chain.getSignatureStatuses([signature]);
    if (status && status.confirmationStatus !== 'processed') {
      if (status.err !== null) throw new RepairError('key', `the sweep ${signature} failed on chain: ${JSON.stringify(status.err)}`);
      return { signature, wallet, to, amount, fee_payer: p.feePayer.address };
    }
    if (Date.now() > deadline) throw new RepairError('key', `the sweep ${signature} was not confirmed within ${CONFIRM_TIMEOUT_MS / 1000} s; look it up before trying again (its blockhash expires in about a minute)`);
    if (Date.now() - sentAt >= RESEND_MS) {
      sentAt = Date.now();
      await send(p.chain, wire);
    }
    await Bun.sleep(250);
  }
}

/** Sends the bytes; a cluster that already has them is fine, any other refusal is the sweep's. */
async function send(chain: ChainPort, wire: Uint8Array): Promise<void> {
  try {
    await chain.sendRawTransaction(wire);
  } catch (err) {
    if (err instanceof ChainRejectedError && err.kind === 'already_processed') return;
    if (err instanceof ChainRejectedError) throw new RepairError('key', `Solana refused the sweep: ${err.reason} (is the fee payer funded with SOL?)`);
    throw err;
  }
}
