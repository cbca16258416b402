/**
 * The sweep with no daemon (src/client/recovery-sweep.ts) against a real simnet: a profile and a
 * kit of one in-memory key sign over {1, 3}; the daemon's share is never used after the kit is made.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner, getAddressDecoder, type Address } from '@solana/kit';
import { ed25519 } from '@noble/curves/ed25519.js';
import { offlineSweep } from '../../src/client/recovery-sweep.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { createRpcChainPort, type ChainPort } from '../../src/solana/port.ts';
import { walletWithKit } from '../helpers/offline-kit.ts';

const PASSPHRASE = 'the owner kit passphrase';
let simnet: Simnet;
let chain: ChainPort;

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 100 });
  chain = createRpcChainPort(simnet.url);
});
afterAll(async () => {
  await simnet?.stop();
});

async function feePayer(lamports: bigint): Promise<{ address: Address; keypairBytes: Uint8Array }> {
  const seed = ed25519.utils.randomSecretKey();
  const pub = ed25519.getPublicKey(seed);
  const address = getAddressDecoder().decode(pub);
  await simnet.airdrop(address, lamports);
  return { address, keypairBytes: new Uint8Array([...seed, ...pub]) };
}

test("a mint that is not on the RPC's cluster is refused as the wrong network before anything is signed, not read as an empty wallet", async () => {
  const { profile, kit } = walletWithKit(PASSPHRASE);
  await simnet.faucet(profile.address as Address, 5_000_000n);
  const payer = await feePayer(100_000_000n);
  const to = (await generateKeyPairSigner()).address;
  const absentMint = (await generateKeyPairSigner()).address;
  const sent = simnet.stats().calls.sendTransaction ?? 0;
  await expect(offlineSweep({ profile, kit, passphrase: PASSPHRASE, to, mint: absentMint, feePayer: payer, chain })).rejects.toThrow(`the USDC mint ${absentMint} is not on the cluster behind --rpc`);
  expect(simnet.stats().calls.sendTransaction ?? 0).toBe(sent);
  expect(await chain.getTokenBalance(profile.address as Address, simnet.mint)).toBe(5_000_000n);
  expect(await chain.getSolBalance(payer.address)).toBe(100_000_000n);
});

test('to an owner who already has a USDC account, the whole balance is added to it and only the fee payer spends SOL', async () => {
  const { profile, kit } = walletWithKit(PASSPHRASE);
  const to = (await generateKeyPairSigner()).address;
  await simnet.faucet(to, 1_000_000n);
  await simnet.faucet(profile.address as Address, 7_250_000n);
  const payer = await feePayer(100_000_000n);
  const steps: string[] = [];
  const done = await offlineSweep({ profile, kit, passphrase: PASSPHRASE, to, mint: simnet.mint, feePayer: payer, chain, progress: (s) => steps.push(s) });
  expect(done).toMatchObject({ wallet: profile.address, to, amount: 7_250_000n, fee_payer: payer.address });
  expect(steps.at(-1)).toBe(`sending ${done.signature}`);
  expect(simnet.stats().calls.sendTransaction).toBeGreaterThan(0);
  expect(await chain.getTokenBalance(to, simnet.mint)).toBe(8_250_000n);
  expect(await chain.getTokenBalance(profile.address as Address, simnet.mint)).toBe(0n);
  expect(await chain.getSolBalance(payer.address)).toBeLessThan(100_000_000n);
});

test("the wallet's own address as fee payer is refused before the chain is read", async () => {
  const { profile, kit } = walletWithKit(PASSPHRASE);
  const to = (await generateKeyPairSigner()).address;
  const reads = simnet.stats().total;
  const ownKey = { address: profile.address as Address, keypairBytes: new Uint8Array(64) };
  await expect(offlineSweep({ profile, kit, passphrase: PASSPHRASE, to, mint: simnet.mint, feePayer: ownKey, chain })).rejects.toThrow('the fee payer must be a key of your own');
  expect(simnet.stats().total).toBe(reads);
});
