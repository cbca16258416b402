/**
 * Loading and changing the pins of a profile (src/client/custody.ts holds the rules). A profile
 * made before pins existed gets them on first use, from what the server answers then (its
 * `source` says so); every change goes through the caller's `save`, which applies it to the
 * profile file as it is now, under its lock (ProfileStore.update), so a change made meanwhile by
 * another process (the CLI beside an MCP server) is kept; the in-memory profile then takes the
 * merged pins.
 */
import type { ApiClient } from './api.ts';
import { acceptSchedule, pinsFromPing, type PingAnswer, type Pins } from './custody.ts';
import type { ProfileData } from './profile.ts';
import { finishPending } from './recovery-refresh.ts';

/** Applies a change to the stored profile (re-read under its lock) and returns what was written. */
export type SaveProfile = (change: (profile: ProfileData) => void) => ProfileData;

/** The profile's pins (after finishing a half-done key refresh); pins what the server answers now for a profile that has none. */
export async function pinsOf(api: ApiClient, profile: ProfileData, save?: SaveProfile): Promise<Pins> {
  // A key refresh left half-done (a crash after its commit) is finished before anything signs with the old share.
  if (profile.pending_refresh && save) await finishPending(api, profile, save);
  if (profile.custody) return profile.custody;
  const pins = pinsFromPing(profile.network, await api.call<PingAnswer>('bot', 'ping'), new Date(), 'first_use');
  // Another process may have pinned first: its pins stay.
  profile.custody = save ? (save((p) => void (p.custody ??= pins)).custody ?? pins) : pins;
  return profile.custody;
}

/** The agent accepts the fee schedule the server publishes now (--accept-fees / accept_new_fees). */
export async function acceptNewFees(api: ApiClient, profile: ProfileData, save?: SaveProfile): Promise<Pins> {
  await pinsOf(api, profile, save);
  const ping = await api.call<PingAnswer>('bot', 'ping');
  updatePins(profile, save, (pins) => acceptSchedule(pins, ping));
  return profile.custody!;
}

/** Applies `change` to the stored pins (and to the in-memory profile, which takes the stored result). */
export function updatePins(profile: ProfileData, save: SaveProfile | undefined, change: (pins: Pins) => void): void {
  if (!profile.custody) return;
  if (!save) {
    change(profile.custody);
    return;
  }
  const written = save((p) => {
    // A stored profile without pins (made before them) gets this process's first-use pins.
    p.custody ??= profile.custody;
    change(p.custody!);
  });
  profile.custody = written.custody;
}
