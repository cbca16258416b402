/** Every action group of the service, assembled into the dispatch table. */
import { buildTable, type ActionTable } from './registry.ts';
import { systemActions } from './system.ts';
import { walletActions } from './wallet.ts';
import { paymentActions } from './payments.ts';
import { withdrawalActions } from './withdrawals.ts';
import { approvalActions } from './approvals.ts';
import { claimActions } from './claim.ts';
import { ownerActions } from './owner.ts';
import { merchantActions } from './merchant.ts';
import { statsActions } from './stats.ts';
import { x402Actions } from './x402.ts';
import { earningActions } from './earning.ts';
import { agentExportActions, ownerWalletKeyActions } from './wallet-keys.ts';
import { agentRecoveryActions, ownerRecoveryActions } from './recovery-enroll.ts';
import { agentKeyRefreshActions, ownerKeyRefreshActions } from './recovery-refresh.ts';
import { ownerSweepActions } from './recovery-sweep.ts';
import { botReceiptActions, merchantReceiptActions } from './receipts.ts';

export function actionTable(): ActionTable {
  return buildTable([systemActions, walletActions, paymentActions, withdrawalActions, approvalActions, claimActions, ownerActions, merchantActions, statsActions, x402Actions, earningActions, agentExportActions, ownerWalletKeyActions, ownerRecoveryActions, agentRecoveryActions, agentKeyRefreshActions, ownerKeyRefreshActions, ownerSweepActions, botReceiptActions, merchantReceiptActions]);
}
