/**
 * Contract of the actions that take a wallet's credentials back (issue 21): revoking `.wlt`
 * exports (the agent, or the owner) and rotating the bot API key (the owner). A `.wlt` file holds
 * the agent key share and the API key, readable only with the key `wallet_import_key` releases,
 * which it never does for a revoked export.
 */
import { Type as T } from '@sinclair/typebox';
import { Id, Limit, Offset, Params } from './common.ts';
import { action } from './action.ts';

const ExportId = Id('export', 'the export_id that export printed (the .wlt file names it too)');
const WalletId = Id('wallet', 'one of your wallets (see wallets)');

/** The agent's side (bot API key). */
export const AGENT_EXPORTS = {
  revoke_export: action({
    endpoint: 'bot',
    auth: 'bot',
    destructive: true,
    params: Params({ export_id: ExportId }),
    summary: "Revokes one of this wallet's .wlt exports: wallet_import_key never releases its key again, so the file cannot be imported.",
  }),
};

/** The owner's side (owner token): a wallet's exports and its bot API key. */
export const OWNER_WALLET_KEYS = {
  exports: action({
    endpoint: 'owner',
    auth: 'owner',
    readOnly: true,
    params: Params({ wallet_id: WalletId, limit: T.Optional(Limit), offset: T.Optional(Offset) }),
    summary: "A wallet's .wlt exports, newest first: whether each is active, and how often and when its key was released for an import.",
  }),
  revoke_export: action({
    endpoint: 'owner',
    auth: 'owner',
    destructive: true,
    params: Params({ export_id: ExportId }),
    summary: 'Revokes an export of one of your wallets: the file can no longer be imported.',
  }),
  rotate_api_key: action({
    endpoint: 'owner',
    auth: 'owner',
    destructive: true,
    params: Params({ wallet_id: WalletId }),
    summary:
      "Replaces the wallet's bot API key: the old key is refused (401) at once and the new one is returned once, for you to hand to the agent (agent-wallet set-api-key). Every earlier export is revoked, since those files carry the old key.",
  }),
};
