/** Custody and wallet actions: key generation, registration, wallet metadata, balance, export/import. */
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { getAddressEncoder, getBase58Decoder, type Address } from '@solana/kit';
import { appendAudit } from '../db/events.ts';
import { AppError, invalid } from '../errors.ts';
import { WALLET } from '../contract/wallet.ts';
import { newId } from '../contract/ids.ts';
import { getDkgSession, useDkgSession } from '../db/dkg.ts';
import { getExport, importCallsSince, insertExport, recordImportCall } from '../db/exports.ts';
import { getWallet, insertWallet, setPledgedOwner, setWalletName, usernameTaken, type WalletRow } from '../db/wallets.ts';
import { newApiKey, sameHash } from '../domain/api-keys.ts';
import { checkEmail, checkName, generateClaimCode, generateUsername, normalizeClaimCode } from '../domain/identity.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { registrationProofMessage } from '../domain/registration-proof.ts';
import { AAD } from '../frost/aad.ts';
import { completeDkg, completedKeyPackage, liveDkgSession, startDkg } from '../frost/coordinator-dkg.ts';
import { open, seal } from '../frost/seal.ts';
import { usdcAta } from '../solana/ata.ts';
import type { Services } from '../services.ts';
import type { ActionContext } from '../action-context.ts';
import { implement } from './registry.ts';
import { walletAllowance } from './approvals.ts';
import { feeSchedule } from './system.ts';

const METADATA_MAX_BYTES = 4096;
const IMPORT_WINDOW_MS = 24 * 60 * 60 * 1000;
const IMPORTS_PER_WINDOW = 5;

/** The wallet of the calling bot key (the dispatcher authenticated it). */
export async function callerWallet(ctx: ActionContext): Promise<WalletRow> {
  if (ctx.principal.kind !== 'bot') throw new AppError('UNAUTHORIZED');
  const wallet = await getWallet(ctx.services.db, ctx.principal.walletId);
  if (!wallet) throw new AppError('UNAUTHORIZED');
  return wallet;
}

export function claimUrl(services: Services, walletId: string): string {
  return `${services.publicUrl()}/claim/${walletId}`;
}

/** claim_url and claim_code of an unclaimed wallet, for the agent to hand to its owner. */
export async function claimDetails(services: Services, walletId: string): Promise<Record<string, unknown>> {
  const wallet = await getWallet(services.db, walletId);
  if (!wallet || wallet.status !== 'unclaimed') return {};
  return { claim_url: claimUrl(services, walletId), claim_code: new TextDecoder().decode(open(services.masterKey, wallet.claim_code_sealed, AAD.claimCode(walletId))) };
}

function nameParam(raw: string): string {
  const checked = checkName(raw);
  if (!checked.ok) throw invalid('/name', checked.reason);
  return checked.value;
}

function emailParam(field: string, raw: string): string {
  const checked = checkEmail(raw);
  if (!checked.ok) throw invalid(field, checked.reason);
  return checked.value;
}

function walletView(services: Services, w: WalletRow) {
  return {
    wallet_id: w.wallet_id,
    name: w.name,
    username: w.username,
    status: w.status,
    address: w.address,
    deposit_address: w.address,
    network: services.config.solana.network,
    owner_email: w.owner_email,
    agent_model: w.agent_model,
    description: w.description,
    metadata: w.metadata ? JSON.parse(w.metadata) : null,
    created_at: new Date(Number(w.created_at)).toISOString(),
    claimed_at: w.claimed_at === null ? null : new Date(Number(w.claimed_at)).toISOString(),
  };
}

