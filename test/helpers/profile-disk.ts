/**
 * An agent's profile as a fresh process sees it: read from its file, saved back through the CLI's
 * saver. Refresh and export tests use it to prove what a profile on disk can still do.
 */
import { ApiClient } from '../../src/client/api.ts';
import { ProfileStore } from '../../src/client/profile.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { saver } from '../../src/cli/custody-commands.ts';
import type { Agent } from './world.ts';

export const saveTo = (a: Agent) => saver({ store: new ProfileStore(a.home), profileName: 'default' });
export const profileOnDisk = (a: Agent) => new ProfileStore(a.home).load('default');

/** Pays `to` 1 USDC with the profile as it is on disk now; the payment's final status. */
export async function payFromDisk(a: Agent, to: string): Promise<string> {
  const profile = profileOnDisk(a);
  const api = new ApiClient(a.api.baseUrl, profile.api_key);
  const intent = await api.call<{ transaction_id: string }>('bot', 'pay', { to, amount: 1 });
  return String((await confirmSignSubmit(api, profile, intent.transaction_id, { save: saveTo(a) })).status);
}
