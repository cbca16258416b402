/**
 * Refreshing a wallet's key shares, the daemon's side (DESIGN §4.1). The agent sends its random
 * contribution; the daemon adds its own, computes its refreshed key and keeps it pending (sealed)
 * until the agent commits the same public package — so a crash on either side between the two
 * steps leaves both on the old key. The commit replaces the daemon's key, closes every open signing
 * round of the wallet (their nonces were committed under the old shares), supersedes the enrolled
 * recovery kits (they no longer lie on the key), rotates the bot API key and revokes every `.wlt`
 * export (a leaked kit plus an old export's share would otherwise still sign offline), records it
 * in the audit log and mails the owner to enroll again, in one transaction. The new API key is
 * answered once, by the init, and works only from the commit on: the agent stores it with its
 * refreshed share before committing.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { AppError } from '../errors.ts';
import { AGENT_KEY_REFRESH } from '../contract/recovery-enroll.ts';
import { newId } from '../contract/ids.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import { revokeAllExports } from '../db/exports.ts';
import { getOwner } from '../db/owners.ts';
import { closeWalletSigningSessions, commitKeyRefresh, currentEnrollment, getKeyRefresh, insertKeyRefresh, supersedeEnrollments } from '../db/recovery.ts';
import { getWallet, type WalletRow } from '../db/wallets.ts';
import { walletKeyPackage } from '../frost/coordinator-dkg.ts';
import { encodeSecretState } from '../frost/codec.ts';
import { AAD } from '../frost/aad.ts';
import { samePublicPackage } from '../frost/party.ts';
import { RepairError, refreshContribution, refreshKeyPackage } from '../frost/recovery-share.ts';
import { seal } from '../frost/seal.ts';
import { decodePublicPackage, encodePublicPackage } from '../frost/wire.ts';
import { FrostWireError } from '../frost/errors.ts';
import { newApiKey } from '../domain/api-keys.ts';
import { queueMail } from '../mail/outbox.ts';
import type { Services } from '../services.ts';
import { implement } from './registry.ts';
import { callerWallet } from './wallet.ts';

/** How long a refresh waits for the agent's commit. */
export const REFRESH_TTL_MS = 10 * 60 * 1000;

export function initRefresh(services: Services, wallet: WalletRow, agentContribution: string) {
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
  services.db
    .transaction(() =>
      insertKeyRefresh(services.db, {
        refresh_id: refreshId,
        wallet_id: wallet.wallet_id,
        server_key: seal(services.masterKey, encodeSecretState(refreshed.reveal()), AAD.walletKey(wallet.wallet_id)),
        public_package: JSON.stringify(pub),
        api_key_hash: apiKey.hash,
        now,
        expires_at: now + REFRESH_TTL_MS,
      }),
    )
    .immediate();
  return {
    refresh_id: refreshId,
    contribution: bytesToHex(mine),
    public_package: pub,
    api_key: apiKey.key,
    next_step: 'Store your refreshed share and this api_key (shown once; it replaces the current key at the commit), then recovery_refresh_commit with the same public package.',
  };
}

export function commitRefresh(services: Services, wallet: WalletRow, refreshId: string, agentPublic: unknown) {
  const row = getKeyRefresh(services.db, refreshId);
  if (!row || row.wallet_id !== wallet.wallet_id) throw new AppError('NOT_FOUND', 'Refresh not found for this wallet.', { howToFix: 'Start one with recovery_refresh_init (agent-wallet recovery refresh).' });
  let theirs;
  try {
    theirs = decodePublicPackage(agentPublic);
  } catch (err) {
    if (err instanceof FrostWireError) throw new AppError('VALIDATION_ERROR', `public_package: ${err.message}`, { howToFix: 'Send the public package your refreshed key has.' });
    throw err;
  }
  if (!samePublicPackage(theirs, decodePublicPackage(JSON.parse(row.public_package)))) {
    throw new AppError('VALIDATION_ERROR', "public_package: not the refreshed key the daemon computed; nothing changed", { howToFix: 'Keep your current share and start a new refresh.' });
  }
  // A replay answers the same, and whether this refresh is still the wallet's key (a later one may have replaced it).
  if (row.status === 'committed') return { refresh_id: refreshId, status: 'committed', address: wallet.address, current: row.public_package === getWallet(services.db, wallet.wallet_id)?.public_package };
  const now = services.now().getTime();
  if (row.status !== 'pending' || Number(row.expires_at) < now) {
    throw new AppError('INVALID_STATUS', `This refresh is ${row.status === 'pending' ? 'expired' : row.status}; the wallet key did not change.`, { howToFix: 'Keep your current share and start a new refresh.' });
  }
  const outcome = services.db
    .transaction(() => {
      if (!commitKeyRefresh(services.db, refreshId, now)) return null;
      const sessions = closeWalletSigningSessions(services.db, wallet.wallet_id);
      const kit = currentEnrollment(services.db, wallet.wallet_id);
      const kits = supersedeEnrollments(services.db, wallet.wallet_id, now);
      const exports = revokeAllExports(services.db, wallet.wallet_id, now);
      const rotated = row.api_key_hash !== null;
      const data = { refresh_id: refreshId, signing_sessions_closed: sessions, recovery_kits_superseded: kits, api_key_rotated: rotated, revoked_exports: exports };
      appendAudit(services.db, { walletId: wallet.wallet_id, actor: 'agent', kind: 'key.refreshed', data, now });
      appendEvent(services.db, { walletId: wallet.wallet_id, type: 'key.refreshed', data: { refresh_id: refreshId, recovery_kit_superseded: kits > 0, api_key_rotated: rotated, revoked_exports: exports }, now });
      const owner = wallet.owner_id ? getOwner(services.db, wallet.owner_id) : null;
      if (owner) queueMail(services, refreshMail(owner.email, wallet, kit?.fingerprint ?? null));
      return { sessions, kits, exports, rotated };
    })
    .immediate();
  if (!outcome) return commitRefresh(services, wallet, refreshId, agentPublic);
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

export const agentKeyRefreshActions = implement(AGENT_KEY_REFRESH, {
  recovery_refresh_init: (ctx, p) => initRefresh(ctx.services, callerWallet(ctx), p.contribution),
  recovery_refresh_commit: (ctx, p) => commitRefresh(ctx.services, callerWallet(ctx), p.refresh_id, p.public_package),
});
