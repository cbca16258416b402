/**
 * The master key a ledger belongs to: its fingerprint is stored at the ledger's first start and
 * every later start compares. The server's key shares are sealed under that key, so a node with
 * another one (a second node given a fresh data dir, a backup restored beside the wrong key file)
 * could open nothing it signs with, and must not start.
 */
import type { Store } from './store.ts';

/** The fingerprint stored with the ledger (`fingerprint` itself at the first call). */
export async function pinnedMasterKey(db: Store, fingerprint: string): Promise<string> {
  await db.run("INSERT INTO meta (key, value) VALUES ('master_key_fingerprint', ?) ON CONFLICT (key) DO NOTHING", fingerprint);
  return (await db.get<{ value: string }>("SELECT value FROM meta WHERE key = 'master_key_fingerprint'"))!.value;
}
