/** A wallet key made in memory with its owner's recovery kit, for tests of the daemon-less sweep (no daemon, no enrollment round trip). */
import { getBase58Decoder } from '@solana/kit';
import type { ProfileData } from '../../src/client/profile.ts';
import { makeKit, type RecoveryKit } from '../../src/client/recovery-kit.ts';
import { encodeSecretState } from '../../src/frost/codec.ts';
import { repairCombine, repairSplit, repairSum } from '../../src/frost/recovery-share.ts';
import { encodePublicPackage } from '../../src/frost/wire.ts';
import { dkgPair } from '../frost/helpers.ts';

/** The agent's profile and the owner's kit (sealed with `passphrase`) of one fresh wallet key, the enrollment done in memory. */
export function walletWithKit(passphrase: string): { profile: ProfileData; kit: RecoveryKit } {
  const { agent, server } = dkgPair();
  const a = repairSplit(agent.keyPackage);
  const d = repairSplit(server.keyPackage);
  const pub = agent.publicPackage;
  const share = repairCombine(pub, repairSum(a, d.forOther, 'daemon'), repairSum(d, a.forOther, 'agent'));
  const address = getBase58Decoder().decode(pub.commitments[0]!);
  const walletId = `wal_${address.slice(0, 8)}`;
  const profile: ProfileData = {
    version: 1,
    server_url: 'http://127.0.0.1:9',
    wallet_id: walletId,
    username: 'orphan',
    address,
    network: 'devnet',
    api_key: 'unused',
    key_package: Buffer.from(encodeSecretState(agent.keyPackage.reveal())).toString('base64'),
    public_package: encodePublicPackage(pub),
    created_at: new Date().toISOString(),
  };
  return { profile, kit: makeKit({ walletId, address, pub, share, passphrase, now: new Date() }) };
}
