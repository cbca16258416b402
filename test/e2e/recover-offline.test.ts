/**
 * The operator is gone (issue 25): a real daemon process on network "custom" in front of a
 * standalone simnet; an agent registered and funded through it; the owner's kit enrolled through the
 * real CLIs (owner recovery start → agent recovery enroll → owner recovery finish). Then the daemon
 * is killed and its data directory deleted, and `agent-wallet recover` — the agent's profile and the
 * kit on one machine, FROST over {1, 3}, a fee payer of the owner's — moves the whole balance to
 * the owner's address. Refusals come before anything is signed or sent.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSigner, getAddressDecoder, type Address } from '@solana/kit';
import { ed25519 } from '@noble/curves/ed25519.js';
import { ProfileStore } from '../../src/client/profile.ts';
import { refreshContribution, refreshKeyPackage } from '../../src/frost/recovery-share.ts';
import { decodeSecretState, encodeSecretState } from '../../src/frost/codec.ts';
import { Secret } from '../../src/frost/secret.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { claimInLedger, customChainEnv, fundOperator, runCli, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

const PASSPHRASE = 'the owner kit passphrase';
let simnet: Simnet;
let daemon: DaemonProcess;
const dataDir = join(tempDir('aw-gone-'), 'data');
const agentHome = join(tempDir('aw-gone-agent-'), 'home');
const ownerHome = tempDir('aw-gone-owner-');
const kitPath = join(ownerHome, 'kit.json');
let wallet: { address: Address; walletId: string };

/** A Solana CLI keypair file of the owner's, with SOL. */
async function ownerFeePayer(lamports: bigint): Promise<{ path: string; address: Address }> {
  const seed = ed25519.utils.randomSecretKey();
  const pub = ed25519.getPublicKey(seed);
  const path = join(ownerHome, `payer-${Date.now()}-${Math.random()}.json`);
  writeFileSync(path, JSON.stringify([...seed, ...pub]), { mode: 0o600 });
  const address = getAddressDecoder().decode(pub);
  if (lamports > 0n) await simnet.airdrop(address, lamports);
  return { path, address };
}

const recover = (args: string[], env: Record<string, string> = {}) =>
  runCli(['recover', '--home', agentHome, '--rpc', simnet.url, '--mint', simnet.mint, '--json', ...args], { AGENT_WALLET_KIT_PASSPHRASE: PASSPHRASE, ...env });

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 200 });
  daemon = await startDaemonProcess({ dataDir, env: customChainEnv(simnet.url) });
  await fundOperator(simnet, daemon);
  const reg = await runCli(['register', '--name', 'Orphan', '--server', daemon.url, '--home', agentHome, '--json']);
  expect(reg.code).toBe(0);
  wallet = { address: reg.json.address, walletId: reg.json.wallet_id };
  await claimInLedger(dataDir, [wallet.walletId]);
  await simnet.faucet(wallet.address, 42_500_000n);
  const token = (await runCli(['admin', 'owner-token', 'owner@example.com', '--data-dir', dataDir, '--json'], customChainEnv(simnet.url))).json.token as string;
  const owner = { AGENT_WALLET_URL: daemon.url, AGENT_WALLET_OWNER_TOKEN: token, AGENT_WALLET_HOME: ownerHome, AGENT_WALLET_KIT_PASSPHRASE: PASSPHRASE };
  const started = await runCli(['owner', 'recovery', 'start', wallet.walletId, '--json'], owner);
  expect(started.code).toBe(0);
  expect((await runCli(['recovery', 'enroll', started.json.code, '--home', agentHome, '--json'])).code).toBe(0);
  expect((await runCli(['owner', 'recovery', 'finish', started.json.enrollment_id, '--out', kitPath, '--json'], owner)).code).toBe(0);
  // The operator disappears: the daemon dies and its data is gone.
  await daemon.kill();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);
afterAll(async () => {
  await simnet?.stop();
});

