import { expect, test } from 'bun:test';
import { Turns } from '../src/api/turns.ts';
import { nextTurn } from '../src/loop-turns.ts';

/** Keeps the thread busy for `ms`, as a money transaction does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('units from every queue share one line of turns: a timer due during the first runs before the third, whoever queued them', async () => {
  const app1 = new Turns(100);
  const app2 = new Turns(100);
  const order: string[] = [];
  const unit = (name: string) => () => {
    order.push(name);
    busy(5);
    // A ping that arrives while the first unit computes.
    if (order.length === 1) setTimeout(() => order.push('ping'), 0);
  };
  // Two apps' admissions and the payments' own continuations, all due together.
  await Promise.all([
    app1.take().then(unit('request a')),
    app2.take().then(unit('request b')),
    nextTurn().then(unit('completion')),
    nextTurn().then(unit('outcomes')),
    app1.take().then(unit('request c')),
  ]);
  // With a queue of turns each, one turn ran a unit from every queue and the ping waited for all of them.
  expect(order[0]).toBe('completion');
  expect(order.indexOf('ping')).toBeLessThanOrEqual(2);
  expect(order.filter((o) => o !== 'ping')).toHaveLength(5);
});

test('work in flight goes before new work: continuations queued after two admissions still run first', async () => {
  const turns = new Turns(100);
  const order: string[] = [];
  await Promise.all([
    turns.take().then(() => order.push('start 1')),
    turns.take().then(() => order.push('start 2')),
    nextTurn('finish').then(() => order.push('finish 1')),
    nextTurn().then(() => order.push('finish 2')),
  ]);
  expect(order).toEqual(['finish 1', 'finish 2', 'start 1', 'start 2']);
  expect(turns.waiting).toBe(0);
});
