/**
 * The action table: each contract entry paired with its handler and a compiled validator.
 * Adding an action touches one contract entry and one handler, nothing else.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { ContractAction, Endpoint } from '../contract/action.ts';
import type { ActionContext } from '../action-context.ts';

export type Handler<P extends TSchema> = (ctx: ActionContext, params: Static<P>) => unknown | Promise<unknown>;

export interface RegisteredAction {
  name: string;
  contract: ContractAction;
  check: TypeCheck<TSchema>;
  handler: Handler<TSchema>;
}

/** Pairs every entry of a contract group with its handler; a missing handler is a type error. */
export function implement<C extends Record<string, ContractAction>>(
  contract: C,
  handlers: { [K in keyof C]: Handler<C[K]['params']> },
): RegisteredAction[] {
  return Object.entries(contract).map(([name, def]) => ({
    name,
    contract: def,
    check: TypeCompiler.Compile(def.params),
    handler: handlers[name as keyof C] as Handler<TSchema>,
  }));
}

/** Action tables per endpoint; a duplicate name on one endpoint is a programming error. */
export type ActionTable = Record<Endpoint, Map<string, RegisteredAction>>;

export function buildTable(groups: RegisteredAction[][]): ActionTable {
  const table: ActionTable = { bot: new Map(), merchant: new Map(), public: new Map(), owner: new Map() };
  for (const group of groups) {
    for (const entry of group) {
      const map = table[entry.contract.endpoint];
      if (map.has(entry.name)) throw new Error(`action ${entry.contract.endpoint}/${entry.name} registered twice`);
      map.set(entry.name, entry);
    }
  }
  return table;
}