export const walletActions = implement(WALLET, {
  dkg_init: async ({ services }, p) => await startDkg(services, p.round1),

  dkg_complete: async ({ services }, p) => await completeDkg(services, p.dkg_session_id, p.round2, p.commitments),

  register: async ({ services }, p) => {
    const name = nameParam(p.name);
    const ownerEmail = p.owner_email === undefined ? null : emailParam('/owner_email', p.owner_email);
    const metadata = p.metadata === undefined ? null : JSON.stringify(p.metadata);
    if (metadata !== null && new TextEncoder().encode(metadata).length > METADATA_MAX_BYTES) throw invalid('/metadata', `must be at most ${METADATA_MAX_BYTES} bytes of JSON`);
    const session = await liveDkgSession(services, p.dkg_session_id);
    const keyPackage = completedKeyPackage(services, session);
    const address = session.address as Address;
    const proof = Buffer.from(p.proof_signature, 'hex');
    if (!ed25519.verify(proof, registrationProofMessage(session.dkg_session_id, address), new Uint8Array(getAddressEncoder().encode(address)))) {
      throw invalid('/proof_signature', 'does not verify under the wallet address', 'Aggregate the agent share with the server share from dkg_complete over proof.message.');
    }
    const walletId = newId('wallet');
    const apiKey = newApiKey('bot');
    const claimCode = generateClaimCode(crypto.getRandomValues(new Uint8Array(32)));
    const now = services.now().getTime();
    const created = await services.db
      .transaction(async () => {
        if (!(await useDkgSession(services.db, session.dkg_session_id))) return null;
        let username = generateUsername(name, crypto.getRandomValues(new Uint8Array(4)));
        while ((await usernameTaken(services.db, username))) username = generateUsername(name, crypto.getRandomValues(new Uint8Array(4)));
        await insertWallet(services.db, {
          wallet_id: walletId,
          username,
          name,
          address,
          api_key_hash: apiKey.hash,
          owner_email: ownerEmail,
          agent_model: p.agent_model ?? null,
          description: p.description ?? null,
          metadata,
          claim_code_hash: sha256(new TextEncoder().encode(normalizeClaimCode(claimCode))),
          claim_code_sealed: seal(services.masterKey, new TextEncoder().encode(claimCode), AAD.claimCode(walletId)),
          server_key: seal(services.masterKey, keyPackage, AAD.walletKey(walletId)),
          public_package: session.public_package ?? '{}',
          created_at: now,
        });
        return username;
      });
    if (created === null) throw invalid('/dkg_session_id', 'this DKG session already created a wallet', 'Run a new key generation for a new wallet.');
    const url = claimUrl(services, walletId);
    return {
      wallet_id: walletId,
      api_key: apiKey.key,
      username: created,
      name,
      address,
      deposit_address: address,
      status: 'unclaimed',
      claim_url: url,
      claim_code: claimCode,
      network: services.config.solana.network,
      next_step: `Give your owner the claim URL ${url} and the claim code ${claimCode}; until the wallet is claimed only info, update_owner and update_name work. Store the api_key now: it is shown once.`,
    };
  },

  info: async (ctx) => {
    const w = await callerWallet(ctx);
    return { ...walletView(ctx.services, w), fees: feeSchedule(ctx.services), ...(await claimDetails(ctx.services, w.wallet_id)) };
  },

  update_owner: async (ctx, p) => {
    const w = await callerWallet(ctx);
    const email = emailParam('/owner_email', p.owner_email);
    const changed = await ctx.services.db.transaction(async () => await setPledgedOwner(ctx.services.db, w.wallet_id, email));
    if (!changed) throw new AppError('INVALID_STATUS', 'The wallet is already claimed; its owner cannot be changed by the agent.', { howToFix: 'Ask the current owner.' });
    return { ...walletView(ctx.services, { ...w, owner_email: email }), ...(await claimDetails(ctx.services, w.wallet_id)) };
  },

  update_name: async (ctx, p) => {
    const w = await callerWallet(ctx);
    const name = nameParam(p.name);
    await ctx.services.db.transaction(async () => await setWalletName(ctx.services.db, w.wallet_id, name));
    return walletView(ctx.services, { ...w, name });
  },

  balance: async (ctx) => {
    const w = await callerWallet(ctx);
    const micro = await ctx.services.chain.getTokenBalance(w.address as Address, ctx.services.config.usdcMint as Address);
    // budget: the tightest budget window the owner set (name + amount); remaining_allowance: what is left of it.
    const { budget, remaining_allowance } = await walletAllowance(ctx.services, w.wallet_id);
    return { balance: toUsdcNumber(micro), currency: 'USDC', address: w.address, network: ctx.services.config.solana.network, budget, remaining_allowance };
  },

  reconcile: async (ctx) => {
    const w = await callerWallet(ctx);
    const mint = ctx.services.config.usdcMint as Address;
    const [micro, exists] = await Promise.all([ctx.services.chain.getTokenBalance(w.address as Address, mint), ctx.services.chain.tokenAccountExists(w.address as Address, mint)]);
    return { balance: toUsdcNumber(micro), token_account: await usdcAta(w.address as Address, mint), token_account_exists: exists, checked_at: ctx.services.now().toISOString() };
  },

  get_deposit_address: async (ctx) => {
    const w = await callerWallet(ctx);
    const mint = ctx.services.config.usdcMint;
    return {
      address: w.address,
      token_account: await usdcAta(w.address as Address, mint as Address),
      usdc_mint: mint,
      network: ctx.services.config.solana.network,
      solana_pay_url: `solana:${w.address}?spl-token=${mint}`,
    };
  },

  wallet_export: async (ctx) => {
    const w = await callerWallet(ctx);
    const exportId = newId('export');
    const fileKey = crypto.getRandomValues(new Uint8Array(32));
    const importToken = `imp_${getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)))}`;
    const now = ctx.services.now().getTime();
    await ctx.services.db
      .transaction(async () => {
        await insertExport(ctx.services.db, {
          export_id: exportId,
          wallet_id: w.wallet_id,
          file_key: seal(ctx.services.masterKey, fileKey, AAD.exportKey(exportId)),
          import_token_hash: sha256(new TextEncoder().encode(importToken)),
          created_at: now,
        });
        // The owner sees in the audit (and the decision log) that the agent took its key share out.
        await appendAudit(ctx.services.db, { walletId: w.wallet_id, actor: 'agent', kind: 'export.created', data: { export_id: exportId }, now });
      });
    return { export_id: exportId, import_token: importToken, file_key: Buffer.from(fileKey).toString('base64'), wallet_id: w.wallet_id, address: w.address };
  },

  wallet_import_key: async ({ services }, p) => {
    const notFound = new AppError('NOT_FOUND', 'Export not found.', { howToFix: 'Check the .wlt file: export_id and import_token must be those the export wrote.' });
    const row = await getExport(services.db, p.export_id);
    if (!row || !sameHash(row.import_token_hash, sha256(new TextEncoder().encode(p.import_token)))) throw notFound;
    if (row.revoked_at !== null) {
      // Nothing is released for a revoked export; the reasons are spelled out because a rotation revokes
      // exports the agent never touched, and the file would otherwise carry a key that is refused.
      const revokedAt = new Date(Number(row.revoked_at)).toISOString();
      throw new AppError('INVALID_STATUS', `This export was revoked at ${revokedAt}: by the agent, by the owner, or when the owner rotated the wallet's API key or the agent refreshed the wallet key (the file holds the old key, which is refused now). Its key is never released again.`, {
        howToFix: 'Make a new export from a profile that works (after a key rotation, first store the new API key from the owner with "agent-wallet set-api-key").',
        details: { revoked_at: revokedAt },
      });
    }
    const now = services.now().getTime();
    const fileKey = await services.db
      .transaction(async () => {
        if ((await importCallsSince(services.db, row.export_id, now - IMPORT_WINDOW_MS)) >= IMPORTS_PER_WINDOW) return null;
        await recordImportCall(services.db, row.export_id, now);
        return open(services.masterKey, row.file_key, AAD.exportKey(row.export_id));
      });
    if (!fileKey) {
      throw new AppError('RATE_LIMITED', `The key of this export was already released ${IMPORTS_PER_WINDOW} times in the last 24 hours.`, {
        howToFix: 'Wait 24 hours, or make a new export from a working profile.',
        headers: { 'Retry-After': String(IMPORT_WINDOW_MS / 1000) },
      });
    }
    return { file_key: Buffer.from(fileKey).toString('base64'), wallet_id: row.wallet_id };
  },
});
