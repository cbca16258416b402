/**
 * kill -9 of the daemon (a real child process) between signing and submitting: after a restart,
 * the same signed bytes are sent and exactly one transfer lands. The chain runs outside the
 * daemon here (network "custom" pointed at a simnet), as a real cluster would.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { decodeSecretState } from '../../src/frost/codec.ts';
import { commitmentList } from '../../src/frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../../src/frost/ids.ts';
import { commit, signShare } from '../../src/frost/party.ts';
import { Secret } from '../../src/frost/secret.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import { decodeCommitments, encodeCommitments, encodeSignatureShare } from '../../src/frost/wire.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { usdcAta } from '../../src/solana/ata.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { claimInLedger, customChainEnv, fundOperator, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

let simnet: Simnet;
let daemon: DaemonProcess;
const dataDir = join(tempDir('aw-crash-'), 'data');
const env = () => customChainEnv(simnet.url);

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 400 });
  daemon = await startDaemonProcess({ dataDir, env: env() });
  await fundOperator(simnet, daemon);
});
afterAll(async () => {
  await daemon.stop();
  await simnet.stop();
});

const claim = async (walletId: string): Promise<void> => await claimInLedger(dataDir, [walletId]);

test('kill -9 after signing and before submitting, restart, submit: exactly one landed transfer', async () => {
  const a = await registerWallet(new ApiClient(daemon.url), { name: 'Crash A' });
  const b = await registerWallet(new ApiClient(daemon.url), { name: 'Crash B' });
  await claim(a.profile.wallet_id);
  await claim(b.profile.wallet_id);
  await simnet.faucet(a.profile.address as Address, 50_000_000n);
  const api = new ApiClient(daemon.url, a.profile.api_key);
  const intent = await api.call<any>('bot', 'pay', { to: b.profile.username, amount: 4 });
  await api.call('bot', 'confirm_payment', { transaction_id: intent.transaction_id });
  const key = new Secret(decodeSecretState(Buffer.from(a.profile.key_package, 'base64')) as KeyPackage);
  const { nonces, commitments } = commit(key);
  const init = await api.call<any>('bot', 'frost_sign_init', { transaction_id: intent.transaction_id, commitments: encodeCommitments(commitments) });
  const share = signShare(key, nonces, commitmentList(commitments, decodeCommitments(init.server_commitments, SERVER_ID)), new Uint8Array(Buffer.from(init.message, 'base64')));
  const signed = await api.call<any>('bot', 'frost_sign_complete', { transaction_id: intent.transaction_id, signature_share: encodeSignatureShare(AGENT_ID, share) });

  await daemon.kill();
  daemon = await startDaemonProcess({ dataDir, env: env() });
  const api2 = new ApiClient(daemon.url, a.profile.api_key);
  const done = await api2.call<any>('bot', 'submit_signed_tx', { transaction_id: intent.transaction_id, wait: true });
  expect(done.status).toBe('completed');
  expect(done.signature).toBe(signed.signature);
  const chain = createRpcChainPort(simnet.url);
  const ata = await usdcAta(b.profile.address as Address, simnet.mint);
  // Landed transactions that credited B (the operator's setup of B's account, B being claimed, moves no USDC).
  const landed = [];
  for (const s of await chain.getSignaturesForAddress(ata, { limit: 100 })) {
    const t = s.err === null ? await chain.getTokenTransfersOf(s.signature) : null;
    if (t?.deltas.some((d) => d.account === ata && d.delta > 0n)) landed.push(s.signature);
  }
  expect(landed).toEqual([signed.signature]);
  expect(await chain.getTokenBalance(b.profile.address as Address, simnet.mint)).toBe(4_000_000n);
});
