/**
 * Refreshing the wallet's key shares, the agent's side (DESIGN §4.1): same address, new shares, and
 * every recovery kit made before stops working. The daemon may lie, so the agent computes its
 * refreshed key itself and refuses unless the daemon's refreshed public package is the same key
 * (same address). Crash-safe in two phases: the refreshed share is stored beside the active one
 * before the commit, and made active only once the daemon answers the commit; a refresh left
 * pending is finished (or dropped, if the daemon never committed it) by the next run — of the
 * refresh, or of anything that signs (pinsOf, which every signing path calls before its round).
 * The commit also rotates the bot API key (the init answers the new one, stored with the pending
 * share) and revokes every `.wlt` export: copies of the profile from before the refresh are dead.
 * Each commit carries a fresh proof that the agent holds the pending refreshed share
 * (share-proof.ts): the daemon commits nothing for whoever holds only the bot API key.
 */
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { ApiError, type ApiClient } from './api.ts';
import { CustodyCheckError } from './errors.ts';
import type { SaveProfile } from './pins.ts';
import type { ProfileData } from './profile.ts';
import { decodeSecretState, encodeSecretState } from '../frost/codec.ts';
import { samePublicPackage } from '../frost/party.ts';
import { RepairError, refreshContribution, refreshKeyPackage } from '../frost/recovery-share.ts';
import { Secret } from '../frost/secret.ts';
import { proveShare } from '../frost/share-proof.ts';
import type { KeyPackage } from '../frost/types.ts';
import { decodePublicPackage, encodePublicPackage } from '../frost/wire.ts';

export interface RefreshResult {
  refresh_id: string;
  address: string;
  status: 'committed';
  /** A pending refresh from an earlier run was finished (or found never committed and dropped) first. */
  finished_pending: 'committed' | 'dropped' | null;
  /** The profile holds a new bot API key; the old one is refused. */
  api_key_rotated: boolean;
  /** The wallet's `.wlt` exports the refresh revoked: their files can no longer be imported. */
  revoked_exports: string[];
}

/** The daemon's answer to a commit. */
interface CommitAnswer {
  current?: unknown;
  api_key_rotated?: unknown;
  revoked_exports?: unknown;
}

const keyOf = (encoded: string) => new Secret(decodeSecretState(Buffer.from(encoded, 'base64')) as KeyPackage);

/** The parameters of the commit of `pending`, with the proof that this agent holds its refreshed share. */
export function refreshCommitParams(walletId: string, pending: NonNullable<ProfileData['pending_refresh']>) {
  const proof = proveShare(keyOf(pending.key_package), { walletId, refreshId: pending.refresh_id });
  return { refresh_id: pending.refresh_id, public_package: pending.public_package, share_proof: bytesToHex(proof) };
}

/** The in-memory profile becomes what was written (a field the write dropped is dropped here too). */
function adopt(profile: ProfileData, written: ProfileData): void {
  if (written.pending_refresh === undefined) delete profile.pending_refresh;
  Object.assign(profile, written);
}

/** Removes the profile's pending refresh if it is `refreshId`: another run's pending refresh is that run's to finish. */
function dropPending(p: ProfileData, refreshId: string): void {
  if (p.pending_refresh?.refresh_id === refreshId) delete p.pending_refresh;
}

/**
 * Commits the profile's pending refresh and makes it active; drops it when the daemon never
 * committed it, or when a later refresh has replaced it on the daemon. After 'committed' the
 * profile holds the refreshed key and API key (and `api` speaks with the latter), whatever another
 * process wrote meanwhile.
 */
export async function finishPending(api: ApiClient, profile: ProfileData, save: SaveProfile): Promise<'committed' | 'dropped' | null> {
  return (await commitPending(api, profile, save))?.outcome ?? null;
}

