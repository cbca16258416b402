/**
 * Refreshing a wallet's key shares, the daemon's side (DESIGN §4.1). The agent sends its random
 * contribution; the daemon adds its own, computes its refreshed key and keeps it pending (sealed)
 * until the agent commits the same public package — so a crash on either side between the two
 * steps leaves both on the old key. The commit carries a proof that the caller holds the refreshed
 * agent share (share-proof.ts, checked against the daemon's own refreshed key): the public package
 * follows from the init's answer alone, so without the proof the bot API key alone would switch the
 * daemon to a key no agent holds (and receive the next API key). The commit replaces the daemon's key, closes every open signing
 * round of the wallet (their nonces were committed under the old shares), supersedes the enrolled
 * recovery kits (they no longer lie on the key), rotates the bot API key and revokes every `.wlt`
 * export (a leaked kit plus an old export's share would otherwise still sign offline), records it
 * in the audit log and mails the owner to enroll again, in one transaction. The new API key is
 * answered once, by the init, and works only from the commit on: the agent stores it with its
 * refreshed share before committing.
 *
 * The agent may be steered by the operator or a prompt, so it cannot take the owner's kit away:
 * while a kit is enrolled, a refresh (init and commit) needs the owner's approval
 * (recovery_refresh_allow, one hour, gone with the kit it supersedes), and a frozen wallet is
 * never refreshed.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { AppError } from '../errors.ts';
import { AGENT_KEY_REFRESH, OWNER_KEY_REFRESH } from '../contract/recovery-enroll.ts';
import { newId } from '../contract/ids.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import { revokeAllExports } from '../db/exports.ts';
import { loadRailsState } from '../db/guard-rails.ts';
import { getOwner } from '../db/owners.ts';
import { allowKitRefresh, closeWalletSigningSessions, commitKeyRefresh, currentEnrollment, getKeyRefresh, insertKeyRefresh, supersedeEnrollments } from '../db/recovery.ts';
import { getWallet, type WalletRow } from '../db/wallets.ts';
import { walletKeyPackage } from '../frost/coordinator-dkg.ts';
import { encodeSecretState } from '../frost/codec.ts';
import { AAD } from '../frost/aad.ts';
import { AGENT_ID } from '../frost/ids.ts';
import { samePublicPackage } from '../frost/party.ts';
import { RepairError, refreshContribution, refreshKeyPackage } from '../frost/recovery-share.ts';
import { seal } from '../frost/seal.ts';
import { shareProofProblem } from '../frost/share-proof.ts';
import type { PublicPackage } from '../frost/types.ts';
import { decodePublicPackage, encodePublicPackage } from '../frost/wire.ts';
import { FrostWireError } from '../frost/errors.ts';
import { newApiKey } from '../domain/api-keys.ts';
import { ownerActor, type Via } from '../domain/owner-actor.ts';
import { effectiveRails } from '../domain/rails-change.ts';
import { queueMail } from '../mail/outbox.ts';
import type { Services } from '../services.ts';
import { callerOwner, requireOwnerWallet } from './owner.ts';
import { implement } from './registry.ts';
import { callerWallet } from './wallet.ts';

/** How long a refresh waits for the agent's commit. */
export const REFRESH_TTL_MS = 10 * 60 * 1000;

/** How long the owner's approval of a refresh that supersedes the kit lasts. */
export const REFRESH_ALLOW_MS = 60 * 60 * 1000;

/** Refuses a refresh of a frozen wallet, and one that would supersede an enrolled kit the owner did not let go. */
async function requireRefreshable(services: Services, wallet: WalletRow, now: Date): Promise<void> {
  const rails = await loadRailsState(services.db, wallet.wallet_id);
  if (effectiveRails(rails.current, rails.pending, now).frozen) {
    throw new AppError('INVALID_STATUS', "This wallet is frozen: its key shares are not refreshed while it is; nothing changed.", {
      howToFix: "Only the owner can unfreeze the wallet (guard rails, frozen off); until then its key and the owner's recovery kit stay as they are.",
    });
  }
  const kit = await currentEnrollment(services.db, wallet.wallet_id);
  if (kit && !(kit.refresh_allowed_until !== null && Number(kit.refresh_allowed_until) >= now.getTime())) {
    throw new AppError('AWAITING_APPROVAL', `A refresh would supersede the owner's recovery kit (fingerprint ${kit.fingerprint}); it needs the owner's approval. Nothing changed.`, {
      howToFix: `Ask the owner to approve it on their own machine: agent-wallet owner recovery allow-refresh ${wallet.wallet_id} (owner API recovery_refresh_allow). Then run agent-wallet recovery refresh again within the hour.`,
    });
  }
}

