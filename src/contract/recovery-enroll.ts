/**
 * Contract of the owner's recovery enrollment (DESIGN §4.1). The owner starts it (owner API), the
 * agent's machine runs its half with the enrollment code it got out of band (bot API), the owner's
 * CLI collects both reports and finishes it. Scalars and points travel as lowercase hex, as every
 * FROST value does (src/frost/wire.ts); the agent's report only ever as a box sealed to the owner.
 */
import { Type as T } from '@sinclair/typebox';
import { Id, Params, SolanaAddress } from './common.ts';
import { action } from './action.ts';

const WalletId = Id('wallet', 'one of your wallets (see wallets)');
const EnrollmentId = Id('recoveryEnrollment', 'from recovery_enroll_start (the enrollment code carries it)');
/** A 32-byte scalar or point, lowercase hex. */
const Hex32 = (description: string) => T.String({ pattern: '^[0-9a-f]{64}$', description });

/** The owner's side (owner token). */
export const OWNER_RECOVERY = {
  recovery_enroll_start: action({
    endpoint: 'owner',
    auth: 'owner',
    params: Params({ wallet_id: WalletId }),
    summary:
      "Starts enrolling your recovery share for a wallet (a third share of the same key; the address does not change). Returns the enrollment_id your CLI puts in the enrollment code with a key it made on your machine; an enrollment still in progress for the wallet is cancelled.",
  }),
  recovery_enroll_collect: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({ enrollment_id: EnrollmentId }),
    summary: "Once the agent has run its half: the agent's report sealed to your enrollment key, the daemon's report and the key's public commitment, for your CLI to combine and check.",
  }),
  recovery_enroll_finish: action({
    endpoint: 'owner',
    auth: 'owner',
    params: Params({ enrollment_id: EnrollmentId, fingerprint: T.String({ pattern: '^[0-9A-F]{4}(-[0-9A-F]{4}){4}$', description: "the kit's fingerprint, as your CLI printed it" }) }),
    summary: "Records the enrollment once your CLI has written the kit: the daemon forgets its report and keeps only the fingerprint, which the dashboard shows.",
  }),
  recovery_status: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({ wallet_id: WalletId }),
    summary: 'Whether the wallet has an enrolled recovery kit (its fingerprint and date) and an enrollment in progress. Never the kit.',
  }),
};

/** The agent's side (bot API key). */
export const AGENT_RECOVERY = {
  recovery_enroll_split: action({
    endpoint: 'bot',
    auth: 'bot',
    params: Params({
      enrollment_id: EnrollmentId,
      piece: Hex32("the agent's random piece for the daemon (a scalar)"),
    }),
    summary: "The agent's half of enrolling the owner's recovery share, step 1: its piece for the daemon; the answer is the daemon's piece for the agent. The agent-wallet client does this (recovery enroll CODE).",
  }),
  recovery_enroll_deliver: action({
    endpoint: 'bot',
    auth: 'bot',
    params: Params({
      enrollment_id: EnrollmentId,
      box: T.String({ pattern: '^[A-Za-z0-9+/]+={0,2}$', maxLength: 4096, description: "the agent's report sealed to the owner's enrollment key (base64)" }),
    }),
    summary: "Step 2: the agent's report for the owner, sealed to the key in the enrollment code; the daemon cannot open it.",
  }),
};