test('refusals before anything is sent: a wrong passphrase, a bad or own address, another wallet\'s kit, a kit from before a refresh, a fee payer without SOL', async () => {
  const payer = await ownerFeePayer(1_000_000_000n);
  const to = (await generateKeyPairSigner()).address;
  const before = await createRpcChainPort(simnet.url).getTokenBalance(wallet.address, simnet.mint);
  const refused = async (args: string[], env: Record<string, string> = {}) => {
    const r = await recover(args, env);
    return { code: r.code, error: r.json?.error?.code as string, message: r.json?.error?.message as string };
  };
  expect(await refused(['--kit', kitPath, '--to', to, '--fee-payer', payer.path], { AGENT_WALLET_KIT_PASSPHRASE: 'not the kit passphrase' })).toMatchObject({ code: 1, error: 'CLIENT_RECOVERY' });
  expect(await refused(['--kit', kitPath, '--to', 'not-an-address', '--fee-payer', payer.path])).toMatchObject({ code: 1, error: 'CLIENT_RECOVERY' });
  expect((await refused(['--kit', kitPath, '--to', wallet.address, '--fee-payer', payer.path])).message).toContain('the wallet itself');
  // A profile whose key was refreshed since the kit was made.
  const store = new ProfileStore(agentHome);
  const profile = store.load('default');
  const key = new Secret(decodeSecretState(Buffer.from(profile.key_package, 'base64')) as KeyPackage);
  const refreshed = refreshKeyPackage(key, { agent: refreshContribution(), daemon: refreshContribution() });
  store.save('refreshed', { ...profile, key_package: Buffer.from(encodeSecretState(refreshed.reveal())).toString('base64') });
  expect((await refused(['--kit', kitPath, '--to', to, '--fee-payer', payer.path, '--profile', 'refreshed'])).message).toContain('refreshed');
  // Another wallet's profile with this kit.
  const other = join(tempDir('aw-gone-other-'), 'home');
  const daemon2 = await startDaemonProcess({ env: customChainEnv(simnet.url) });
  try {
    expect((await runCli(['register', '--name', 'Someone Else', '--server', daemon2.url, '--home', other, '--json'])).code).toBe(0);
  } finally {
    await daemon2.stop();
  }
  const foreign = await runCli(['recover', '--home', other, '--rpc', simnet.url, '--mint', simnet.mint, '--json', '--kit', kitPath, '--to', to, '--fee-payer', payer.path], { AGENT_WALLET_KIT_PASSPHRASE: PASSPHRASE });
  expect(foreign.json.error.message).toContain('not this profile');
  const broke = await ownerFeePayer(0n);
  expect((await refused(['--kit', kitPath, '--to', to, '--fee-payer', broke.path])).error).toBe('CLIENT_RECOVERY');
  expect(await createRpcChainPort(simnet.url).getTokenBalance(wallet.address, simnet.mint)).toBe(before);
}, 60_000);

test('with the daemon dead and its data deleted, the whole balance lands at the owner\'s address; the owner\'s key pays the fee', async () => {
  expect(existsSync(dataDir)).toBe(false);
  const chain = createRpcChainPort(simnet.url);
  const payer = await ownerFeePayer(1_000_000_000n);
  const to = (await generateKeyPairSigner()).address;
  const walletSol = await chain.getSolBalance(wallet.address);
  const swept = await recover(['--kit', kitPath, '--to', to, '--fee-payer', payer.path]);
  expect(swept.code).toBe(0);
  expect(swept.json).toMatchObject({ wallet: wallet.address, to, amount: 42.5, fee_payer: payer.address });
  expect(await chain.getTokenBalance(to, simnet.mint)).toBe(42_500_000n);
  expect(await chain.getTokenBalance(wallet.address, simnet.mint)).toBe(0n);
  expect(await chain.getSolBalance(payer.address)).toBeLessThan(1_000_000_000n);
  expect(await chain.getSolBalance(wallet.address)).toBe(walletSol);
  // Nothing left: a second sweep says so.
  const again = await recover(['--kit', kitPath, '--to', to, '--fee-payer', payer.path]);
  expect(again.json.error.message).toContain('holds no USDC');
}, 60_000);