async function commitPending(api: ApiClient, profile: ProfileData, save: SaveProfile): Promise<{ outcome: 'committed' | 'dropped'; answer: CommitAnswer | null } | null> {
  const pending = profile.pending_refresh;
  if (!pending) return null;
  const params = refreshCommitParams(profile.wallet_id, pending);
  let answer: CommitAnswer;
  try {
    answer = await api.call<CommitAnswer>('bot', 'recovery_refresh_commit', params).catch((err: unknown) => {
      // The old key is refused once the daemon committed (an answer lost to a crash): the refresh's key proves it.
      if (err instanceof ApiError && err.errorCode === 'UNAUTHORIZED' && pending.api_key) return api.withKey(pending.api_key).call<CommitAnswer>('bot', 'recovery_refresh_commit', params);
      throw err;
    });
  } catch (err) {
    // Never committed and no longer committable: the daemon kept its key, so does the agent.
    if (err instanceof ApiError && (err.errorCode === 'INVALID_STATUS' || err.errorCode === 'NOT_FOUND')) {
      adopt(profile, save((p) => dropPending(p, pending.refresh_id)));
      return { outcome: 'dropped', answer: null };
    }
    throw err;
  }
  // Committed once, but a later refresh is the daemon's key now: this share signs nothing any more.
  if (answer.current !== true) {
    adopt(profile, save((p) => dropPending(p, pending.refresh_id)));
    return { outcome: 'dropped', answer };
  }
  adopt(
    profile,
    save((p) => {
      p.key_package = pending.key_package;
      p.public_package = pending.public_package;
      if (pending.api_key) p.api_key = pending.api_key;
      dropPending(p, pending.refresh_id);
    }),
  );
  if (pending.api_key) api.rekey(pending.api_key);
  return { outcome: 'committed', answer };
}

/** Runs a refresh (after finishing a pending one). */
export async function refreshKey(api: ApiClient, profile: ProfileData, save: SaveProfile): Promise<RefreshResult> {
  // The profile as stored now (its API key too): a refresh another process left pending is finished before this one starts.
  adopt(profile, save(() => {}));
  api.rekey(profile.api_key);
  const finished = await finishPending(api, profile, save);
  const key = keyOf(profile.key_package);
  const mine = refreshContribution();
  const answer = await api.call<{ refresh_id: string; contribution: unknown; public_package: unknown; api_key: unknown }>('bot', 'recovery_refresh_init', { contribution: bytesToHex(mine) });
  if (typeof answer.contribution !== 'string' || !/^[0-9a-f]{64}$/.test(answer.contribution)) throw new CustodyCheckError("refusing the refresh: the daemon's contribution is not a scalar; nothing was stored");
  if (typeof answer.api_key !== 'string' || !answer.api_key.startsWith('wallet_bot_')) throw new CustodyCheckError("refusing the refresh: the daemon's answer carries no new bot API key; nothing was stored");
  let refreshed: Secret<KeyPackage>;
  try {
    refreshed = refreshKeyPackage(key, { agent: mine, daemon: hexToBytes(answer.contribution) });
  } catch (err) {
    if (err instanceof RepairError) throw new CustodyCheckError(`refusing the refresh: ${err.message}; nothing was stored`);
    throw err;
  }
  const pub = refreshed.reveal().public;
  let theirs;
  try {
    theirs = decodePublicPackage(answer.public_package);
  } catch {
    throw new CustodyCheckError("refusing the refresh: the daemon's refreshed public package is malformed; nothing was stored");
  }
  if (!samePublicPackage(pub, theirs) || bytesToHex(pub.commitments[0]!) !== bytesToHex(key.reveal().public.commitments[0]!)) {
    throw new CustodyCheckError("refusing the refresh: the daemon's refreshed key is not the one its contribution gives (or not this address); nothing was stored", {
      howToFix: 'Do not retry: a daemon that answers another key may be compromised. Report it to the operator; the wallet key is unchanged.',
    });
  }
  const pending = {
    refresh_id: answer.refresh_id,
    key_package: Buffer.from(encodeSecretState(refreshed.reveal())).toString('base64'),
    public_package: encodePublicPackage(pub),
    api_key: answer.api_key,
  };
  let other: string | null = null;
  adopt(
    profile,
    save((p) => {
      // Never over another run's pending share: the daemon may have committed it, and it would be lost.
      if (p.pending_refresh && p.pending_refresh.refresh_id !== pending.refresh_id) other = p.pending_refresh.refresh_id;
      else p.pending_refresh = pending;
    }),
  );
  if (other) {
    throw new CustodyCheckError(`another refresh of this profile (${other}) is under way; this run stored nothing and the daemon drops it`, {
      howToFix: 'Run agent-wallet recovery refresh again once the other run is over: it finishes the other refresh first.',
    });
  }
  const done = await commitPending(api, profile, save);
  if (done?.outcome !== 'committed') {
    throw new CustodyCheckError('the daemon did not take this refresh (another run replaced it, or it expired); the profile keeps the key the daemon has', {
      howToFix: 'Run agent-wallet recovery refresh again.',
    });
  }
  const revoked = Array.isArray(done.answer?.revoked_exports) ? done.answer.revoked_exports.map(String) : [];
  return { refresh_id: answer.refresh_id, address: profile.address, status: 'committed', finished_pending: finished, api_key_rotated: done.answer?.api_key_rotated === true, revoked_exports: revoked };
}