/** Refreshing the wallet's key shares (the agent's side; the address does not change). */
export const AGENT_KEY_REFRESH = {
  recovery_refresh_init: action({
    endpoint: 'bot',
    auth: 'bot',
    params: Params({ contribution: Hex32("the agent's random refresh contribution (a non-zero scalar)") }),
    summary:
      "Refreshes both key shares with a zero-constant polynomial from both sides' contributions: same address, new shares, and every recovery kit made before stops working. Answers the daemon's contribution, the refreshed public package and the new bot API key (once; it replaces the current key at the commit); nothing changes until recovery_refresh_commit. The agent-wallet client does this (recovery refresh).",
  }),
  recovery_refresh_commit: action({
    endpoint: 'bot',
    auth: 'bot',
    params: Params({
      refresh_id: Id('keyRefresh', 'from recovery_refresh_init'),
      public_package: T.Object({}, { additionalProperties: true, description: "the refreshed public package as the agent computed it (it must be the daemon's)" }),
      share_proof: T.String({
        pattern: '^[0-9a-f]{128}$',
        description:
          "proof that the caller holds the refreshed agent share: a Schnorr proof R ‖ z (64 bytes, lowercase hex) of the agent's verifying share in the refreshed key, bound to this wallet, refresh_id and group key (src/frost/share-proof.ts); the agent-wallet client makes it",
      }),
    }),
    summary:
      "Makes the refresh the wallet key on the daemon once the agent has stored its refreshed share and new API key, which share_proof proves it holds (the bot API key alone commits nothing): open signing rounds close, every .wlt export is revoked, the old API key is refused, the owner is told the kit must be enrolled again. A repeated commit answers the same, with current: whether the refresh is still the wallet's key.",
  }),
};

/** The owner's consent to a refresh that supersedes the enrolled kit (owner token). */
export const OWNER_KEY_REFRESH = {
  recovery_refresh_allow: action({
    endpoint: 'owner',
    auth: 'owner',
    destructive: true,
    params: Params({ wallet_id: WalletId }),
    summary:
      "Lets the agent refresh the wallet's key shares once within the next hour although that supersedes your enrolled recovery kit (do it when the kit leaked, then enroll again). Without it a refresh is refused while a kit is enrolled, so the agent cannot take your kit away. A frozen wallet is never refreshed.",
  }),
};

/** The memo of every recovery sweep's transfer (the daemon's and the no-daemon one alike). */
export const SWEEP_MEMO = 'agent-wallet recovery sweep';

const SweepId = Id('recoverySweep', 'from recovery_sweep_start');

/** The owner + daemon sweep (the agent's share is lost or the agent is compromised). */
export const OWNER_SWEEP = {
  recovery_sweep_start: action({
    endpoint: 'owner',
    auth: 'owner',
    destructive: true,
    params: Params({ wallet_id: WalletId, to_address: SolanaAddress }),
    summary:
      "Announces a sweep of the wallet's whole USDC balance to to_address, signed later by your recovery kit and the daemon. The agent's API key and its .wlt exports are revoked at once; the sweep can be signed only after recovery.sweep_delay_seconds (default 24 h), and cancelled until then. Needs an enrolled kit.",
  }),
  recovery_sweep_cancel: action({
    endpoint: 'owner',
    auth: 'owner',
    params: Params({ sweep_id: SweepId }),
    summary: 'Cancels a sweep that was not signed yet, or whose transaction failed: nothing moves. (The agent gets a new key only by rotate_api_key.)',
  }),
  recovery_sweeps: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({ wallet_id: WalletId }),
    summary: "The wallet's sweeps, newest first, with when each may be signed and its transaction's status.",
  }),
  recovery_sweep_sign: action({
    endpoint: 'owner',
    auth: 'owner',
    destructive: true,
    params: Params({ sweep_id: SweepId, commitments: T.Object({}, { additionalProperties: true, description: "your kit's FROST commitments (identifier 3)" }) }),
    summary: 'After the delay: the daemon builds the sweep message (the whole balance to to_address, its fee payer paying) and opens a signing round with your commitments.',
  }),
  recovery_sweep_complete: action({
    endpoint: 'owner',
    auth: 'owner',
    destructive: true,
    params: Params({
      sweep_id: SweepId,
      sign_session_id: T.String({ minLength: 1, maxLength: 64 }),
      signature_share: T.Object({}, { additionalProperties: true, description: "your kit's signature share of the message (identifier 3)" }),
    }),
    summary: 'Your signature share: the daemon adds its own, checks the signature, stores and sends the transaction, and answers its outcome.',
  }),
};
