import { expect, test } from 'bun:test';
import { Turns } from '../src/api/turns.ts';
import { nextTurn } from '../src/loop-turns.ts';

/** Keeps the thread busy for `ms`, as a money transaction does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('units from every queue share one line of turns: a ping arriving during the first unit is served before the second, whoever queued them', async () => {
  const order: string[] = [];
  // A real socket: its data is I/O that the event loop polls for between two turns.
  const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data: () => void order.push('ping') } });
  const client = await Bun.connect({ hostname: '127.0.0.1', port: server.port, socket: { data: () => {} } });
  try {
    const app1 = new Turns(100);
    const app2 = new Turns(100);
    const unit = (name: string) => () => {
      order.push(name);
      busy(5);
      // A ping that arrives while the first unit computes.
      if (order.length === 1) client.write('ping');
    };
    // Two apps' admissions and the payments' own continuations, all due together.
    await Promise.all([
      app1.take().then(unit('request a')),
      app2.take().then(unit('request b')),
      nextTurn().then(unit('completion')),
      nextTurn().then(unit('outcomes')),
      app1.take().then(unit('request c')),
    ]);
    // With a line of turns per queue, a turn ran a unit of each, and the ping waited for both.
    expect(order.slice(0, 3)).toEqual(['completion', 'ping', 'outcomes']);
    expect(order.slice(3)).toEqual(['request a', 'request b', 'request c']);
  } finally {
    client.end();
    server.stop(true);
  }
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
