/**
 * One heavy synchronous unit per turn of the event loop, for the whole process. A money action's
 * transaction, a signed completion, a slice of recorded outcomes and a woken waiter's answer each
 * take the next turn, and the loop polls I/O between two turns: a ping or a read that arrives
 * meanwhile waits for one unit, not for every unit that happened to become due together. Separate
 * queues had each run one unit a turn, so a turn could still hold one unit from every queue.
 *
 * Work in flight (`finish`) goes before new work (`start`): finishing a payment frees its agent
 * and its memory, admitting another adds to both.
 */

const finishing: (() => void)[] = [];
const starting: (() => void)[] = [];
let scheduled = false;

function drain(): void {
  (finishing.shift() ?? starting.shift())?.();
  if (finishing.length > 0 || starting.length > 0) setImmediate(drain);
  else scheduled = false;
}

/** Resolves on a later turn of the event loop than any I/O already due, one waiter a turn. */
export function nextTurn(kind: 'finish' | 'start' = 'finish'): Promise<void> {
  return new Promise<void>((resolve) => {
    (kind === 'finish' ? finishing : starting).push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(drain);
    }
  });
}