export async function initRefresh(services: Services, wallet: WalletRow, agentContribution: string) {
  await requireRefreshable(services, wallet, services.now());
  const mine = refreshContribution();
  let refreshed;
  try {
    refreshed = refreshKeyPackage(walletKeyPackage(services.masterKey, wallet.wallet_id, wallet.server_key), { agent: hexToBytes(agentContribution), daemon: mine });
  } catch (err) {
    if (err instanceof RepairError) throw new AppError('VALIDATION_ERROR', `contribution: ${err.message}`, { howToFix: 'Send a fresh random non-zero scalar below the group order; the agent-wallet client does this.' });
    throw err;
  }
  const pub = encodePublicPackage(refreshed.reveal().public);
  const apiKey = newApiKey('bot');
  const refreshId = newId('keyRefresh');
  const now = services.now().getTime();
  await services.db
    .transaction(async () =>
      await insertKeyRefresh(services.db, {
        refresh_id: refreshId,
        wallet_id: wallet.wallet_id,
        server_key: seal(services.masterKey, encodeSecretState(refreshed.reveal()), AAD.walletKey(wallet.wallet_id)),
        public_package: JSON.stringify(pub),
        api_key_hash: apiKey.hash,
        now,
        expires_at: now + REFRESH_TTL_MS,
      }),
    );
  return {
    refresh_id: refreshId,
    contribution: bytesToHex(mine),
    public_package: pub,
    api_key: apiKey.key,
    next_step: 'Store your refreshed share and this api_key (shown once; it replaces the current key at the commit), then recovery_refresh_commit with the same public package.',
  };
}

/** Refuses a commit whose caller does not prove it holds the refreshed agent share of `pub` (the daemon's copy). */
function requireShareProof(wallet: WalletRow, refreshId: string, pub: PublicPackage, proof: string): void {
  const problem = shareProofProblem(pub, AGENT_ID, hexToBytes(proof), { walletId: wallet.wallet_id, refreshId });
  if (problem) {
    throw new AppError('VALIDATION_ERROR', `share_proof: ${problem}. A commit must prove its caller holds the refreshed agent share; nothing changed.`, {
      howToFix: "Commit from the agent's profile that stored this refresh's share: agent-wallet recovery refresh (or any signing command) makes the proof. Without that share the refresh cannot be committed, and the wallet key stays as it is.",
    });
  }
}

export async function commitRefresh(services: Services, wallet: WalletRow, refreshId: string, agentPublic: unknown, shareProof: string) {
  const row = await getKeyRefresh(services.db, refreshId);
  if (!row || row.wallet_id !== wallet.wallet_id) throw new AppError('NOT_FOUND', 'Refresh not found for this wallet.', { howToFix: 'Start one with recovery_refresh_init (agent-wallet recovery refresh).' });
  let theirs;
  try {
    theirs = decodePublicPackage(agentPublic);
  } catch (err) {
    if (err instanceof FrostWireError) throw new AppError('VALIDATION_ERROR', `public_package: ${err.message}`, { howToFix: 'Send the public package your refreshed key has.' });
    throw err;
  }
  const ours = decodePublicPackage(JSON.parse(row.public_package));
  if (!samePublicPackage(theirs, ours)) {
    throw new AppError('VALIDATION_ERROR', "public_package: not the refreshed key the daemon computed; nothing changed", { howToFix: 'Keep your current share and start a new refresh.' });
  }
  // A replay answers the same, and whether this refresh is still the wallet's key (a later one may
  // have replaced it); only to the holder of the share, as the first commit.
  if (row.status === 'committed') {
    requireShareProof(wallet, refreshId, ours, shareProof);
    return { refresh_id: refreshId, status: 'committed', address: wallet.address, current: row.public_package === (await getWallet(services.db, wallet.wallet_id))?.public_package };
  }
  const nowDate = services.now();
  const now = nowDate.getTime();
  if (row.status !== 'pending' || Number(row.expires_at) < now) {
    throw new AppError('INVALID_STATUS', `This refresh is ${row.status === 'pending' ? 'expired' : row.status}; the wallet key did not change.`, { howToFix: 'Keep your current share and start a new refresh.' });
  }
  requireShareProof(wallet, refreshId, ours, shareProof);
  const outcome = await services.db
    .transaction(async () => {
      // Checked again with the write: a freeze or a kit enrolled since the init holds.
      await requireRefreshable(services, wallet, nowDate);
      if (!(await commitKeyRefresh(services.db, refreshId, now))) return null;
      const sessions = await closeWalletSigningSessions(services.db, wallet.wallet_id);
      const kit = await currentEnrollment(services.db, wallet.wallet_id);
      const kits = await supersedeEnrollments(services.db, wallet.wallet_id, now);
      const exports = await revokeAllExports(services.db, wallet.wallet_id, now);
      const rotated = row.api_key_hash !== null;
      const data = { refresh_id: refreshId, signing_sessions_closed: sessions, recovery_kits_superseded: kits, api_key_rotated: rotated, revoked_exports: exports };
      await appendAudit(services.db, { walletId: wallet.wallet_id, actor: 'agent', kind: 'key.refreshed', data, now });
      await appendEvent(services.db, { walletId: wallet.wallet_id, type: 'key.refreshed', data: { refresh_id: refreshId, recovery_kit_superseded: kits > 0, api_key_rotated: rotated, revoked_exports: exports }, now });
      const owner = wallet.owner_id ? await getOwner(services.db, wallet.owner_id) : null;
      if (owner) await queueMail(services, refreshMail(owner.email, wallet, kit?.fingerprint ?? null));
      return { sessions, kits, exports, rotated };
    });
  if (!outcome) return await commitRefresh(services, wallet, refreshId, agentPublic, shareProof);
  return {
    refresh_id: refreshId,
    status: 'committed',
    address: wallet.address,
    current: true,
    recovery_kit_superseded: outcome.kits > 0,
    signing_sessions_closed: outcome.sessions,
    api_key_rotated: outcome.rotated,
    revoked_exports: outcome.exports,
  };
}

