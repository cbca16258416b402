/** Every action group of the service, assembled into the dispatch table. */
import { buildTable, type ActionTable } from './registry.ts';
import { systemActions } from './system.ts';
import { walletActions } from './wallet.ts';

export function actionTable(): ActionTable {
  return buildTable([systemActions, walletActions]);
}
