/**
 * Builders for owner-side tests: a fresh app over an in-memory ledger with a movable fake clock
 * and a fake chain, wallets inserted through the db functions, owners, tokens, pending approvals.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { getBase58Decoder } from '@solana/kit';
import { createApp } from '../../src/api/app.ts';
import { newId } from '../../src/contract/ids.ts';
import { insertApproval } from '../../src/db/approvals.ts';
import { ensureOwner, insertOwnerToken } from '../../src/db/owners.ts';
import { insertTx } from '../../src/db/transactions.ts';
import { insertWallet, markClaimed } from '../../src/db/wallets.ts';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { generateClaimCode, normalizeClaimCode } from '../../src/domain/identity.ts';
import { AAD } from '../../src/frost/aad.ts';
import { seal } from '../../src/frost/seal.ts';
import type { Services } from '../../src/services.ts';
import type { ChainPort } from '../../src/solana/port.ts';
import { call, testServices, type CallResult } from '../helpers/services.ts';

export const START = Date.parse('2030-01-15T10:00:00Z');

/** A chain whose every wallet holds 12.5 USDC. */
export const fakeChain = {
  getTokenBalance: async () => 12_500_000n,
  getTokenAmounts: async (accounts: unknown[]) => ({ amounts: accounts.map(() => 12_500_000n), slot: 1n }),
  tokenAccountExists: async () => true,
} as unknown as ChainPort;

export interface OwnerWorld {
  services: Services;
  app: ReturnType<typeof createApp>;
  clock: { ms: number };
  advance(ms: number): void;
}

export function ownerWorld(opts: { env?: Record<string, string>; chain?: ChainPort | null } = {}): OwnerWorld {
  const clock = { ms: START };
  const services = testServices({ now: () => new Date(clock.ms), chain: opts.chain === null ? undefined : (opts.chain ?? fakeChain), env: opts.env });
  return { services, app: createApp(services), clock, advance: (ms) => (clock.ms += ms) };
}

export interface TestWallet {
  walletId: string;
  apiKey: string;
  code: string;
  username: string;
  address: string;
  name: string;
}

/** Inserts an unclaimed wallet as register would (claim code hashed and sealed). */
export async function addWallet(services: Services, o: { name?: string; ownerEmail?: string } = {}): Promise<TestWallet> {
  const walletId = newId('wallet');
  const key = newApiKey('bot');
  const code = generateClaimCode(crypto.getRandomValues(new Uint8Array(32)));
  const name = o.name ?? 'Test Agent';
  const username = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${walletId.slice(-4)}`;
  const address = getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)));
  await services.db
    .transaction(async () =>
      await insertWallet(services.db, {
        wallet_id: walletId,
        username,
        name,
        address,
        api_key_hash: key.hash,
        owner_email: o.ownerEmail ?? null,
        agent_model: null,
        description: null,
        metadata: null,
        claim_code_hash: sha256(new TextEncoder().encode(normalizeClaimCode(code))),
        claim_code_sealed: seal(services.masterKey, new TextEncoder().encode(code), AAD.claimCode(walletId)),
        server_key: seal(services.masterKey, new Uint8Array(32), AAD.walletKey(walletId)),
        public_package: '{}',
        created_at: services.now().getTime(),
      }),
    );
  return { walletId, apiKey: key.key, code, username, address, name };
}

/** Claims `walletId` for `email` directly (as following the claim link does); returns the owner id. */
export async function claimFor(services: Services, walletId: string, email: string): Promise<string> {
  return await services.db
    .transaction(async () => {
      const { owner } = await ensureOwner(services.db, email, newId('owner'), services.now().getTime());
      await markClaimed(services.db, walletId, owner.owner_id, services.now().getTime());
      return owner.owner_id;
    });
}

/** A fresh owner API token for `email` (owner created if missing). */
export async function tokenFor(services: Services, email: string): Promise<string> {
  const key = newApiKey('owner');
  await services.db
    .transaction(async () => {
      const { owner } = await ensureOwner(services.db, email, newId('owner'), services.now().getTime());
      await insertOwnerToken(services.db, { token_id: newId('ownerToken'), owner_id: owner.owner_id, token_hash: key.hash, label: 'test', now: services.now().getTime() });
    });
  return key.key;
}

/** A payment waiting for the owner: an awaiting_approval transaction and its pending approval. */
export async function addPendingPayment(services: Services, walletId: string, o: { amount?: bigint; recipient?: string } = {}): Promise<{ approvalId: string; transactionId: string }> {
  const approvalId = newId('approval');
  const transactionId = newId('transaction');
  const now = services.now().getTime();
  await services.db
    .transaction(async () => {
      await insertTx(services.db, {
        transaction_id: transactionId,
        wallet_id: walletId,
        type: 'payment',
        direction: 'out',
        category: 'wallet',
        status: 'awaiting_approval',
        amount: o.amount ?? 25_000_000n,
        fee: 125_000n,
        counterparty: o.recipient ?? 'bob-1234',
        decision_rule: 'approval_above',
        decision_reason: 'above the approval limit',
        approval_id: approvalId,
        now,
        expires_at: now + 48 * 3_600_000,
      });
      await insertApproval(services.db, {
        approval_id: approvalId,
        wallet_id: walletId,
        subject_type: 'payment',
        subject_id: transactionId,
        amount: o.amount ?? 25_000_000n,
        recipient: o.recipient ?? 'bob-1234',
        reason: '25 USDC is above 20 USDC, the amount the owner approves in person.',
        now,
      });
    });
  return { approvalId, transactionId };
}

/** Calls an owner action with a bearer token. */
export function ownerCall(w: OwnerWorld, token: string, action: string, params: Record<string, unknown> = {}): Promise<CallResult> {
  return call(w.app, '/v1/owner', { action, ...params }, { headers: { authorization: `Bearer ${token}` } });
}

/** Calls a bot action with a wallet key. */
export function botCall(w: OwnerWorld, apiKey: string, action: string, params: Record<string, unknown> = {}): Promise<CallResult> {
  return call(w.app, '/v1/bot', { action, ...params }, { headers: { authorization: `Bearer ${apiKey}` } });
}
