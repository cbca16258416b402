/**
 * Loading and changing the pins of a profile (src/client/custody.ts holds the rules). A profile
 * made before pins existed gets them on first use, from what the server answers then (its
 * `source` says so); every change is written back through the caller's `save`, which rewrites the
 * profile file atomically (and sealed under AGENT_WALLET_PASSPHRASE when set).
 */
import type { ApiClient } from './api.ts';
import { acceptSchedule, pinsFromPing, type PingAnswer, type Pins } from './custody.ts';
import type { ProfileData } from './profile.ts';

/** Writes the profile after its pins changed. */
export type SaveProfile = (profile: ProfileData) => void;

/** The profile's pins; pins what the server answers now for a profile that has none. */
export async function pinsOf(api: ApiClient, profile: ProfileData, save?: SaveProfile): Promise<Pins> {
  if (profile.custody) return profile.custody;
  profile.custody = pinsFromPing(profile.network, await api.call<PingAnswer>('bot', 'ping'), new Date(), 'first_use');
  save?.(profile);
  return profile.custody;
}

/** The agent accepts the fee schedule the server publishes now (--accept-fees / accept_new_fees). */
export async function acceptNewFees(api: ApiClient, profile: ProfileData, save?: SaveProfile): Promise<Pins> {
  const pins = await pinsOf(api, profile, save);
  acceptSchedule(pins, await api.call<PingAnswer>('bot', 'ping'));
  save?.(profile);
  return pins;
}

/** Applies `change` to the pins and saves the profile. */
export function updatePins(profile: ProfileData, save: SaveProfile | undefined, change: (pins: Pins) => void): void {
  if (!profile.custody) return;
  change(profile.custody);
  save?.(profile);
}
