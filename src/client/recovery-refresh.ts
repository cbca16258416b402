/**
 * Refreshing the wallet's key shares, the agent's side (DESIGN §4.1): same address, new shares, and
 * every recovery kit made before stops working. The daemon may lie, so the agent computes its
 * refreshed key itself and refuses unless the daemon's refreshed public package is the same key
 * (same address). Crash-safe in two phases: the refreshed share is stored beside the active one
 * before the commit, and made active only once the daemon answers the commit; a refresh left
 * pending is finished (or dropped, if the daemon never committed it) by the next run — of the
 * refresh, or of anything that signs (pinsOf, which every signing path calls before its round).
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
import type { KeyPackage } from '../frost/types.ts';
import { decodePublicPackage, encodePublicPackage } from '../frost/wire.ts';

export interface RefreshResult {
  refresh_id: string;
  address: string;
  status: 'committed';
  /** A pending refresh from an earlier run was finished (or found never committed and dropped) first. */
  finished_pending: 'committed' | 'dropped' | null;
}

const keyOf = (encoded: string) => new Secret(decodeSecretState(Buffer.from(encoded, 'base64')) as KeyPackage);

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
 * profile holds the refreshed key, whatever another process wrote meanwhile.
 */
export async function finishPending(api: ApiClient, profile: ProfileData, save: SaveProfile): Promise<'committed' | 'dropped' | null> {
  const pending = profile.pending_refresh;
  if (!pending) return null;
  let answer: { current?: unknown };
  try {
    answer = await api.call('bot', 'recovery_refresh_commit', { refresh_id: pending.refresh_id, public_package: pending.public_package });
  } catch (err) {
    // Never committed and no longer committable: the daemon kept its key, so does the agent.
    if (err instanceof ApiError && (err.errorCode === 'INVALID_STATUS' || err.errorCode === 'NOT_FOUND')) {
      adopt(profile, save((p) => dropPending(p, pending.refresh_id)));
      return 'dropped';
    }
    throw err;
  }
  // Committed once, but a later refresh is the daemon's key now: this share signs nothing any more.
  if (answer.current !== true) {
    adopt(profile, save((p) => dropPending(p, pending.refresh_id)));
    return 'dropped';
  }
  adopt(
    profile,
    save((p) => {
      p.key_package = pending.key_package;
      p.public_package = pending.public_package;
      dropPending(p, pending.refresh_id);
    }),
  );
  return 'committed';
}

/** Runs a refresh (after finishing a pending one). */
export async function refreshKey(api: ApiClient, profile: ProfileData, save: SaveProfile): Promise<RefreshResult> {
  // The profile as stored now: a refresh another process left pending is finished before this one starts.
  adopt(profile, save(() => {}));
  const finished = await finishPending(api, profile, save);
  const key = keyOf(profile.key_package);
  const mine = refreshContribution();
  const answer = await api.call<{ refresh_id: string; contribution: unknown; public_package: unknown }>('bot', 'recovery_refresh_init', { contribution: bytesToHex(mine) });
  if (typeof answer.contribution !== 'string' || !/^[0-9a-f]{64}$/.test(answer.contribution)) throw new CustodyCheckError("refusing the refresh: the daemon's contribution is not a scalar; nothing was stored");
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
  const pending = { refresh_id: answer.refresh_id, key_package: Buffer.from(encodeSecretState(refreshed.reveal())).toString('base64'), public_package: encodePublicPackage(pub) };
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
  if ((await finishPending(api, profile, save)) !== 'committed') {
    throw new CustodyCheckError('the daemon did not take this refresh (another run replaced it, or it expired); the profile keeps the key the daemon has', {
      howToFix: 'Run agent-wallet recovery refresh again.',
    });
  }
  return { refresh_id: answer.refresh_id, address: profile.address, status: 'committed', finished_pending: finished };
}
