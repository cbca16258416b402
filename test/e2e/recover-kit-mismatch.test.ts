/**
 * `agent-wallet recover` (the real CLI, a real simnet behind --rpc) refusing a kit that does not
 * sign with the profile says which of two different things is wrong: a kit of another wallet whose
 * id and address were changed to this wallet's (its key was never this wallet's), or this wallet's
 * own kit made before a key refresh (same key, older shares). Nothing is sent in either case.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSigner, getAddressDecoder, type Address } from '@solana/kit';
import { ed25519 } from '@noble/curves/ed25519.js';
import { ProfileStore } from '../../src/client/profile.ts';
import type { RecoveryKit } from '../../src/client/recovery-kit.ts';
import { decodeSecretState, encodeSecretState } from '../../src/frost/codec.ts';
import { refreshContribution, refreshKeyPackage } from '../../src/frost/recovery-share.ts';
import { Secret } from '../../src/frost/secret.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { runCli } from '../helpers/daemon.ts';
import { walletWithKit } from '../helpers/offline-kit.ts';
import { tempDir } from '../helpers/services.ts';

const PASSPHRASE = 'the owner kit passphrase';
let simnet: Simnet;
const home = tempDir('aw-kit-mismatch-');

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 200 });
});
afterAll(async () => {
  await simnet?.stop();
});

async function feePayerFile(): Promise<string> {
  const seed = ed25519.utils.randomSecretKey();
  const pub = ed25519.getPublicKey(seed);
  await simnet.airdrop(getAddressDecoder().decode(pub), 1_000_000_000n);
  const path = join(home, `payer-${crypto.randomUUID()}.json`);
  writeFileSync(path, JSON.stringify([...seed, ...pub]), { mode: 0o600 });
  return path;
}

async function recover(profileName: string, kit: RecoveryKit): Promise<{ code: number; message: string }> {
  const kitPath = join(home, `kit-${crypto.randomUUID()}.json`);
  writeFileSync(kitPath, JSON.stringify(kit), { mode: 0o600 });
  const to = (await generateKeyPairSigner()).address;
  const r = await runCli(['recover', '--home', home, '--profile', profileName, '--rpc', simnet.url, '--mint', simnet.mint, '--kit', kitPath, '--to', to, '--fee-payer', await feePayerFile(), '--json'], { AGENT_WALLET_KIT_PASSPHRASE: PASSPHRASE });
  return { code: r.code, message: (r.json as any)?.error?.message ?? r.stderr };
}

test("another wallet's kit relabelled with this wallet's id and address is refused as a key that was never this wallet's, not as a kit from before a refresh", async () => {
  const mine = walletWithKit(PASSPHRASE);
  const theirs = walletWithKit(PASSPHRASE);
  new ProfileStore(home).save('mine', mine.profile);
  await simnet.faucet(mine.profile.address as Address, 3_000_000n);
  const relabelled: RecoveryKit = { ...theirs.kit, wallet_id: mine.profile.wallet_id, address: mine.profile.address };
  const refused = await recover('mine', relabelled);
  expect(refused.code).toBe(1);
  expect(refused.message).toContain("the kit's public key is not this wallet's");
  expect(refused.message).toContain('never a kit of this wallet');
  expect(refused.message).not.toContain('refreshed');
  expect(await createRpcChainPort(simnet.url).getTokenBalance(mine.profile.address as Address, simnet.mint)).toBe(3_000_000n);
}, 30_000);

test("this wallet's own kit made before a key refresh is refused as superseded by the refresh, with the way to enroll again", async () => {
  const { profile, kit } = walletWithKit(PASSPHRASE);
  const key = new Secret(decodeSecretState(Buffer.from(profile.key_package, 'base64')) as KeyPackage);
  const refreshed = refreshKeyPackage(key, { agent: refreshContribution(), daemon: refreshContribution() });
  new ProfileStore(home).save('refreshed', { ...profile, key_package: Buffer.from(encodeSecretState(refreshed.reveal())).toString('base64') });
  await simnet.faucet(profile.address as Address, 2_000_000n);
  const refused = await recover('refreshed', kit);
  expect(refused.code).toBe(1);
  expect(refused.message).toContain("the kit is this wallet's, made before its key was refreshed");
  expect(refused.message).toContain('agent-wallet owner recovery start');
  expect(await createRpcChainPort(simnet.url).getTokenBalance(profile.address as Address, simnet.mint)).toBe(2_000_000n);
}, 30_000);
