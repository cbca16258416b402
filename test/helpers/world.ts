/**
 * A whole local world for end-to-end tests: the embedded simnet, the real app served over HTTP
 * in process (so tests can also reach the ledger and the clock), agents registered with the real
 * client (DKG over HTTP), owners with API tokens, and the simnet faucet.
 */
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { ProfileStore, type ProfileData } from '../../src/client/profile.ts';
import { registerWallet } from '../../src/client/register.ts';
import { newId } from '../../src/contract/ids.ts';
import { ensureOwner, insertOwnerToken } from '../../src/db/owners.ts';
import { markClaimed } from '../../src/db/wallets.ts';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import type { Services } from '../../src/services.ts';
import { startTestServer, tempDir, testServices } from './services.ts';

export interface Agent {
  name: string;
  profile: ProfileData;
  api: ApiClient;
  walletId: string;
  address: Address;
  username: string;
  /** A profile home holding this agent as profile "default", for CLI runs. */
  home: string;
}

export interface World {
  simnet: Simnet;
  services: Services;
  url: string;
  /** Mutable fake time offset (ms) added to the real clock. */
  clock: { offsetMs: number };
  agent(name: string, opts?: { claimBy?: string }): Promise<Agent>;
  /** Claims a wallet for `email` (as the claim flow would) and returns an owner API client. */
  claim(walletId: string, email: string): Promise<ApiClient>;
  ownerClient(email: string): Promise<ApiClient>;
  /** The owner API token ownerClient uses (minted once per e-mail), for a client of the test's own (a proxy, the CLI). */
  ownerToken(email: string): Promise<string>;
  fund(address: Address, usdc: bigint): Promise<string>;
  /** Alice pays Bob: two agents claimed by owner@example.com, Alice funded with `usdc`, Bob's token account made. */
  payerAndPayee(usdc: bigint): Promise<{ alice: Agent; bob: Agent }>;
  balance(address: Address): Promise<bigint>;
  stop(): Promise<void>;
}

export async function startWorld(
  opts: {
    env?: Record<string, string>;
    slotMs?: number;
    chainTimeoutMs?: number;
    /** The daemon's client-side RPC budget (solana.rpc_max_rps); unlimited when absent. */
    rpcMaxRps?: number;
    /** The RPC URL the daemon uses instead of the simnet's own (a proxy in front of it). */
    rpcUrlOf?: (simnetUrl: string) => string;
    /** On PostgreSQL: false takes the ledger's writer lock away (a test that shows the races it prevents). */
    pgWriterLock?: boolean;
  } = {},
): Promise<World> {
  const simnet = await startSimnet({ port: 0, slotMs: opts.slotMs ?? 200 });
  const clock = { offsetMs: 0 };
  const chain = createRpcChainPort(opts.rpcUrlOf?.(simnet.url) ?? simnet.url, { timeoutMs: opts.chainTimeoutMs, maxRps: opts.rpcMaxRps });
  const services = testServices({ chain, rpcUrl: simnet.url, now: () => new Date(Date.now() + clock.offsetMs), env: opts.env, pgWriterLock: opts.pgWriterLock });
  await simnet.airdrop(services.feePayer.address, 100_000_000_000n);
  // The treasury's token account exists from the start, as the daemon makes sure on simnet.
  await simnet.faucet(services.feePayer.address, 0n);
  const server = await startTestServer(services);
  const tokens = new Map<string, string>();

  const ownerToken = async (email: string): Promise<string> => {
    let token = tokens.get(email);
    if (!token) {
      const key = newApiKey('owner');
      await services.db
        .transaction(async () => {
          const { owner } = await ensureOwner(services.db, email, newId('owner'), Date.now());
          await insertOwnerToken(services.db, { token_id: newId('ownerToken'), owner_id: owner.owner_id, token_hash: key.hash, label: 'test', now: Date.now() });
        });
      token = key.key;
      tokens.set(email, token);
    }
    return token;
  };
  const ownerClient = async (email: string): Promise<ApiClient> => new ApiClient(server.url, await ownerToken(email));

  const claim = async (walletId: string, email: string): Promise<ApiClient> => {
    const api = await ownerClient(email);
    await services.db
      .transaction(async () => {
        const { owner } = await ensureOwner(services.db, email, newId('owner'), Date.now());
        await markClaimed(services.db, walletId, owner.owner_id, Date.now());
      });
    return api;
  };

  const world: World = {
    simnet,
    services,
    url: server.url,
    clock,
    async agent(name, o = {}) {
      const { profile } = await registerWallet(new ApiClient(server.url), { name });
      const home = join(tempDir('aw-agent-'), 'home');
      new ProfileStore(home).save('default', profile);
      if (o.claimBy) await claim(profile.wallet_id, o.claimBy);
      return { name, profile, api: new ApiClient(server.url, profile.api_key), walletId: profile.wallet_id, address: profile.address as Address, username: profile.username, home };
    },
    claim,
    ownerClient,
    ownerToken,
    fund: (address, usdc) => simnet.faucet(address, usdc),
    async payerAndPayee(usdc) {
      const alice = await world.agent('Alice', { claimBy: 'owner@example.com' });
      const bob = await world.agent('Bob', { claimBy: 'owner@example.com' });
      await simnet.faucet(alice.address, usdc);
      await simnet.faucet(bob.address, 0n);
      return { alice, bob };
    },
    balance: (address) => chain.getTokenBalance(address, simnet.mint),
    async stop() {
      await server.stop();
      await simnet.stop();
      // Its ledger too: on PostgreSQL a pool that would otherwise stay open for the rest of the run.
      await services.db.close();
    },
  };
  return world;
}
