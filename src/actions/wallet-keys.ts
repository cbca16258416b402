/**
 * Taking a wallet's credentials back (issue 21). A `.wlt` export holds the agent key share and
 * the bot API key under a key only `wallet_import_key` releases, and it never releases the key of
 * a revoked export: revoking is what makes a leaked file useless. The agent revokes its own
 * exports; the owner lists and revokes them and rotates the bot API key. A rotation revokes every
 * export made before it, in the same transaction: those files carry the key that just died, and a
 * rotation usually answers a leak. The dashboard (src/web) calls the same functions.
 */
import { AppError } from '../errors.ts';
import { AGENT_EXPORTS, OWNER_WALLET_KEYS } from '../contract/wallet-keys.ts';
import { setWalletKeyHash } from '../db/credentials.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import { getExport, revokeAllExports, revokeExport, walletExports } from '../db/exports.ts';
import { ownerWallet } from '../db/owners.ts';
import { newApiKey } from '../domain/api-keys.ts';
import type { Services } from '../services.ts';
import { callerOwner, requireOwnerWallet } from './owner.ts';
import { ownerActor, type Via } from '../domain/owner-actor.ts';
import { implement } from './registry.ts';
import { callerWallet } from './wallet.ts';

const iso = (ms: bigint | number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

const exportNotFound = (whose: string) =>
  new AppError('NOT_FOUND', `Export not found among ${whose}.`, { howToFix: 'Use the export_id that export printed (the .wlt file names it too), or one from the exports action of the owner API.' });

/**
 * Revokes export `exportId` when `mayRevoke(walletId)` says its wallet is the caller's; writes the
 * audit entry and an `export.revoked` event with it. NOT_FOUND for another wallet's export (never
 * a hint it exists), INVALID_STATUS when it is already revoked.
 */
async function revokeOne(services: Services, exportId: string, mayRevoke: (walletId: string) => Promise<boolean> | boolean, actor: string, whose: string) {
  const { db } = services;
  const now = services.now().getTime();
  const outcome = await db
    .transaction(async () => {
      const row = await getExport(db, exportId);
      if (!row || !(await mayRevoke(row.wallet_id))) return 'not_found' as const;
      if (!(await revokeExport(db, row.wallet_id, exportId, now))) return 'already' as const;
      await appendAudit(db, { walletId: row.wallet_id, actor, kind: 'export.revoked', data: { export_id: exportId }, now });
      await appendEvent(db, { walletId: row.wallet_id, type: 'export.revoked', data: { export_id: exportId, by: actor }, now });
      return row.wallet_id;
    });
  if (outcome === 'not_found') throw exportNotFound(whose);
  if (outcome === 'already') throw new AppError('INVALID_STATUS', 'The export is already revoked.', { howToFix: 'Nothing to do: its file cannot be imported.' });
  return { export_id: exportId, wallet_id: outcome, revoked_at: iso(now), next_step: 'The file of this export can no longer be imported; a copy already imported elsewhere keeps working until the API key is rotated.' };
}

/** The agent revokes one of its wallet's exports. */
export async function revokeAgentExport(services: Services, walletId: string, exportId: string) {
  return await revokeOne(services, exportId, (w) => w === walletId, 'agent', "this wallet's exports");
}

/** The owner revokes an export of one of their wallets. */
export async function revokeOwnerExport(services: Services, ownerId: string, exportId: string, via: Via) {
  return await revokeOne(services, exportId, async (w) => (await ownerWallet(services.db, ownerId, w)) !== null, ownerActor(ownerId, via), 'the exports of your wallets');
}

/** The exports of one of the owner's wallets, newest first. */
export async function listWalletExports(services: Services, ownerId: string, walletId: string, limit = 20, offset = 0) {
  await requireOwnerWallet(services, ownerId, walletId);
  const { rows, total } = await walletExports(services.db, walletId, limit, offset);
  return {
    items: rows.map((e) => ({
      export_id: e.export_id,
      created_at: iso(e.created_at),
      active: e.revoked_at === null,
      revoked_at: iso(e.revoked_at),
      imports: Number(e.imports),
      last_import_at: iso(e.last_import_at),
    })),
    total,
    limit,
    offset,
  };
}

/**
 * Gives one of the owner's wallets a new bot API key: the old key is refused from this commit on
 * (authentication reads the stored hash on every call), and every live export is revoked with it.
 * The new key is returned once; only its hash is kept.
 */
export async function rotateBotKey(services: Services, ownerId: string, walletId: string, via: Via) {
  const { db } = services;
  const key = newApiKey('bot');
  const now = services.now().getTime();
  const actor = ownerActor(ownerId, via);
  // A claimed wallet never changes owner, so the check need not share the write transaction.
  await requireOwnerWallet(services, ownerId, walletId);
  const revoked = await db
    .transaction(async () => {
      await setWalletKeyHash(db, walletId, key.hash);
      const ids = await revokeAllExports(db, walletId, now);
      await appendAudit(db, { walletId, actor, kind: 'api_key.rotated', data: { revoked_exports: ids }, now });
      await appendEvent(db, { walletId, type: 'api_key.rotated', data: { revoked_exports: ids }, now });
      return ids;
    });
  return {
    wallet_id: walletId,
    api_key: key.key,
    rotated_at: iso(now),
    revoked_exports: revoked,
    next_step:
      'Store the api_key now: it is shown once. Hand it to the agent, which stores it in its profile with "agent-wallet set-api-key" (the old key is refused from now on). Exports made before now are revoked: make new ones with the new key.',
  };
}

export const agentExportActions = implement(AGENT_EXPORTS, {
  revoke_export: async (ctx, p) => await revokeAgentExport(ctx.services, (await callerWallet(ctx)).wallet_id, p.export_id),
});

export const ownerWalletKeyActions = implement(OWNER_WALLET_KEYS, {
  exports: async (ctx, p) => await listWalletExports(ctx.services, callerOwner(ctx).ownerId, p.wallet_id, p.limit, p.offset),
  revoke_export: async (ctx, p) => await revokeOwnerExport(ctx.services, callerOwner(ctx).ownerId, p.export_id, 'api'),
  rotate_api_key: async (ctx, p) => await rotateBotKey(ctx.services, callerOwner(ctx).ownerId, p.wallet_id, 'api'),
});
