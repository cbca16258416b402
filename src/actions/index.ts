/** Every action group of the service, assembled into the dispatch table. */
import { buildTable, type ActionTable } from './registry.ts';
import { systemActions } from './system.ts';
import { walletActions } from './wallet.ts';
import { paymentActions } from './payments.ts';
import { approvalActions } from './approvals.ts';
import { claimActions } from './claim.ts';
import { ownerActions } from './owner.ts';

export function actionTable(): ActionTable {
  return buildTable([systemActions, walletActions, paymentActions, approvalActions, claimActions, ownerActions]);
}
