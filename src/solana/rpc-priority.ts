/**
 * Whose RPC call this is. Calls made while answering an agent are served first; background jobs
 * (deposit watch, confirmations, paylink scans) run inside `inBackground` and wait behind them
 * when the request budget is short. Carried by AsyncLocalStorage so no port method needs a flag.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export type RpcPriority = 'agent' | 'background';

const priority = new AsyncLocalStorage<RpcPriority>();

/** Runs `fn` (and everything it awaits) with background priority. */
export function inBackground<T>(fn: () => T): T {
  return priority.run('background', fn);
}

export function currentPriority(): RpcPriority {
  return priority.getStore() ?? 'agent';
}
