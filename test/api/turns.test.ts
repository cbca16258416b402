import { expect, test } from 'bun:test';
import { createApp } from '../../src/api/app.ts';
import { Turns } from '../../src/api/turns.ts';
import { AppError } from '../../src/errors.ts';
import { call, testServices } from '../helpers/services.ts';

/** Keeps the thread busy for `ms`, as FROST and a money transaction do. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('heavy calls take one turn of the event loop each: work that became due meanwhile runs between two of them, not after all', async () => {
  const turns = new Turns(100);
  const order: string[] = [];
  const heavy = Array.from({ length: 6 }, (_, i) =>
    turns.take().then(() => {
      order.push(`heavy ${i}`);
      busy(5);
      // A ping that arrives while this one computes.
      if (i === 0) setTimeout(() => order.push('ping'), 0);
    }),
  );
  await Promise.all(heavy);
  // Without turns the ping would wait for all six.
  expect(order.indexOf('ping')).toBeLessThan(3);
  expect(order.filter((o) => o.startsWith('heavy'))).toEqual(['heavy 0', 'heavy 1', 'heavy 2', 'heavy 3', 'heavy 4', 'heavy 5']);
});

test('the queue is bounded: past it a call is refused at once with SERVICE_UNAVAILABLE and Retry-After, and counted', async () => {
  const turns = new Turns(2);
  const admitted = [turns.take(), turns.take()];
  let refused: unknown;
  try {
    await turns.take();
  } catch (err) {
    refused = err;
  }
  expect(refused).toBeInstanceOf(AppError);
  expect((refused as AppError).errorCode).toBe('SERVICE_UNAVAILABLE');
  expect((refused as AppError).headers).toEqual({ 'Retry-After': '1' });
  expect(turns.refused).toBe(1);
  await Promise.all(admitted);
  expect(turns.waiting).toBe(0);
  await turns.take();
});

test('through the API: a burst of state-changing calls beyond the queue gets 503 + Retry-After and changes nothing, while every read of the same moment answers', async () => {
  const app = createApp(testServices({ env: { AGENT_WALLET_SERVER_METRICS_TOKEN: 'm3trics' } }), { writeQueue: 3 });
  const writes = Array.from({ length: 10 }, () => call(app, '/v1/bot', { action: 'register', name: 'Burst' }));
  const reads = Array.from({ length: 10 }, () => call(app, '/v1/bot', { action: 'ping' }));
  const [w, r] = await Promise.all([Promise.all(writes), Promise.all(reads)]);
  expect(r.every((x) => x.status === 200)).toBe(true);
  const busyAnswers = w.filter((x) => x.status === 503);
  expect(busyAnswers.length).toBe(7);
  expect(busyAnswers.every((x) => x.headers.get('retry-after') === '1' && x.body.error.code === 'SERVICE_UNAVAILABLE')).toBe(true);
  // The admitted ones went on to validation (nothing registered: the body lacks the DKG package).
  expect(w.filter((x) => x.status === 400)).toHaveLength(3);
  const metrics = await (await app.handle(new Request('http://localhost/metrics', { headers: { authorization: 'Bearer m3trics' } }))).text();
  expect(metrics).toContain('agent_wallet_write_queue_refused_total 7');
});