/** The owner learns of every key change; a kit it holds no longer works, so it is told to enroll again. */
function refreshMail(to: string, wallet: WalletRow, kitFingerprint: string | null) {
  const kit = kitFingerprint
    ? `Your recovery kit (fingerprint ${kitFingerprint}) no longer works: it is not a share of the refreshed key. Enroll again with agent-wallet owner recovery start, and destroy the old kit file.`
    : 'No recovery kit was enrolled. To have one, enroll with agent-wallet owner recovery start (an enrollment begun before the refresh starts again).';
  return {
    kind: 'recovery',
    to,
    subject: kitFingerprint ? `Your recovery kit for ${wallet.name} no longer works: enroll again` : `The key shares of ${wallet.name} were refreshed`,
    body: `The agent and the service refreshed the key shares of ${wallet.name}; its address ${wallet.address} is unchanged and payments go on as before. The agent's API key was replaced and every earlier .wlt export revoked: copies of the agent's profile made before no longer work.\n\n${kit}\n\nIf neither you nor the agent's operator asked for this, check the wallet's audit log on the dashboard.`,
    links: [],
  };
}

/** The owner lets one refresh supersede the wallet's enrolled kit within the hour (a kit that leaked). */
export async function allowRefresh(services: Services, ownerId: string, walletId: string, via: Via) {
  await requireOwnerWallet(services, ownerId, walletId);
  const now = services.now().getTime();
  const until = now + REFRESH_ALLOW_MS;
  const kit = await services.db
    .transaction(async () => {
      const enrolled = await currentEnrollment(services.db, walletId);
      if (!enrolled || !(await allowKitRefresh(services.db, enrolled.enrollment_id, until, now))) return null;
      const data = { enrollment_id: enrolled.enrollment_id, fingerprint: enrolled.fingerprint, allowed_until: new Date(until).toISOString() };
      await appendAudit(services.db, { walletId, actor: ownerActor(ownerId, via), kind: 'key_refresh.allowed', data, now });
      await appendEvent(services.db, { walletId, type: 'key_refresh.allowed', data, now });
      return enrolled;
    });
  if (!kit) return { wallet_id: walletId, fingerprint: null, allowed_until: null, next_step: 'No recovery kit is enrolled: the agent refreshes the key shares without your approval.' };
  return {
    wallet_id: walletId,
    fingerprint: kit.fingerprint,
    allowed_until: new Date(until).toISOString(),
    next_step: `The agent may now run agent-wallet recovery refresh (until ${new Date(until).toISOString()}); your kit ${kit.fingerprint} then stops working. Enroll again afterwards: agent-wallet owner recovery start ${walletId}.`,
  };
}

export const ownerKeyRefreshActions = implement(OWNER_KEY_REFRESH, {
  recovery_refresh_allow: async (ctx, p) => await allowRefresh(ctx.services, callerOwner(ctx).ownerId, p.wallet_id, 'api'),
});

export const agentKeyRefreshActions = implement(AGENT_KEY_REFRESH, {
  recovery_refresh_init: async (ctx, p) => await initRefresh(ctx.services, await callerWallet(ctx), p.contribution),
  recovery_refresh_commit: async (ctx, p) => await commitRefresh(ctx.services, await callerWallet(ctx), p.refresh_id, p.public_package, p.share_proof),
});
